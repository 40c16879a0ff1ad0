//! The ProvisioningRequest of one attempt: its class and parameters from the config (and the
//! Workload's `provreq.kueue.x-k8s.io/` annotations), its pod sets naming their PodTemplates, the
//! Workload as its controlling owner.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::ResourceExt;

use super::meta::{managed_labels, owner_reference};
use super::names::pod_template_name;
use super::templates::MergedPodSet;
use crate::api::keys::provisioning::PARAMETER_ANNOTATION_PREFIX;
use crate::api::provisioning_request::{
    PodTemplateReference, ProvisioningPodSet, ProvisioningRequestSpec,
};
use crate::api::provisioning_request_config::ProvisioningRequestConfigSpec;
use crate::api::{ProvisioningRequest, Workload};

/// The request named `name` for `workload`, covering `pod_sets`.
pub fn new_request(
    workload: &Workload,
    name: &str,
    config: &ProvisioningRequestConfigSpec,
    pod_sets: &[MergedPodSet<'_>],
) -> ProvisioningRequest {
    let mut parameters = config.parameters.clone();
    for (key, value) in workload.annotations() {
        if let Some(parameter) = key.strip_prefix(PARAMETER_ANNOTATION_PREFIX) {
            parameters.insert(parameter.to_owned(), value.clone());
        }
    }
    let pod_sets = pod_sets
        .iter()
        .map(|merged| ProvisioningPodSet {
            pod_template_ref: PodTemplateReference {
                name: pod_template_name(name, &merged.pod_set.name),
            },
            count: merged.count,
        })
        .collect();
    ProvisioningRequest {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: workload.metadata.namespace.clone(),
            labels: Some(managed_labels()),
            owner_references: Some(vec![owner_reference(workload)]),
            ..ObjectMeta::default()
        },
        spec: ProvisioningRequestSpec {
            pod_sets,
            provisioning_class_name: config.provisioning_class_name.clone(),
            parameters,
        },
        status: None,
    }
}

/// Whether `request` still asks what `config` says: the same class and every parameter of the
/// config at its value (Kueue's `provReqSyncedWithConfig`). One that does not is replaced.
pub fn synced_with_config(
    request: &ProvisioningRequest,
    config: &ProvisioningRequestConfigSpec,
) -> bool {
    request.spec.provisioning_class_name == config.provisioning_class_name
        && config
            .parameters
            .iter()
            .all(|(key, value)| request.spec.parameters.get(key) == Some(value))
}

#[cfg(test)]
mod tests;
