//! Pure, synchronous, deterministic admission and placement decisions.
//!
//! Nothing here talks to Kubernetes: callers hand in a snapshot and get decisions with reasons.
//!
//! The admission engine's public surface:
//! - [`model`]: the input snapshot ([`model::Snapshot`]) and configuration ([`model::EngineConfig`]);
//! - [`decision`]: what comes out (admissions, preemptions, evictions, pending reasons, the event log);
//! - [`topology_seam`]: where topology-aware placement plugs into flavor assignment.

pub mod decision;
pub mod error;
pub mod features;
pub mod model;
pub mod node_match;
pub mod quantity;
pub mod topology_seam;

pub use decision::{
    AdmissionDecision, CycleOutcome, Event, EvictionDecision, EvictionReason, EvictionRecord,
    PendingDecision, PendingReason, PreemptionDecision, PreemptionReason, RunOutcome, WorkloadKey,
    WorkloadState, WorkloadStatus,
};
pub use error::ModelError;
