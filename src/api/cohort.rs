//! Cohort: a node of the quota tree that pools quota for its ClusterQueues and child Cohorts.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{DNS1123_SUBDOMAIN, FairSharing, FairSharingStatus, optional_spec};
use super::quota::ResourceGroup;

/// The desired state of a Cohort.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kueue.x-k8s.io",
    version = "v1beta2",
    kind = "Cohort",
    plural = "cohorts",
    shortname = "co",
    status = "CohortStatus",
    derive = "PartialEq",
    doc = "Cohort groups ClusterQueues and other Cohorts that share quota."
)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct CohortSpec {
    /// Parent Cohort; absent makes this a root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 253), regex(pattern = DNS1123_SUBDOMAIN))]
    pub parent_name: Option<String>,
    /// Quota pooled at this Cohort on top of what its children bring.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16), extend("x-kubernetes-list-type" = "atomic"))]
    pub resource_groups: Vec<ResourceGroup>,
    /// Weight of this Cohort in fair sharing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fair_sharing: Option<FairSharing>,
}

optional_spec!(CohortSpec);

/// The observed state of a Cohort.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CohortStatus {
    /// Fair-sharing state, written only when fair sharing is enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fair_sharing: Option<FairSharingStatus>,
}
