//! Quota types shared by ClusterQueue and Cohort, and the usage they report.

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::DNS1123_SUBDOMAIN;

/// Flavors that together supply quota for a set of resources.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": "self.flavors.all(x, size(x.resources) == size(self.coveredResources))",
    "message": super::rule_messages::RESOURCES_PER_FLAVOR
}]))]
pub struct ResourceGroup {
    /// Resources whose quota this group's flavors supply.
    #[schemars(length(min = 1, max = 64), extend("x-kubernetes-list-type" = "atomic"))]
    pub covered_resources: Vec<String>,
    /// Flavors in preference order; this is the order in which flavors are tried.
    #[schemars(
        length(min = 1, max = 64),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
    )]
    pub flavors: Vec<FlavorQuotas>,
}

/// The quota one flavor supplies, one entry per covered resource in the same order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FlavorQuotas {
    /// The ResourceFlavor.
    #[schemars(length(max = 253), regex(pattern = DNS1123_SUBDOMAIN))]
    pub name: String,
    /// Quota per resource.
    #[schemars(
        length(min = 1, max = 64),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
    )]
    pub resources: Vec<ResourceQuota>,
}

/// Quota of one resource in one flavor.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceQuota {
    /// Resource name, e.g. `cpu`.
    pub name: String,
    /// Quota this node contributes to, or is guaranteed from, its cohort.
    pub nominal_quota: Quantity,
    /// Most this node may borrow beyond its own quota; absent means unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub borrowing_limit: Option<Quantity>,
    /// Most of this node's quota its parent may lend to others; absent means all of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lending_limit: Option<Quantity>,
}

/// Usage of one flavor reported by a ClusterQueue.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FlavorUsage {
    /// The ResourceFlavor.
    #[schemars(length(max = 253), regex(pattern = DNS1123_SUBDOMAIN))]
    pub name: String,
    /// Usage per resource.
    #[schemars(
        length(max = 64),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
    )]
    pub resources: Vec<ResourceUsage>,
}

/// Usage of one resource in one flavor of a ClusterQueue.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceUsage {
    /// Resource name.
    pub name: String,
    /// Total quantity in use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<Quantity>,
    /// The part of `total` above the nominal quota.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub borrowed: Option<Quantity>,
}

/// Usage of one flavor reported by a LocalQueue.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocalQueueFlavorUsage {
    /// The ResourceFlavor.
    #[schemars(length(max = 253), regex(pattern = DNS1123_SUBDOMAIN))]
    pub name: String,
    /// Usage per resource.
    #[schemars(
        length(max = 64),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
    )]
    pub resources: Vec<LocalQueueResourceUsage>,
}

/// Usage of one resource in one flavor of a LocalQueue.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocalQueueResourceUsage {
    /// Resource name.
    pub name: String,
    /// Total quantity in use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<Quantity>,
}
