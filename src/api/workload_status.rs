//! The observed state of a Workload, including the admission that records its quota reservation.

use std::collections::BTreeMap;

use super::condition::Condition;
use k8s_openapi::api::core::v1::Toleration;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{
    DNS1123_LABEL, DNS1123_SUBDOMAIN, PodSetUsage, ResourceList, default_pod_set_name,
    toleration_rules,
};
use super::rare_list::RareList;
use super::topology_assignment::TopologyAssignment;
use crate::small_map::SmallMap;

/// The observed state of a Workload.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "!has(oldSelf.clusterName) || (has(self.clusterName) && oldSelf.clusterName == self.clusterName)",
        "message": "clusterName is immutable once set"
    },
    {
        "rule": "!has(self.clusterName) || !has(self.nominatedClusterNames) || size(self.nominatedClusterNames) == 0",
        "message": "clusterName and nominatedClusterNames are mutually exclusive"
    }
]))]
pub struct WorkloadStatus {
    /// QuotaReserved, Admitted, Evicted and the other lifecycle conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(max = 16),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"])
    )]
    pub conditions: Vec<Condition>,
    /// The quota reservation, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admission: Option<Admission>,
    /// Backoff state after an eviction that requeues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requeue_state: Option<Box<RequeueState>>,
    /// Pods whose quota may be released before the Workload finishes.
    #[serde(default, skip_serializing_if = "RareList::is_empty")]
    #[schemars(
        length(max = 18),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
    )]
    pub reclaimable_pods: RareList<ReclaimablePod>,
    /// State of each AdmissionCheck.
    #[serde(default, skip_serializing_if = "RareList::is_empty")]
    #[schemars(
        length(max = 8),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
    )]
    pub admission_checks: RareList<AdmissionCheckState>,
    /// Effective requests at the last evaluation of a Workload that is not admitted.
    #[serde(default, skip_serializing_if = "RareList::is_empty")]
    #[schemars(
        length(max = 18),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
    )]
    pub resource_requests: RareList<PodSetRequest>,
    /// Seconds Admitted in earlier admission cycles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accumulated_past_execution_time_seconds: Option<i32>,
    /// Eviction counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduling_stats: Option<Box<SchedulingStats>>,
    /// MultiKueue clusters being considered.
    #[serde(default, skip_serializing_if = "RareList::is_empty")]
    #[schemars(length(max = 20), inner(length(max = 256)), extend("x-kubernetes-list-type" = "atomic"))]
    pub nominated_cluster_names: RareList<String>,
    /// The MultiKueue cluster running the Workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub cluster_name: Option<String>,
    /// Nodes of the topology assignment that wait for replacement.
    #[serde(default, skip_serializing_if = "RareList::is_empty")]
    #[schemars(
        length(max = 8),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
    )]
    pub unhealthy_nodes: RareList<UnhealthyNode>,
    /// State of each preemption gate.
    #[serde(default, skip_serializing_if = "RareList::is_empty")]
    #[schemars(
        length(max = 8),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
    )]
    pub preemption_gates: RareList<PreemptionGateState>,
}

impl WorkloadStatus {
    /// Drops the spare capacity a decoder leaves in each list (see
    /// [`super::Workload::shrink_to_fit`]).
    pub fn shrink_to_fit(&mut self) {
        self.conditions.shrink_to_fit();
        if let Some(admission) = &mut self.admission {
            admission.pod_set_assignments.shrink_to_fit();
            for assignment in &mut admission.pod_set_assignments {
                if let Some(topology) = &mut assignment.topology_assignment {
                    topology.shrink_to_fit();
                }
            }
        }
        self.reclaimable_pods.shrink_to_fit();
        self.admission_checks.shrink_to_fit();
        for check in self.admission_checks.iter_mut() {
            check.pod_set_updates.shrink_to_fit();
        }
        self.resource_requests.shrink_to_fit();
        if let Some(stats) = &mut self.scheduling_stats {
            stats.evictions.shrink_to_fit();
        }
        self.nominated_cluster_names.shrink_to_fit();
        self.unhealthy_nodes.shrink_to_fit();
        self.preemption_gates.shrink_to_fit();
    }
}

/// A quota reservation in a ClusterQueue.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Admission {
    /// The ClusterQueue holding the quota.
    #[schemars(length(max = 253), regex(pattern = DNS1123_SUBDOMAIN))]
    pub cluster_queue: String,
    /// One entry per pod set, in the order of `spec.podSets`.
    #[schemars(
        length(max = 18),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
    )]
    pub pod_set_assignments: Vec<PodSetAssignment>,
}

/// What one pod set was given.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodSetAssignment {
    /// The pod set.
    #[serde(default = "default_pod_set_name")]
    #[schemars(length(max = 63), regex(pattern = DNS1123_LABEL))]
    pub name: String,
    /// Flavor chosen for each resource.
    #[serde(default, skip_serializing_if = "SmallMap::is_empty")]
    pub flavors: SmallMap<String, String>,
    /// Total usage over all admitted pods.
    #[serde(default, skip_serializing_if = "SmallMap::is_empty")]
    pub resource_usage: PodSetUsage,
    /// Pods counted at admission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub count: Option<i32>,
    /// Topology-aware placement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology_assignment: Option<Box<TopologyAssignment>>,
    /// Set while topology placement is deferred.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("maxLength" = 7))]
    pub delayed_topology_request: Option<DelayedTopologyRequestState>,
}

impl Default for PodSetAssignment {
    fn default() -> Self {
        Self {
            name: default_pod_set_name(),
            flavors: SmallMap::new(),
            resource_usage: PodSetUsage::new(),
            count: None,
            topology_assignment: None,
            delayed_topology_request: None,
        }
    }
}

/// Whether deferred topology placement has happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum DelayedTopologyRequestState {
    /// Not yet placed; the Workload cannot be Admitted.
    Pending,
    /// Placed.
    Ready,
}

/// Backoff state of a requeued Workload.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RequeueState {
    /// Number of requeues so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub count: Option<i32>,
    /// Earliest time of the next attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requeue_at: Option<Time>,
}

/// Pods of one pod set whose quota may be released.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReclaimablePod {
    /// The pod set.
    #[schemars(length(max = 63), regex(pattern = DNS1123_LABEL))]
    pub name: String,
    /// Number of pods.
    #[schemars(range(min = 0))]
    pub count: i32,
}

/// The state of one AdmissionCheck for a Workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionCheckState {
    /// The AdmissionCheck.
    #[schemars(length(min = 1, max = 316))]
    pub name: String,
    /// Current state.
    pub state: CheckState,
    /// When `state` last changed.
    pub last_transition_time: Time,
    /// Human-readable detail.
    #[schemars(length(max = 32768))]
    pub message: String,
    /// Minimum wait after a Retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub requeue_after_seconds: Option<i32>,
    /// Transitions into Retry so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub retry_count: Option<i32>,
    /// Additive changes to the pod templates; immutable once set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(max = 18),
        extend(
            "x-kubernetes-list-type" = "atomic",
            "x-kubernetes-validations" = [{"rule": "self == oldSelf", "message": "field is immutable"}]
        )
    )]
    pub pod_set_updates: Vec<PodSetUpdate>,
}

/// The state of an AdmissionCheck.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum CheckState {
    /// Not decided yet.
    Pending,
    /// Passed.
    Ready,
    /// Failed for now; the Workload is evicted and retried.
    Retry,
    /// Failed for good; the Workload is deactivated.
    Rejected,
}

impl CheckState {
    /// The state as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckState::Pending => "Pending",
            CheckState::Ready => "Ready",
            CheckState::Retry => "Retry",
            CheckState::Rejected => "Rejected",
        }
    }
}

/// Additive changes an AdmissionCheck makes to one pod set's template.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodSetUpdate {
    /// The pod set.
    #[schemars(length(max = 63), regex(pattern = DNS1123_LABEL))]
    pub name: String,
    /// Labels to add.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations to add.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// nodeSelector entries to add.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    /// Tolerations to add.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(max = 8),
        extend("x-kubernetes-list-type" = "atomic"),
        transform = toleration_rules
    )]
    pub tolerations: Vec<Toleration>,
}

/// Effective requests of one pod set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodSetRequest {
    /// The pod set.
    #[schemars(length(max = 63), regex(pattern = DNS1123_LABEL))]
    pub name: String,
    /// Requests of one pod.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resources: ResourceList,
}

/// Scheduling counters of a Workload.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SchedulingStats {
    /// Evictions by reason and underlying cause.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(max = 256),
        extend(
            "x-kubernetes-list-type" = "map",
            "x-kubernetes-list-map-keys" = ["reason", "underlyingCause"]
        )
    )]
    pub evictions: Vec<WorkloadEviction>,
}

/// How often a Workload was evicted for one reason.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadEviction {
    /// Eviction reason, e.g. `Preempted`.
    #[schemars(length(max = 316))]
    pub reason: String,
    /// Finer cause, possibly empty.
    #[schemars(length(max = 316))]
    pub underlying_cause: String,
    /// Number of evictions.
    #[schemars(range(min = 0))]
    pub count: i32,
}

/// A node of the topology assignment that failed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnhealthyNode {
    /// Node name.
    #[schemars(length(max = 63))]
    pub name: String,
}

/// The state of one preemption gate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PreemptionGateState {
    /// Gate name.
    #[schemars(length(min = 1, max = 63))]
    pub name: String,
    /// Whether the gate lets preemption through.
    pub position: GatePosition,
    /// When `position` last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
}

/// Position of a preemption gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum GatePosition {
    /// Preemption is blocked.
    Closed,
    /// Preemption may proceed.
    Open,
}
