//! The cluster autoscaler's ProvisioningRequest (`autoscaling.x-k8s.io/v1`), as the
//! provisioning admission check writes and reads it. Its CRD is the autoscaler's, not kuota's:
//! the type has no schema and is not among the CRDs kuota serves.

use std::collections::BTreeMap;

use kube::CustomResource;
use serde::{Deserialize, Serialize};

use super::condition::Condition;

/// A request for capacity for a group of pods.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[kube(
    group = "autoscaling.x-k8s.io",
    version = "v1",
    kind = "ProvisioningRequest",
    plural = "provisioningrequests",
    namespaced,
    status = "ProvisioningRequestStatus",
    derive = "PartialEq",
    schema = "disabled"
)]
#[serde(rename_all = "camelCase")]
pub struct ProvisioningRequestSpec {
    /// The pods to find capacity for, each group described by a PodTemplate.
    #[serde(default)]
    pub pod_sets: Vec<ProvisioningPodSet>,
    /// How the capacity is provisioned (a class of the autoscaler's).
    #[serde(default)]
    pub provisioning_class_name: String,
    /// The class's parameters.
    #[serde(default, deserialize_with = "map_or_null")]
    pub parameters: BTreeMap<String, String>,
}

/// A group of identical pods of a request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProvisioningPodSet {
    /// The PodTemplate describing the pods, in the request's namespace.
    pub pod_template_ref: PodTemplateReference,
    /// How many pods.
    pub count: i32,
}

/// A PodTemplate named in the request's namespace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodTemplateReference {
    #[serde(default)]
    pub name: String,
}

/// What the autoscaler reports on a request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProvisioningRequestStatus {
    /// Accepted, Provisioned, Failed, BookingExpired, CapacityRevoked.
    #[serde(default, deserialize_with = "list_or_null")]
    pub conditions: Vec<Condition>,
    /// Details of the provisioned capacity, by key.
    #[serde(default, deserialize_with = "map_or_null")]
    pub provisioning_class_details: BTreeMap<String, String>,
}

/// The autoscaler's Go types write an empty list as `null`.
fn list_or_null<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<Condition>, D::Error> {
    Ok(Option::<Vec<Condition>>::deserialize(deserializer)?.unwrap_or_default())
}

/// The autoscaler's Go types write an empty map as `null`.
fn map_or_null<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, String>, D::Error> {
    Ok(Option::<BTreeMap<String, String>>::deserialize(deserializer)?.unwrap_or_default())
}
