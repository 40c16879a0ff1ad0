//! ResourceFlavor: a kind of node (labels, taints) that quota is accounted against.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Taint, Toleration};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{DNS1123_SUBDOMAIN, optional_spec, toleration_rules};

/// The desired state of a ResourceFlavor.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kueue.x-k8s.io",
    version = "v1beta2",
    kind = "ResourceFlavor",
    plural = "resourceflavors",
    shortname = "flavor",
    shortname = "flavors",
    shortname = "rf",
    derive = "PartialEq",
    doc = "ResourceFlavor describes a kind of node that quota is accounted against."
)]
#[serde(rename_all = "camelCase", remote = "Self")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "!has(self.topologyName) || (has(self.nodeLabels) && size(self.nodeLabels) >= 1)",
        "message": super::rule_messages::TOPOLOGY_NEEDS_NODE_LABELS
    },
    {
        "rule": "!has(oldSelf.topologyName) || (has(self.topologyName) && self.topologyName == oldSelf.topologyName)",
        "message": "topologyName is immutable when topologyName is set"
    }
]))]
pub struct ResourceFlavorSpec {
    /// Labels of the nodes of this flavor; injected into the pods' nodeSelector at admission.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 8, "x-kubernetes-map-type" = "atomic"))]
    pub node_labels: BTreeMap<String, String>,
    /// Taints of the nodes of this flavor that pods must tolerate to get it; unique per key and
    /// effect.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(max = 8),
        extend(
            "x-kubernetes-list-type" = "map",
            "x-kubernetes-list-map-keys" = ["key", "effect"],
            "x-kubernetes-validations" = [{
                "rule": "self.all(x, x.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])",
                "message": "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'"
            }]
        )
    )]
    pub node_taints: Vec<Taint>,
    /// Tolerations added to pods admitted with this flavor.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(max = 8),
        extend("x-kubernetes-list-type" = "atomic"),
        transform = toleration_rules
    )]
    pub tolerations: Vec<Toleration>,
    /// The Topology of this flavor's nodes; makes it a topology-aware flavor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 253), regex(pattern = DNS1123_SUBDOMAIN))]
    pub topology_name: Option<String>,
}

optional_spec!(ResourceFlavorSpec);
