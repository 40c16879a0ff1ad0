//! Workload: the unit of admission; a set of pod sets that is admitted, or not, as a whole.
//!
//! The status and the admission it records live in [`super::workload_status`].

use std::sync::Arc;

use k8s_openapi::api::core::v1::PodTemplateSpec;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{DNS1123_LABEL, DNS1123_SUBDOMAIN, default_pod_set_name};
use super::rare_list::RareList;
use super::workload_status::WorkloadStatus;

/// The desired state of a Workload.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kueue.x-k8s.io",
    version = "v1beta2",
    kind = "Workload",
    plural = "workloads",
    namespaced,
    shortname = "kwl",
    shortname = "kueueworkload",
    shortname = "kueueworkloads",
    status = "WorkloadStatus",
    derive = "PartialEq",
    doc = "Workload is a set of pods that is admitted, or not, as a whole.",
    printcolumn = r#"{"name": "Queue", "type": "string", "jsonPath": ".spec.queueName", "description": "Name of the queue this workload was submitted to"}"#,
    printcolumn = r#"{"name": "Reserved in", "type": "string", "jsonPath": ".status.admission.clusterQueue", "description": "Name of the ClusterQueue where the workload is reserving quota"}"#,
    printcolumn = r#"{"name": "Admitted", "type": "string", "jsonPath": ".status.conditions[?(@.type=='Admitted')].status", "description": "Admission status"}"#,
    printcolumn = r#"{"name": "Finished", "type": "string", "jsonPath": ".status.conditions[?(@.type=='Finished')].status", "description": "Workload finished"}"#,
    printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp", "description": "Time this workload was created"}"#,
    selectable = ".status.admission.clusterQueue"
)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": "!has(self.priorityClassRef) || has(self.priority)",
    "message": "priority should not be nil when priorityClassRef is set"
}]))]
pub struct WorkloadSpec {
    /// Groups of identical pods.
    #[schemars(
        length(min = 1, max = 18),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
    )]
    pub pod_sets: Vec<PodSet>,
    /// The LocalQueue this Workload is submitted to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 253), regex(pattern = DNS1123_SUBDOMAIN))]
    pub queue_name: Option<String>,
    /// Where the priority comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class_ref: Option<Box<PriorityClassRef>>,
    /// Base priority; absent counts as 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    /// `false` evicts the Workload and keeps it out of the queue. Defaults to `true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = true))]
    pub active: Option<bool>,
    /// The Workload is deactivated once it has been Admitted for longer than this in total.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub maximum_execution_time_seconds: Option<i32>,
    /// Gates that keep this Workload from preempting while closed.
    #[serde(default, skip_serializing_if = "RareList::is_empty")]
    #[schemars(
        length(max = 8),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
    )]
    pub preemption_gates: RareList<PreemptionGate>,
}

impl Workload {
    /// Drops the spare capacity decoding leaves in the object's lists. A list decoded from JSON
    /// grows by doubling from four entries, so a Workload of one pod set and one condition,
    /// read as most are, would otherwise carry about a kilobyte of empty entries for as long as
    /// it is held.
    pub fn shrink_to_fit(&mut self) {
        if let Some(finalizers) = &mut self.metadata.finalizers {
            finalizers.shrink_to_fit();
        }
        if let Some(owners) = &mut self.metadata.owner_references {
            owners.shrink_to_fit();
        }
        self.spec.pod_sets.shrink_to_fit();
        for pod_set in &mut self.spec.pod_sets {
            if let Some(constraints) = pod_set
                .topology_request
                .as_mut()
                .and_then(|request| request.podset_slice_required_topology_constraints.as_mut())
            {
                constraints.shrink_to_fit();
            }
        }
        self.spec.preemption_gates.shrink_to_fit();
        if let Some(status) = &mut self.status {
            status.shrink_to_fit();
        }
    }
}

impl WorkloadSpec {
    /// Whether the Workload is active, with the API default applied.
    pub fn is_active(&self) -> bool {
        self.active.unwrap_or(true)
    }
}

fn default_count() -> i32 {
    1
}

/// A group of identical pods.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": "!has(self.minCount) || self.minCount <= self.count",
    "message": "minCount should be positive and less or equal to count"
}]))]
pub struct PodSet {
    /// Pod-set name, unique within the Workload.
    #[serde(default = "default_pod_set_name")]
    #[schemars(length(max = 63), regex(pattern = DNS1123_LABEL))]
    pub name: String,
    /// The shape of every pod of the set.
    // Shared: Workloads read with equal templates (those of one Job template) hold one copy.
    #[serde(with = "shared_template")]
    #[schemars(with = "PodTemplateSpec")]
    pub template: Arc<PodTemplateSpec>,
    /// Number of pods.
    #[serde(default = "default_count")]
    #[schemars(range(min = 0))]
    pub count: i32,
    /// Fewest pods that may be admitted under partial admission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub min_count: Option<i32>,
    /// Topology-aware scheduling request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology_request: Option<Box<PodSetTopologyRequest>>,
}

impl Default for PodSet {
    fn default() -> Self {
        Self {
            name: default_pod_set_name(),
            template: Arc::default(),
            count: default_count(),
            min_count: None,
            topology_request: None,
        }
    }
}

/// A pod template read and written as itself, held behind an [`Arc`].
mod shared_template {
    use std::sync::Arc;

    use k8s_openapi::api::core::v1::PodTemplateSpec;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(
        template: &Arc<PodTemplateSpec>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        template.as_ref().serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Arc<PodTemplateSpec>, D::Error> {
        PodTemplateSpec::deserialize(deserializer).map(Arc::new)
    }
}

/// How the pods of a pod set are to be placed in the topology.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "has(self.podSetSliceRequiredTopology) == has(self.podSetSliceSize)",
        "message": "podSetSliceSize must be set if and only if podSetSliceRequiredTopology is set"
    },
    {
        "rule": "!has(self.podsetSliceRequiredTopologyConstraints) || !has(self.podSetSliceRequiredTopology)",
        "message": "podsetSliceRequiredTopologyConstraints and podSetSliceRequiredTopology are mutually exclusive"
    }
]))]
pub struct PodSetTopologyRequest {
    /// Level key all pods must share a domain of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 63))]
    pub required: Option<String>,
    /// Level key tried first; placement may move up from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 63))]
    pub preferred: Option<String>,
    /// Any placement will do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unconstrained: Option<bool>,
    /// Pod label holding the pod's rank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 317))]
    pub pod_index_label: Option<String>,
    /// Pod label holding the replicated-job index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 317))]
    pub sub_group_index_label: Option<String>,
    /// Number of replicated jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub sub_group_count: Option<i32>,
    /// Group of pod sets placed together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub pod_set_group_name: Option<String>,
    /// Level each slice of pods must fit inside.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 63))]
    pub pod_set_slice_required_topology: Option<String>,
    /// Pods per slice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub pod_set_slice_size: Option<i32>,
    /// Multi-layer slices, outermost first.
    #[serde(
        default,
        rename = "podsetSliceRequiredTopologyConstraints",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(max = 3), extend("x-kubernetes-list-type" = "atomic"))]
    pub podset_slice_required_topology_constraints: Option<Vec<SliceTopologyConstraint>>,
}

/// One layer of a multi-layer slice request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SliceTopologyConstraint {
    /// Level key each slice of this layer must fit inside.
    #[schemars(length(min = 1, max = 63))]
    pub topology: String,
    /// Pods per slice of this layer.
    #[schemars(range(min = 1))]
    pub size: i32,
}

/// The origin of a Workload's priority.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": "(self.group == 'kueue.x-k8s.io' && self.kind == 'WorkloadPriorityClass') || (self.group == 'scheduling.k8s.io' && self.kind == 'PriorityClass')",
    "message": "group and kind must be kueue.x-k8s.io/WorkloadPriorityClass or scheduling.k8s.io/PriorityClass"
}]))]
pub struct PriorityClassRef {
    /// API group of the class.
    pub group: PriorityClassGroup,
    /// Kind of the class.
    pub kind: PriorityClassKind,
    /// Name of the class.
    #[schemars(length(min = 1, max = 253), regex(pattern = DNS1123_SUBDOMAIN))]
    pub name: String,
}

/// API group of a priority class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum PriorityClassGroup {
    /// A WorkloadPriorityClass.
    #[serde(rename = "kueue.x-k8s.io")]
    Kueue,
    /// A pod PriorityClass.
    #[serde(rename = "scheduling.k8s.io")]
    Scheduling,
}

/// Kind of a priority class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum PriorityClassKind {
    /// `kueue.x-k8s.io/WorkloadPriorityClass`.
    WorkloadPriorityClass,
    /// `scheduling.k8s.io/PriorityClass`.
    PriorityClass,
}

/// A gate that keeps a Workload from preempting while it is closed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PreemptionGate {
    /// Gate name.
    #[schemars(length(min = 1, max = 63))]
    pub name: String,
}
