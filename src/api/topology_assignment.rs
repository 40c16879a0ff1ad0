//! The compact `v1beta2` topology assignment written into
//! `status.admission.podSetAssignments[].topologyAssignment`.
//!
//! The whole domain list is the concatenation of all slices, in order. Domain `i` of a slice has, at
//! level `j`, either the slice's universal value or `prefix + roots[i] + suffix`, and holds
//! `podCounts` pods.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where the pods of one pod set go: domains described level by level.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": "self.slices.all(s, size(s.valuesPerLevel) == size(self.levels))",
    "message": "every slice must have one entry in valuesPerLevel per level"
}]))]
pub struct TopologyAssignment {
    /// Node-label keys, highest level first. Only `kubernetes.io/hostname` when that is the lowest
    /// level of the Topology.
    #[schemars(
        length(min = 1, max = 16),
        inner(length(max = 317)),
        extend("x-kubernetes-list-type" = "atomic")
    )]
    pub levels: Vec<String>,
    /// Groups of domains; an empty assignment is written as `[]`.
    #[schemars(length(max = 1000), extend("x-kubernetes-list-type" = "atomic"))]
    pub slices: Vec<TopologyAssignmentSlice>,
}

/// A run of domains encoded together.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "self.valuesPerLevel.all(v, !has(v.individual) || size(v.individual.roots) == self.domainCount)",
        "message": "individual.roots must have domainCount entries"
    },
    {
        "rule": "!has(self.podCounts.individual) || size(self.podCounts.individual) == self.domainCount",
        "message": "podCounts.individual must have domainCount entries"
    }
]))]
pub struct TopologyAssignmentSlice {
    /// Number of domains in this slice.
    #[schemars(range(min = 1))]
    pub domain_count: i32,
    /// One entry per level of the assignment.
    #[schemars(length(min = 1, max = 16), extend("x-kubernetes-list-type" = "atomic"))]
    pub values_per_level: Vec<TopologyAssignmentSliceLevelValues>,
    /// Pods per domain.
    pub pod_counts: TopologyAssignmentSlicePodCounts,
}

/// The values of one level across the domains of a slice: exactly one of the two is set.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": "has(self.universal) != has(self.individual)",
    "message": "exactly one of universal and individual must be set"
}]))]
pub struct TopologyAssignmentSliceLevelValues {
    /// Every domain of the slice has this value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 63))]
    pub universal: Option<String>,
    /// Each domain has its own value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub individual: Option<TopologyAssignmentSliceLevelIndividualValues>,
}

/// Per-domain values, with the prefix and suffix they share factored out.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TopologyAssignmentSliceLevelIndividualValues {
    /// Shared prefix; absent or non-empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 63))]
    pub prefix: Option<String>,
    /// Shared suffix; absent or non-empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 63))]
    pub suffix: Option<String>,
    /// What remains of each domain's value, one per domain.
    #[schemars(
        length(min = 1, max = 100000),
        inner(length(max = 63)),
        extend("x-kubernetes-list-type" = "atomic")
    )]
    pub roots: Vec<String>,
}

/// Pod counts of a slice's domains: exactly one of the two is set.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": "has(self.universal) != has(self.individual)",
    "message": "exactly one of universal and individual must be set"
}]))]
pub struct TopologyAssignmentSlicePodCounts {
    /// Every domain holds this many pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub universal: Option<i32>,
    /// Pods per domain, one per domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 1, max = 100000),
        inner(range(min = 1)),
        extend("x-kubernetes-list-type" = "atomic")
    )]
    pub individual: Option<Vec<i32>>,
}

impl TopologyAssignment {
    /// Drops the spare capacity a decoder leaves in each list (see
    /// [`super::Workload::shrink_to_fit`]).
    pub fn shrink_to_fit(&mut self) {
        self.levels.shrink_to_fit();
        self.slices.shrink_to_fit();
        for slice in &mut self.slices {
            slice.values_per_level.shrink_to_fit();
            for level in &mut slice.values_per_level {
                if let Some(individual) = &mut level.individual {
                    individual.roots.shrink_to_fit();
                }
            }
            if let Some(counts) = &mut slice.pod_counts.individual {
                counts.shrink_to_fit();
            }
        }
    }
}
