//! AdmissionCheck: an extra gate, run by some controller, that a Workload must pass to be Admitted.

use super::condition::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{DNS1123_LABEL, DNS1123_SUBDOMAIN};

/// The desired state of an AdmissionCheck.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kueue.x-k8s.io",
    version = "v1beta2",
    kind = "AdmissionCheck",
    plural = "admissionchecks",
    shortname = "ac",
    status = "AdmissionCheckStatus",
    derive = "PartialEq",
    doc = "AdmissionCheck is a gate, run by its controller, that a Workload must pass to be Admitted."
)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionCheckSpec {
    /// The controller that runs this check; immutable.
    #[schemars(
        length(min = 1, max = 253),
        extend("x-kubernetes-validations" = [{"rule": "self == oldSelf", "message": "field is immutable"}])
    )]
    pub controller_name: String,
    /// A configuration object for the controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<AdmissionCheckParametersReference>,
}

/// A reference to an AdmissionCheck's configuration object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionCheckParametersReference {
    /// API group of the object.
    #[schemars(length(min = 1, max = 253), regex(pattern = DNS1123_SUBDOMAIN))]
    pub api_group: String,
    /// Kind of the object.
    #[schemars(
        length(min = 1, max = 63),
        regex(pattern = r"^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$")
    )]
    pub kind: String,
    /// Name of the object.
    #[schemars(length(min = 1, max = 63), regex(pattern = DNS1123_LABEL))]
    pub name: String,
}

/// The observed state of an AdmissionCheck.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionCheckStatus {
    /// `Active`, set by the owning controller.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(max = 16),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"])
    )]
    pub conditions: Vec<Condition>,
}
