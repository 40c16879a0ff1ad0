//! Pure, synchronous, deterministic admission and placement decisions.
//!
//! Nothing here talks to Kubernetes: callers hand in a snapshot and get decisions with reasons.
//!
//! The admission engine's public surface:
//! - [`model`]: the input snapshot ([`model::Snapshot`]) and configuration ([`model::EngineConfig`]);
//! - [`Engine`]: built from a snapshot; [`Engine::cycle`] runs one admission cycle,
//!   [`Engine::run_until_stable`] runs cycles until nothing changes, [`Engine::finish`] releases a
//!   workload's quota, [`Engine::states`] reports every workload;
//! - [`decision`]: what comes out (admissions, preemptions, evictions, pending reasons, the event log);
//! - [`topology_seam`]: where topology-aware placement plugs into flavor assignment.
//!
//! Internals: [`resources`] interns names into dense flavor-resource vectors, [`quota`] is the cohort
//! tree, `flavor` assigns flavors, `preemption` and `fair_preemption` choose victims,
//! `fair_sharing` computes shares and the admission tournament, `cycle` runs the rounds.

mod compile;
mod cycle;
pub mod decision;
pub mod error;
mod fair_preemption;
mod fair_sharing;
pub mod features;
mod flavor;
pub mod model;
pub mod node_match;
mod preemption;
pub mod quantity;
pub mod quota;
pub mod resources;
mod scheduler;
mod selector;
mod state;
pub mod topology;
pub mod topology_seam;
mod validate;

pub use decision::{
    AdmissionDecision, CycleOutcome, Event, EvictionDecision, EvictionReason, EvictionRecord,
    PendingDecision, PendingReason, PreemptionDecision, PreemptionReason, RunOutcome, WorkloadKey,
    WorkloadState, WorkloadStatus,
};
pub use error::ModelError;
pub use scheduler::{Engine, run_until_stable};
