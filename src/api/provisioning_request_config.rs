//! ProvisioningRequestConfig: how the `kueue.x-k8s.io/provisioning-request` admission check asks
//! the cluster autoscaler for capacity (its ProvisioningRequests' class and parameters, which pod
//! sets they cover, how failures are retried, what the pods are told once it is provisioned).

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{DNS1123_SUBDOMAIN, optional_spec};

/// A label key (an optional DNS subdomain prefix and a name), as Kueue's CRD checks it.
const QUALIFIED_NAME: &str = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$";

/// The desired state of a ProvisioningRequestConfig.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kueue.x-k8s.io",
    version = "v1beta2",
    kind = "ProvisioningRequestConfig",
    plural = "provisioningrequestconfigs",
    shortname = "prc",
    derive = "PartialEq",
    doc = "ProvisioningRequestConfig configures the ProvisioningRequests of an admission check."
)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct ProvisioningRequestConfigSpec {
    /// The ProvisioningRequests' `provisioningClassName`.
    #[schemars(length(min = 1, max = 253), regex(pattern = DNS1123_SUBDOMAIN))]
    pub provisioning_class_name: String,
    /// The ProvisioningRequests' `parameters`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend(
        "maxProperties" = 100,
        "additionalProperties" = {"type": "string", "maxLength": 255}
    ))]
    pub parameters: BTreeMap<String, String>,
    /// Resources the autoscaler provisions; empty: all. Only pod sets requesting one of them get
    /// a pod set in the request, and a Workload with none is Ready at once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), extend("x-kubernetes-list-type" = "set"))]
    pub managed_resources: Vec<String>,
    /// How a failed or expired request is retried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = {
        "backoffLimitCount": DEFAULT_BACKOFF_LIMIT_COUNT,
        "backoffBaseSeconds": DEFAULT_BACKOFF_BASE_SECONDS,
        "backoffMaxSeconds": DEFAULT_BACKOFF_MAX_SECONDS,
    }))]
    pub retry_strategy: Option<RetryStrategy>,
    /// What the pods are told once the request is provisioned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_set_updates: Option<PodSetUpdates>,
    /// Which pod sets share one pod set of the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_set_merge_policy: Option<PodSetMergePolicy>,
}

optional_spec!(ProvisioningRequestConfigSpec);

/// Kueue's defaults for a missing `retryStrategy` and its missing fields.
pub const DEFAULT_BACKOFF_LIMIT_COUNT: i32 = 3;
pub const DEFAULT_BACKOFF_BASE_SECONDS: i32 = 60;
pub const DEFAULT_BACKOFF_MAX_SECONDS: i32 = 1800;

/// Retries of a ProvisioningRequest that failed or whose booking expired.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RetryStrategy {
    /// Retries before the Workload is deactivated; 0 turns retries off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = DEFAULT_BACKOFF_LIMIT_COUNT))]
    pub backoff_limit_count: Option<i32>,
    /// Base of the exponential wait before a retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = DEFAULT_BACKOFF_BASE_SECONDS))]
    pub backoff_base_seconds: Option<i32>,
    /// Longest wait before a retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = DEFAULT_BACKOFF_MAX_SECONDS))]
    pub backoff_max_seconds: Option<i32>,
}

impl Default for RetryStrategy {
    fn default() -> Self {
        RetryStrategy {
            backoff_limit_count: Some(DEFAULT_BACKOFF_LIMIT_COUNT),
            backoff_base_seconds: Some(DEFAULT_BACKOFF_BASE_SECONDS),
            backoff_max_seconds: Some(DEFAULT_BACKOFF_MAX_SECONDS),
        }
    }
}

/// Updates of the Workload's pod sets once its request is provisioned.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodSetUpdates {
    /// nodeSelector entries whose values come from the request's `provisioningClassDetails`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(max = 8),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["key"])
    )]
    pub node_selector: Vec<NodeSelectorUpdate>,
}

/// One nodeSelector entry set from a detail of the provisioned request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelectorUpdate {
    /// The nodeSelector key.
    #[schemars(length(min = 1, max = 317), regex(pattern = QUALIFIED_NAME))]
    pub key: String,
    /// The key of `status.provisioningClassDetails` whose value is used.
    #[schemars(length(min = 1, max = 32768))]
    pub value_from_provisioning_class_detail: String,
}

/// Which pod sets are merged into one pod set of the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum PodSetMergePolicy {
    /// Pod sets whose pod templates are equal.
    IdenticalPodTemplates,
    /// Pod sets whose templates ask the scheduler for the same things: containers' requests,
    /// pod resources, nodeSelector, tolerations, affinity and resource claims.
    IdenticalWorkloadSchedulingRequirements,
}

impl ProvisioningRequestConfigSpec {
    /// The retry strategy with Kueue's defaults filled in.
    pub fn retry(&self) -> Retry {
        let strategy = self.retry_strategy.clone().unwrap_or_default();
        Retry {
            limit_count: strategy
                .backoff_limit_count
                .unwrap_or(DEFAULT_BACKOFF_LIMIT_COUNT),
            base_seconds: strategy
                .backoff_base_seconds
                .unwrap_or(DEFAULT_BACKOFF_BASE_SECONDS),
            max_seconds: strategy
                .backoff_max_seconds
                .unwrap_or(DEFAULT_BACKOFF_MAX_SECONDS),
        }
    }
}

/// A retry strategy, every field set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retry {
    pub limit_count: i32,
    pub base_seconds: i32,
    pub max_seconds: i32,
}
