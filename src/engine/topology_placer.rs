//! The one place topology-aware placement plugs into admission.
//!
//! Flavor assignment asks a [`TopologyPlacer`] about every (pod set, flavor) pair that involves
//! topology: a pod set with a `topologyRequest`, or a flavor with a `topologyName`. The default,
//! [`NoTopologyConstraints`], says every such pair fits without an assignment. The TAS engine will
//! implement the trait over its own capacity model and keep it in step through `reserve`/`release`.

use super::decision::WorkloadKey;
use super::model::{Admission, PodSet, ResourceFlavor, Workload};
use super::topology::quality::PlacementQuality;
use crate::api::topology_assignment::TopologyAssignment;

/// One placement question: may `count` pods of `pod_set` go to `flavor`?
#[derive(Clone, Copy, Debug)]
pub struct TopologyQuery<'a> {
    pub workload: &'a Workload,
    pub pod_set_index: usize,
    pub pod_set: &'a PodSet,
    /// Pods to place (lower than the spec count under partial admission).
    pub count: i32,
    pub flavor: &'a ResourceFlavor,
    pub cluster_queue: &'a str,
    /// Every flavor of the ClusterQueue has a `topologyName` (implied TAS: every pod set is topology-aware).
    pub tas_only_cluster_queue: bool,
    /// Admitted workloads whose capacity should count as free: victims the preemption simulation
    /// is considering. Empty outside preemption.
    pub released: &'a [WorkloadKey],
}

/// Where the placer put one pod set: the assignment to record and how compact it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    pub assignment: TopologyAssignment,
    pub quality: PlacementQuality,
}

/// The placer's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TopologyVerdict {
    /// Fits now; the placement to record, if any.
    Fits(Option<Placement>),
    /// Does not fit with current usage, but would on an empty cluster: preemption may help.
    NotNow { message: String },
    /// Would not fit even on an empty cluster (`TopologyPlacementFailed`).
    Never { message: String },
}

/// Topology-aware placement as admission sees it.
pub trait TopologyPlacer {
    /// Answers one placement question against the placer's current usage.
    fn place(&self, query: &TopologyQuery<'_>) -> TopologyVerdict;

    /// Called once a workload is admitted, so later questions see its pods.
    fn reserve(&mut self, _workload: &WorkloadKey, _admission: &Admission) {}

    /// Called once a workload's quota is released (eviction, finish, removal).
    fn release(&mut self, _workload: &WorkloadKey, _admission: &Admission) {}

    /// Called when a workload that already holds an admission is added to a running engine (one
    /// admitted before a restart, or by another writer), so later questions see its pods.
    /// A workload whose admission the placer cannot hold (it names nodes or levels the topology
    /// does not have) is refused with the reason.
    fn adopt(&mut self, _workload: &Workload) -> Result<(), String> {
        Ok(())
    }

    /// The placer itself, for callers that keep its inputs (nodes, pods, topologies) up to date.
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}

/// No topology constraints: every placement question fits, with no assignment.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTopologyConstraints;

impl TopologyPlacer for NoTopologyConstraints {
    fn place(&self, _query: &TopologyQuery<'_>) -> TopologyVerdict {
        TopologyVerdict::Fits(None)
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
