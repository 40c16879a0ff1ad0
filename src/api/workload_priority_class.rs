//! WorkloadPriorityClass: a named priority for Workloads, independent of pod priority.
//!
//! Unlike the other kinds it has no `spec`: `value` and `description` sit at the top level.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The fields of a WorkloadPriorityClass, flattened onto the object.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kueue.x-k8s.io",
    version = "v1beta2",
    kind = "WorkloadPriorityClass",
    plural = "workloadpriorityclasses",
    shortname = "wpc",
    no_spec,
    derive = "PartialEq",
    doc = "WorkloadPriorityClass gives Workloads that name it a priority value.",
    printcolumn = r#"{"name": "Value", "type": "integer", "jsonPath": ".value", "description": "Value of workloadPriorityClass's Priority"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadPriorityClassFields {
    /// The priority of Workloads that use this class.
    pub value: i32,
    /// Free text for users.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 2048))]
    pub description: Option<String>,
}
