//! Pure, synchronous, deterministic admission and placement decisions.
//!
//! Nothing here talks to Kubernetes: callers hand in objects and get decisions with reasons.
//!
//! The admission engine's public surface:
//! - [`model`]: the input objects ([`model::Snapshot`]) and configuration ([`model::EngineConfig`]);
//! - [`Engine`]: built from a snapshot, or [`Engine::empty`] and fed one object at a time
//!   (`upsert_*`, `remove_*`, [`Engine::evict_workload`]) for as long as the controller runs;
//!   [`validate`] holds what the API rejects, per kind; [`Engine::cycle`] runs one admission cycle,
//!   [`Engine::run_until_stable`] runs cycles until nothing changes, [`Engine::finish`] releases a
//!   workload's quota, [`Engine::states`] reports every workload;
//! - [`decision`]: what comes out (admissions, preemptions, evictions, pending reasons, the event log);
//! - [`topology_placer`]: where topology-aware placement plugs into flavor assignment.
//!
//! ```
//! use std::collections::BTreeMap;
//!
//! use kuota::engine::model::*;
//! use kuota::engine::quantity::Quantity;
//! use kuota::engine::{Engine, WorkloadStatus};
//!
//! let cpu = |n| Quantity::from_units(n);
//! let snapshot = Snapshot {
//!     resource_flavors: vec![ResourceFlavor { name: "default".into(), ..Default::default() }],
//!     cluster_queues: vec![ClusterQueue {
//!         name: "team".into(),
//!         resource_groups: vec![ResourceGroup {
//!             covered_resources: vec!["cpu".into()],
//!             flavors: vec![FlavorQuotas {
//!                 name: "default".into(),
//!                 resources: vec![ResourceQuota::nominal("cpu", cpu(4))],
//!             }],
//!         }],
//!         namespace_selector: Some(Default::default()),
//!         ..Default::default()
//!     }],
//!     local_queues: vec![LocalQueue {
//!         namespace: "ns".into(),
//!         name: "q".into(),
//!         cluster_queue: "team".into(),
//!         stop_policy: StopPolicy::None,
//!     }],
//!     namespaces: vec![Namespace { name: "ns".into(), labels: BTreeMap::new() }],
//!     workloads: (0..3)
//!         .map(|i| Workload {
//!             namespace: "ns".into(),
//!             name: format!("job-{i}"),
//!             uid: format!("uid-{i}"),
//!             queue_name: "q".into(),
//!             creation: i,
//!             active: true,
//!             pod_sets: vec![PodSet {
//!                 name: "main".into(),
//!                 count: 1,
//!                 requests: [("cpu".to_string(), cpu(2))].into(),
//!                 ..Default::default()
//!             }],
//!             ..Default::default()
//!         })
//!         .collect(),
//!     ..Default::default()
//! };
//! let run = Engine::new(&snapshot, EngineConfig::default())?.run_until_stable();
//! assert!(matches!(run.workloads[0].status, WorkloadStatus::Admitted(_)));
//! assert!(matches!(run.workloads[1].status, WorkloadStatus::Admitted(_)));
//! let WorkloadStatus::Pending { reason, message } = &run.workloads[2].status else { panic!() };
//! assert_eq!(reason.as_str(), "WaitingForQuota");
//! assert!(message.ends_with("insufficient unused quota for cpu in flavor default, 2 more needed"));
//! # Ok::<(), kuota::engine::ModelError>(())
//! ```
//!
//! Where the admission engine deliberately differs from Kueue (each closes a failure mode of
//! preemption loops or starvation users report with Kueue and its peers, and each is covered by `tests/engine_convergence.rs` or the
//! property tests):
//! - a cycle admits every workload that fits, in queue order, instead of one head per ClusterQueue,
//!   and identical inadmissible workloads are evaluated once per cycle;
//! - a workload that needs preemption but finds no victims, in a ClusterQueue that cannot always
//!   reclaim, holds the quota it is owed against other ClusterQueues for the rest of
//!   the cycle, all its rounds, but not against its own queue's later workloads (Kueue evaluates
//!   those in later cycles, when the hold is gone); a hold never makes another workload preempt
//!   more (one that does not fit beside it waits, evicting nothing), and holds end with the cycle;
//! - a preemptor is admitted in the same cycle its victims are evicted (their quota is released at
//!   once), so nothing else can slip into the freed quota in between;
//! - after minimising, every fair-sharing victim must still have its reason (within nominal, or the
//!   share rule) with exactly the final victims gone; otherwise nothing is preempted;
//! - a borrowing preemptor never takes a victim whose removal leaves the victim's side of the tree
//!   under its own quota, when that side may reclaim and free capacity cannot give it back all it
//!   is owed (it would reclaim straight back); a side that free capacity makes whole is fair game,
//!   as in the reference's LessThanInitialShare case;
//! - classic preemption takes a victim in another queue only while that queue's side borrows
//!   without counting the workloads admitted in the current cycle (which are never victims), so
//!   older workloads do not pay for a borrow they did not make and then reclaim straight back;
//! - a preemptor with an infinite share (weight 0 while borrowing) never wins by fair sharing;
//! - a workload admitted by fair-sharing preemption cannot be taken back by fair sharing from the
//!   queues it took quota from while it runs;
//! - a workload preempts victims of equal or higher priority at most once (its preemption credit);
//!   afterwards only strictly lower priorities, which bounds every chain of preemptions.
//!
//! Internals: [`resources`] interns names into dense flavor-resource vectors, [`quota`] is the cohort
//! tree, `flavor` assigns flavors, `holds` keeps quota for waiting workloads, `preemption` chooses victims
//! (classic and fair-sharing preemption beside their shared parts), `fair_sharing` computes shares
//! and the admission tournament, `cycle` runs the rounds, `incremental` applies changes to a
//! running engine and `structure` keeps its quota objects by name.

pub mod admission_checks;
mod compile;
mod cycle;
mod cycle_prelude;
pub mod decision;
pub mod delayed_topology;
pub mod error;
mod fair_sharing;
pub mod features;
mod flavor;
mod holds;
mod incremental;
pub mod model;
pub mod node_match;
pub mod pending_order;
mod preemption;
pub mod quantity;
pub mod queue_report;
pub mod quota;
pub mod resource_counting;
pub mod resources;
mod scheduler;
mod slot_index;
mod state;
mod structure;
pub mod topology;
pub mod topology_placer;
pub mod validate;

pub use decision::{
    AdmissionDecision, CarriedState, CycleOutcome, Event, EvictionDecision, EvictionReason,
    EvictionRecord, PendingDecision, PendingReason, PreemptionDecision, PreemptionReason,
    RunOutcome, WorkloadKey, WorkloadState, WorkloadStatus,
};
pub use error::ModelError;
pub use scheduler::{Engine, run_until_stable};
pub use structure::Structure;
