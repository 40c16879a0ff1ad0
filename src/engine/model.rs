//! The admission engine's input: a plain snapshot of the Kueue objects that matter for quota.
//!
//! These types carry no Kubernetes client and no serialisation; names are `String`s, amounts are
//! exact [`Quantity`] values and label maps are `BTreeMap`s. Core Kubernetes sub-objects that the
//! engine matches against (taints, tolerations, required node affinity, label selectors) keep their
//! `k8s-openapi` types so they mean exactly what they mean on a pod. Callers (the controllers,
//! `kuota simulate`) translate Kueue manifests into a [`Snapshot`]; the engine interns names into
//! dense indexes internally.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{NodeSelector, Taint, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::features::FeatureGates;
use super::quantity::Quantity;
use super::resource_counting::ResourceCounting;
use crate::api::topology_assignment::TopologyAssignment;
pub use crate::api::workload_status::DelayedTopologyRequestState;
use crate::small_map::SmallMap;

/// The reserved resource name for pod counts.
pub const PODS: &str = "pods";

/// Node or namespace labels.
pub type Labels = BTreeMap<String, String>;

/// Everything one admission run looks at.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    pub resource_flavors: Vec<ResourceFlavor>,
    pub cluster_queues: Vec<ClusterQueue>,
    pub cohorts: Vec<Cohort>,
    pub local_queues: Vec<LocalQueue>,
    pub namespaces: Vec<Namespace>,
    /// Pending and admitted workloads. A workload with `admission` set holds quota.
    pub workloads: Vec<Workload>,
}

/// `ResourceFlavor`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResourceFlavor {
    pub name: String,
    pub node_labels: Labels,
    pub node_taints: Vec<Taint>,
    pub tolerations: Vec<Toleration>,
    /// Set for topology-aware flavors; kept for the TAS join, not interpreted here.
    pub topology_name: Option<String>,
    /// `topology_name` names no Topology that exists: ClusterQueues using the flavor are inactive
    /// (Kueue's `TopologyNotFound`).
    pub topology_missing: bool,
}

/// One resource's quota inside a flavor (`ResourceQuota`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceQuota {
    pub name: String,
    pub nominal_quota: Quantity,
    /// `None`: may borrow without limit.
    pub borrowing_limit: Option<Quantity>,
    /// `None`: lends everything.
    pub lending_limit: Option<Quantity>,
}

impl ResourceQuota {
    /// A quota with only `nominalQuota` set.
    pub fn nominal(name: impl Into<String>, nominal_quota: Quantity) -> Self {
        ResourceQuota {
            name: name.into(),
            nominal_quota,
            borrowing_limit: None,
            lending_limit: None,
        }
    }
}

/// One flavor's quotas within a resource group (`FlavorQuotas`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlavorQuotas {
    pub name: String,
    /// In the same order as the group's `covered_resources`.
    pub resources: Vec<ResourceQuota>,
}

/// A resource group: flavors in preference order, all covering the same resources.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceGroup {
    pub covered_resources: Vec<String>,
    pub flavors: Vec<FlavorQuotas>,
}

/// `spec.queueingStrategy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum QueueingStrategy {
    StrictFifo,
    #[default]
    BestEffortFifo,
}

/// `spec.stopPolicy` of a ClusterQueue or LocalQueue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum StopPolicy {
    #[default]
    None,
    Hold,
    HoldAndDrain,
}

/// `whenCanBorrow` / `whenCanPreempt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FungibilityPolicy {
    MayStopSearch,
    TryNextFlavor,
}

/// `flavorFungibility.preference`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FungibilityPreference {
    #[default]
    BorrowingOverPreemption,
    PreemptionOverBorrowing,
}

/// `spec.flavorFungibility` with Kueue's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlavorFungibility {
    pub when_can_borrow: FungibilityPolicy,
    pub when_can_preempt: FungibilityPolicy,
    /// `None` behaves as `BorrowingOverPreemption`.
    pub preference: Option<FungibilityPreference>,
}

impl Default for FlavorFungibility {
    fn default() -> Self {
        FlavorFungibility {
            when_can_borrow: FungibilityPolicy::MayStopSearch,
            when_can_preempt: FungibilityPolicy::TryNextFlavor,
            preference: None,
        }
    }
}

/// `preemption.withinClusterQueue`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WithinClusterQueue {
    #[default]
    Never,
    LowerPriority,
    LowerOrNewerEqualPriority,
}

/// `preemption.reclaimWithinCohort`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ReclaimWithinCohort {
    #[default]
    Never,
    LowerPriority,
    Any,
}

/// `preemption.borrowWithinCohort.policy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BorrowWithinCohortPolicy {
    #[default]
    Never,
    LowerPriority,
}

/// `preemption.borrowWithinCohort`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BorrowWithinCohort {
    pub policy: BorrowWithinCohortPolicy,
    /// While borrowing, only victims at or below this priority may be preempted.
    pub max_priority_threshold: Option<i32>,
}

/// `spec.preemption`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PreemptionPolicy {
    pub within_cluster_queue: WithinClusterQueue,
    pub reclaim_within_cohort: ReclaimWithinCohort,
    pub borrow_within_cohort: BorrowWithinCohort,
}

/// `ClusterQueue`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterQueue {
    pub name: String,
    /// `spec.cohortName`; the Cohort object need not exist.
    pub cohort: Option<String>,
    pub resource_groups: Vec<ResourceGroup>,
    /// `None` matches no namespace; an empty selector matches every namespace.
    pub namespace_selector: Option<LabelSelector>,
    pub queueing_strategy: QueueingStrategy,
    pub flavor_fungibility: FlavorFungibility,
    pub preemption: PreemptionPolicy,
    pub stop_policy: StopPolicy,
    /// `spec.fairSharing.weight`; `None` means 1.
    pub fair_sharing_weight: Option<Quantity>,
    /// The AdmissionChecks `spec.admissionChecksStrategy` names, each with what is known of it. A
    /// check that does not exist or is not active makes the queue inactive, as in Kueue.
    pub admission_checks: Vec<QueueCheck>,
    /// The object is being deleted (it has a `deletionTimestamp`, held by Kueue's
    /// `resource-in-use` finalizer): it admits nothing new, and its admitted workloads keep
    /// their quota until they end.
    pub terminating: bool,
}

/// One rule of a ClusterQueue's `spec.admissionChecksStrategy`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct QueueCheck {
    pub name: String,
    /// `onFlavors`: the flavors whose admissions the check applies to; empty for every admission.
    pub on_flavors: Vec<String>,
    pub state: AdmissionCheckState,
    /// The check is Kueue's ProvisioningRequest check: a topology-aware pod set on a flavor it
    /// applies to is placed only once the nodes it asked for exist (Kueue's delayed topology
    /// request).
    pub provisioning: bool,
}

/// What is known of an AdmissionCheck object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct KnownCheck {
    pub state: AdmissionCheckState,
    /// `spec.controllerName` is Kueue's ProvisioningRequest controller.
    pub provisioning: bool,
}

/// What a ClusterQueue knows of an AdmissionCheck it names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AdmissionCheckState {
    /// No AdmissionCheck of that name exists.
    #[default]
    NotFound,
    /// It exists, but its controller has not set `Active=True`.
    Inactive,
    Active,
}

/// `Cohort`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cohort {
    pub name: String,
    /// `spec.parentName`; a missing parent acts as an implicit Cohort without quota.
    pub parent: Option<String>,
    /// Quota pooled at this Cohort on top of what its children bring.
    pub resource_groups: Vec<ResourceGroup>,
    /// `spec.fairSharing.weight`; `None` means 1.
    pub fair_sharing_weight: Option<Quantity>,
}

/// `LocalQueue`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LocalQueue {
    pub namespace: String,
    pub name: String,
    pub cluster_queue: String,
    pub stop_policy: StopPolicy,
}

/// A Namespace and its labels, matched against ClusterQueue `namespaceSelector`s.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Namespace {
    pub name: String,
    pub labels: Labels,
}

/// `PodSetTopologyRequest` as plain data. The admission engine only passes it to the topology seam
/// (see [`super::topology_placer`]); the TAS engine interprets it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopologyRequest {
    pub required: Option<String>,
    pub preferred: Option<String>,
    pub unconstrained: Option<bool>,
    pub pod_index_label: Option<String>,
    pub sub_group_index_label: Option<String>,
    pub sub_group_count: Option<i32>,
    pub pod_set_group_name: Option<String>,
    pub slice_required_topology: Option<String>,
    pub slice_size: Option<i32>,
    /// Multi-layer slices, outermost first: (level, size).
    pub slice_required_topology_constraints: Vec<(String, i32)>,
}

/// One group of identical pods.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodSet {
    pub name: String,
    /// Pods still needed: `spec.podSets[].count` less the reclaimable ones (`status.reclaimablePods`,
    /// gate `ReclaimablePods`). An admitted pod set holds quota for at most this many of its
    /// admitted pods.
    pub count: i32,
    /// Partial-admission floor; `None` means the full count is needed.
    pub min_count: Option<i32>,
    /// Effective requests of one pod (after limits-as-requests, overhead and transformations).
    pub requests: SmallMap<String, Quantity>,
    pub node_selector: Labels,
    pub tolerations: Vec<Toleration>,
    /// `affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    pub required_node_affinity: Option<NodeSelector>,
    /// Boxed: most pod sets have none, and the request is larger than the rest of the pod set.
    pub topology_request: Option<Box<TopologyRequest>>,
}

/// One entry of `status.admission.podSetAssignments`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodSetAssignment {
    pub name: String,
    /// Flavor chosen for each resource; `pods` appears when the ClusterQueue covers it.
    pub flavors: SmallMap<String, String>,
    /// Total over `count` pods.
    pub resource_usage: SmallMap<String, Quantity>,
    pub count: i32,
    /// Filled by the topology seam for TAS pod sets; passed through for admitted input workloads.
    pub topology_assignment: Option<TopologyAssignment>,
    /// Set for a TAS pod set whose placement waits for its ProvisioningRequest check: `Pending`
    /// until it is placed, then `Ready`.
    pub delayed_topology: Option<DelayedTopologyRequestState>,
}

impl PodSetAssignment {
    /// Its topology request waits to be placed after provisioning.
    pub fn awaits_placement(&self) -> bool {
        self.topology_assignment.is_none()
            && self.delayed_topology == Some(DelayedTopologyRequestState::Pending)
    }
}

/// `status.admission`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Admission {
    pub cluster_queue: String,
    pub pod_set_assignments: Vec<PodSetAssignment>,
}

/// A Workload with its priority already resolved.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Workload {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    /// The `kueue.x-k8s.io/job-uid` label: the UID of the job the workload stands for, named in the
    /// messages of the workloads it preempts, as Kueue's preemption message does. Shared text,
    /// one word smaller than a `String` in every workload's slot.
    pub job_uid: Option<Arc<str>>,
    /// `spec.queueName`: a LocalQueue in the workload's namespace.
    pub queue_name: String,
    /// Effective priority (see [`resolve_priority`]).
    pub priority: i32,
    /// Queue-order time in milliseconds, lower first: Kueue's queue-order timestamp (the creation
    /// timestamp, or an eviction's time, see `state::queue_order`), or the order of appearance.
    pub creation: i64,
    /// `spec.active`; an inactive workload is never admitted and an admitted one is evicted.
    pub active: bool,
    /// The gates of `kueue.x-k8s.io/admission-gated-by` (gate `AdmissionGatedBy`), as written: a
    /// gated workload waits and is never admitted until they are removed. Behind one thin
    /// pointer, since few workloads carry gates and every one holds this field.
    pub admission_gated_by: Option<Arc<String>>,
    /// What its conditions showed when read: on hold, admitted, or neither.
    pub shown: Shown,
    pub pod_sets: Vec<PodSet>,
    /// Set when the workload holds quota.
    pub admission: Option<Admission>,
    /// When quota was reserved (milliseconds, same clock as `creation`): the `QuotaReserved`
    /// condition's `lastTransitionTime`; orders preemption candidates. `None` for an admitted
    /// workload means "at `creation`".
    pub quota_reserved_at: Option<i64>,
    /// `Finished=True`: the workload holds no quota and never queues again.
    pub finished: bool,
    /// The workload has already preempted a victim of equal or higher priority, so from now on it
    /// may preempt only strictly lower priorities. Carried across restarts on the Workload.
    pub preemption_credit_spent: bool,
    /// ClusterQueues this admitted workload took quota from by fair-sharing preemption; their
    /// workloads may not take it back by fair sharing while it runs. Carried across restarts.
    pub fair_share_shield: Vec<String>,
    /// Why its pod templates' resources keep it from being admitted (requests above limits, or
    /// outside its namespace's LimitRanges): it waits `Misconfigured` with this message, as Kueue's
    /// admissibility check leaves it. A thin pointer: almost no workload has one.
    pub invalid_resources: Option<std::sync::Arc<String>>,
}

/// What a Workload's conditions showed when it was read, where the engine acts on it. One field,
/// not a flag each: every workload's slot holds it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Shown {
    #[default]
    Neither,
    /// `QuotaReserved=False` with reason `OnHold`: an integration released the quota on purpose
    /// (a StatefulSet scaled to zero) and the workload waits, never admitted, until the
    /// integration takes the hold off, as Kueue's `IsOnHold` keeps it out of the queue. The
    /// status keeps the message the integration wrote.
    OnHold,
    /// `Admitted=True`: with a reservation in a ClusterQueue with admission checks, the checks
    /// have all said Ready, so its quota counts as used and not only reserved.
    Admitted,
}

/// The priority a workload is queued with, as Kueue resolves it: its WorkloadPriorityClass value, else its
/// first pod set's PriorityClass value, else the global-default PriorityClass, else 0.
pub fn resolve_priority(
    workload_priority_class: Option<i32>,
    pod_priority_class: Option<i32>,
    global_default: Option<i32>,
) -> i32 {
    workload_priority_class
        .or(pod_priority_class)
        .or(global_default)
        .unwrap_or(0)
}

/// Kueue's fair-sharing preemption strategies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FairPreemptionStrategy {
    /// S2-a: preemptor's new share ≤ target's new share.
    LessThanOrEqualToFinalShare,
    /// S2-b: preemptor's new share < target's old share.
    LessThanInitialShare,
}

/// The `fairSharing` block of the configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FairSharingConfig {
    pub enabled: bool,
    /// Empty means Kueue's default `[LessThanOrEqualToFinalShare, LessThanInitialShare]`.
    pub preemption_strategies: Vec<FairPreemptionStrategy>,
}

impl FairSharingConfig {
    /// Fair sharing on, with the default strategies.
    pub fn enabled() -> Self {
        FairSharingConfig {
            enabled: true,
            preemption_strategies: Vec::new(),
        }
    }

    /// The strategies in force, with the default filled in.
    pub fn strategies(&self) -> Vec<FairPreemptionStrategy> {
        if self.preemption_strategies.is_empty() {
            vec![
                FairPreemptionStrategy::LessThanOrEqualToFinalShare,
                FairPreemptionStrategy::LessThanInitialShare,
            ]
        } else {
            self.preemption_strategies.clone()
        }
    }
}

/// `resources.quotaCheckStrategy` for resources no resource group covers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum QuotaCheckStrategy {
    #[default]
    BlockUndeclared,
    IgnoreUndeclared,
}

/// `waitForPodsReady.requeuingStrategy.timestamp`: which time orders a Workload requeued after a
/// PodsReady timeout in its queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RequeuingTimestamp {
    /// The time of the eviction (Kueue's default).
    #[default]
    Eviction,
    /// The Workload's creation time.
    Creation,
}

/// How the engine is configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineConfig {
    pub features: FeatureGates,
    pub fair_sharing: FairSharingConfig,
    pub quota_check: QuotaCheckStrategy,
    /// Orders Workloads evicted by a PodsReady timeout (see `state::queue_order`).
    pub requeuing_timestamp: RequeuingTimestamp,
    /// Safety bound for [`super::Engine::run_until_stable`].
    pub max_cycles: u64,
    /// An evicted workload queues again only at the next [`super::Engine::requeue_evicted`],
    /// which the controller calls before each pass, as Kueue requeues an evicted Workload only
    /// after its Job stopped: re-admitted in the run that evicted it, it would be written as a
    /// move of its admission while its Job still runs on the old flavor. Off, it queues at once,
    /// so `kuota simulate` shows where it goes next.
    pub requeue_evicted_next_pass: bool,
    /// What Workloads' requests count as (`resources.excludeResourcePrefixes` and
    /// `resources.transformations`), applied where they are read.
    pub counting: ResourceCounting,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            features: FeatureGates::default(),
            fair_sharing: FairSharingConfig::default(),
            quota_check: QuotaCheckStrategy::default(),
            requeuing_timestamp: RequeuingTimestamp::default(),
            max_cycles: 10_000,
            requeue_evicted_next_pass: false,
            counting: ResourceCounting::default(),
        }
    }
}

#[cfg(test)]
mod tests;
