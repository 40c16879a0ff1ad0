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
pub struct TopologyAssignment {
    /// Node-label keys, highest level first. Only `kubernetes.io/hostname` when that is the lowest
    /// level of the Topology.
    pub levels: Vec<String>,
    /// Groups of domains; an empty assignment is written as `[]`.
    pub slices: Vec<TopologyAssignmentSlice>,
}

/// A run of domains encoded together.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TopologyAssignmentSlice {
    /// Number of domains in this slice.
    pub domain_count: i32,
    /// One entry per level of the assignment.
    pub values_per_level: Vec<TopologyAssignmentSliceLevelValues>,
    /// Pods per domain.
    pub pod_counts: TopologyAssignmentSlicePodCounts,
}

/// The values of one level across the domains of a slice: exactly one of the two is set.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TopologyAssignmentSliceLevelValues {
    /// Every domain of the slice has this value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
    pub prefix: Option<String>,
    /// Shared suffix; absent or non-empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suffix: Option<String>,
    /// What remains of each domain's value, one per domain.
    pub roots: Vec<String>,
}

/// Pod counts of a slice's domains: exactly one of the two is set.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TopologyAssignmentSlicePodCounts {
    /// Every domain holds this many pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub universal: Option<i32>,
    /// Pods per domain, one per domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub individual: Option<Vec<i32>>,
}
