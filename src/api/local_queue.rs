//! LocalQueue: the namespaced entry point through which Workloads reach a ClusterQueue.

use super::condition::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{DNS1123_SUBDOMAIN, FairSharing, FairSharingStatus, StopPolicy};
use super::quota::LocalQueueFlavorUsage;

/// The desired state of a LocalQueue.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kueue.x-k8s.io",
    version = "v1beta2",
    kind = "LocalQueue",
    plural = "localqueues",
    namespaced,
    shortname = "queue",
    shortname = "queues",
    shortname = "lq",
    status = "LocalQueueStatus",
    derive = "PartialEq",
    doc = "LocalQueue is a namespaced queue that sends its Workloads to one ClusterQueue.",
    printcolumn = r#"{"name": "ClusterQueue", "type": "string", "jsonPath": ".spec.clusterQueue", "description": "Backing ClusterQueue"}"#,
    printcolumn = r#"{"name": "Pending Workloads", "type": "integer", "jsonPath": ".status.pendingWorkloads", "description": "Number of pending workloads"}"#,
    printcolumn = r#"{"name": "Admitted Workloads", "type": "integer", "jsonPath": ".status.admittedWorkloads", "description": "Number of admitted workloads that haven't finished yet."}"#
)]
#[serde(rename_all = "camelCase")]
pub struct LocalQueueSpec {
    /// The backing ClusterQueue; immutable.
    #[schemars(
        length(max = 253),
        regex(pattern = DNS1123_SUBDOMAIN),
        extend("x-kubernetes-validations" = [{"rule": "self == oldSelf", "message": "field is immutable"}])
    )]
    pub cluster_queue: String,
    /// Stops admission (`Hold`) or also evicts admitted Workloads (`HoldAndDrain`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "None"))]
    pub stop_policy: Option<StopPolicy>,
    /// Weight of this LocalQueue in Admission Fair Sharing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fair_sharing: Option<FairSharing>,
}

impl LocalQueueSpec {
    /// The stop policy, with its API default applied.
    pub fn effective_stop_policy(&self) -> StopPolicy {
        self.stop_policy.unwrap_or_default()
    }
}

/// The observed state of a LocalQueue.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocalQueueStatus {
    /// `Active` and related conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(max = 16),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"])
    )]
    pub conditions: Vec<Condition>,
    /// Workloads waiting for admission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_workloads: Option<i32>,
    /// Workloads holding quota.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserving_workloads: Option<i32>,
    /// Admitted Workloads that have not finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admitted_workloads: Option<i32>,
    /// Quota held by this queue's Workloads with reserved quota, per flavor.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(max = 64),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
    )]
    pub flavors_reservation: Vec<LocalQueueFlavorUsage>,
    /// Quota held by this queue's admitted Workloads, per flavor.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(max = 64),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
    )]
    pub flavors_usage: Vec<LocalQueueFlavorUsage>,
    /// Fair-sharing state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fair_sharing: Option<FairSharingStatus>,
}
