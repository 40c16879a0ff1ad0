//! Topology: the hierarchy of node labels (block, rack, host...) used by topology-aware scheduling.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The desired state of a Topology.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kueue.x-k8s.io",
    version = "v1beta2",
    kind = "Topology",
    plural = "topologies",
    shortname = "topo",
    derive = "PartialEq",
    doc = "Topology names the node labels that form the levels of a datacenter hierarchy."
)]
#[serde(rename_all = "camelCase")]
pub struct TopologySpec {
    /// Levels from the coarsest (index 0) to the finest.
    #[schemars(
        length(min = 1, max = 16),
        extend("x-kubernetes-list-type" = "atomic", "x-kubernetes-validations" = [
            {
                "rule": "size(self.filter(i, size(self.filter(j, j.nodeLabel == i.nodeLabel)) > 1)) == 0",
                "message": "must be unique"
            },
            {
                "rule": "size(self.filter(i, i.nodeLabel == 'kubernetes.io/hostname')) == 0 || self[size(self) - 1].nodeLabel == 'kubernetes.io/hostname'",
                "message": "the kubernetes.io/hostname label can only be used at the lowest level of topology"
            },
            {
                "rule": "self == oldSelf || (size(oldSelf) > 0 && oldSelf[size(oldSelf) - 1].nodeLabel == 'kubernetes.io/hostname' && self[size(self) - 1].nodeLabel == 'kubernetes.io/hostname')",
                "message": "levels may change only when kubernetes.io/hostname is the lowest level before and after the change"
            }
        ])
    )]
    pub levels: Vec<TopologyLevel>,
}

/// One level of a Topology.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TopologyLevel {
    /// The node label key whose values name the domains of this level.
    #[schemars(
        length(min = 1, max = 316),
        regex(
            pattern = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
        )
    )]
    pub node_label: String,
}
