//! The engine's compiled, indexed state: ClusterQueues with interned resource groups, workloads with
//! their queue position and quota, and per-ClusterQueue queues.

use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::decision::{EvictionRecord, PendingReason, WorkloadKey};
use super::model::{
    Admission, EngineConfig, FlavorFungibility, PreemptionPolicy, QueueCheck, QueueingStrategy,
    ResourceFlavor, StopPolicy, Workload,
};
use super::quantity::Quantity;
use super::quota::NodeId;
use super::resources::{FlavorId, FlavorResourceAmounts, Interner, ResourceId};
use super::topology_placer::TopologyPlacer;

/// A resource group with interned names.
#[derive(Clone, Debug)]
pub struct GroupInfo {
    pub flavors: Vec<FlavorId>,
}

/// A ClusterQueue as the engine uses it.
#[derive(Clone, Debug)]
pub struct CqInfo {
    pub name: String,
    pub node: NodeId,
    pub has_cohort: bool,
    pub groups: Vec<GroupInfo>,
    pub group_of: HashMap<ResourceId, usize>,
    pub covers_pods: bool,
    pub namespace_selector: Option<LabelSelector>,
    pub strategy: QueueingStrategy,
    pub fungibility: FlavorFungibility,
    pub preemption: PreemptionPolicy,
    pub stop_policy: StopPolicy,
    /// Why the queue admits nothing (stop policy, cohort cycle, missing flavor).
    pub inactive: Option<Arc<str>>,
    /// What makes the queue inactive, in the order found; empty while it admits.
    pub inactive_causes: Vec<InactiveCause>,
    /// Every flavor of the queue has a `topologyName`.
    pub tas_only: bool,
    /// `spec.fairSharing.weight`; `None` means 1.
    pub weight: Option<Quantity>,
    /// `spec.admissionChecksStrategy`: what a reservation here must pass to be admitted.
    pub checks: Vec<QueueCheck>,
}

/// One thing that makes a ClusterQueue inactive, with what Kueue's `Active` condition names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InactiveCause {
    /// The ClusterQueue is being deleted.
    Terminating,
    /// `spec.stopPolicy` is Hold or HoldAndDrain.
    Stopped,
    /// This flavor of `spec.resourceGroups` does not exist.
    FlavorNotFound(String),
    /// This Cohort, the queue's own, has a cycle in its parent chain.
    CohortCycle(String),
    /// This AdmissionCheck of `spec.admissionChecksStrategy` does not exist.
    AdmissionCheckNotFound(String),
    /// This AdmissionCheck exists but is not active.
    AdmissionCheckInactive(String),
    /// This Topology, named by one of the queue's flavors, does not exist.
    TopologyNotFound(String),
}

/// Kueue's heap order within one ClusterQueue: higher priority, earlier creation, then uid.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct QueueKey {
    pub priority: Reverse<i32>,
    pub creation: i64,
    pub uid: Arc<str>,
    pub index: u32,
}

/// Quota a workload holds.
#[derive(Clone, Debug)]
pub struct Holding {
    /// `None` when the admission names a ClusterQueue that does not exist.
    pub cq: Option<u32>,
    pub usage: FlavorResourceAmounts,
    pub admission: Admission,
    pub reserved_at: i64,
    /// Cycle of the admission; 0 for workloads admitted in the input snapshot.
    pub cycle: u64,
    /// ClusterQueues this workload took quota from by fair-sharing preemption when it was admitted.
    /// Their workloads may not take it back by fair sharing while it runs, so two queues never
    /// evict each other in turn.
    pub fair_share_shield: Vec<u32>,
}

/// A workload with its engine bookkeeping. There is one per workload, so what most workloads do
/// not have (quota held, a reason they cannot queue, an eviction) is boxed, and what the model
/// holds already is not kept twice: its key is built from the model when asked for, and its UID
/// moves out of the model into `uid`, which the queue keys share.
#[derive(Clone, Debug)]
pub struct WorkloadSlot {
    /// The workload as given, without what moved into the slot: its `uid` and its `admission`
    /// (into `holding`); its reservation time and fair-sharing shield live in `holding` too.
    pub model: Workload,
    pub uid: Arc<str>,
    /// Requests of one pod, per pod set, with interned names, zero amounts dropped.
    pub per_pod: Vec<Vec<(ResourceId, Quantity)>>,
    /// The ClusterQueue its LocalQueue points at, when both exist.
    pub cq: Option<u32>,
    /// Why it can never be queued as the snapshot stands.
    pub blocked: Option<Box<(PendingReason, Arc<str>)>>,
    pub holding: Option<Box<Holding>>,
    pub pending: (PendingReason, Arc<str>),
    pub last_eviction: Option<Box<EvictionRecord>>,
    pub finished: bool,
    /// Removed from the engine: the slot stays (indexes are stable) until the next rebuild.
    pub removed: bool,
    /// Workloads with the same class are interchangeable for admission.
    pub eq_class: u32,
    /// Stop policy of its LocalQueue (HoldAndDrain evicts it while admitted).
    pub local_queue_stop: StopPolicy,
    /// Set once the workload has preempted a victim of equal or higher priority (see
    /// `preemption::admitted_users`).
    pub preemption_credit_spent: bool,
}

impl WorkloadSlot {
    pub fn key(&self) -> WorkloadKey {
        WorkloadKey::new(&self.model.namespace, &self.model.name)
    }

    pub fn queue_key(&self, index: u32) -> QueueKey {
        QueueKey {
            priority: Reverse(self.model.priority),
            creation: self.model.creation,
            uid: self.uid.clone(),
            index,
        }
    }
}

/// What the engine remembers of a workload beyond its object: its pending reason and last eviction.
pub type Remembered = ((PendingReason, Arc<str>), Option<Box<EvictionRecord>>);

/// Read-only view of the engine used while deciding.
#[derive(Clone, Copy)]
pub struct World<'a> {
    pub names: &'a Interner,
    pub flavors: &'a [Option<ResourceFlavor>],
    pub cqs: &'a [CqInfo],
    pub queues: &'a [QueueState],
    pub workloads: &'a [WorkloadSlot],
    pub config: &'a EngineConfig,
    pub placer: &'a dyn TopologyPlacer,
    pub cohort_weights: &'a [Option<Quantity>],
    /// ClusterQueues of each tree, indexed by the root's node index.
    pub tree_cqs_by_root: &'a [Vec<u32>],
    /// The cycle being run: workloads admitted in it are not preemption candidates.
    pub cycle: u64,
}

impl World<'_> {
    pub fn fair_sharing(&self) -> bool {
        self.config.fair_sharing.enabled
    }

    /// The ClusterQueues in the tree rooted at `root`.
    pub fn tree_cqs(&self, root: NodeId) -> &[u32] {
        self.tree_cqs_by_root
            .get(root.index())
            .map_or(&[], Vec::as_slice)
    }

    pub fn flavor(&self, id: FlavorId) -> Option<&ResourceFlavor> {
        self.flavors.get(id.0 as usize).and_then(Option::as_ref)
    }
}

/// Per-ClusterQueue queues.
#[derive(Clone, Debug, Default)]
pub struct QueueState {
    pub pending: BTreeSet<QueueKey>,
    pub admitted: BTreeSet<u32>,
}
