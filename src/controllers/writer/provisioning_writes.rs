//! The provisioning admission check's writes: its entries in a Workload's
//! `status.admissionChecks`, an AdmissionCheck's `Active` condition, and the ProvisioningRequests
//! and PodTemplates it creates and deletes. Everything is written as field manager
//! `kueue.x-k8s.io/provisioning-request`, as Kueue's controller.
//!
//! The check entries are a JSON merge patch of the whole list, fenced by the resource version
//! read: the list holds every entry as that version had it, only this controller's changed, so
//! an entry another writer (the admission's server-side apply) changed since makes the patch
//! fail instead of being undone.

use k8s_openapi::api::core::v1::PodTemplate;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use kube::{Api, ResourceExt};
use serde_json::json;

use super::{WriteError, Writer};
use crate::api::keys::provisioning::CONTROLLER_NAME;
use crate::api::workload_status::AdmissionCheckState;
use crate::api::{AdmissionCheck, Condition, ProvisioningRequest, Workload};

fn label<K: ResourceExt>(kind: &str, object: &K) -> String {
    match object.namespace() {
        Some(namespace) => format!("{kind} {namespace}/{}", object.name_any()),
        None => format!("{kind} {}", object.name_any()),
    }
}

fn patch_params() -> PatchParams {
    PatchParams {
        field_manager: Some(CONTROLLER_NAME.to_owned()),
        ..PatchParams::default()
    }
}

fn post_params() -> PostParams {
    PostParams {
        field_manager: Some(CONTROLLER_NAME.to_owned()),
        ..PostParams::default()
    }
}

impl Writer {
    /// Replaces the Workload's `status.admissionChecks` by `entries`, fenced by the resource
    /// version read. Returns the Workload as stored.
    pub async fn admission_check_entries(
        &self,
        read: &Workload,
        entries: &[AdmissionCheckState],
    ) -> Result<Workload, WriteError> {
        let api: Api<Workload> =
            Api::namespaced(self.client.clone(), &read.namespace().unwrap_or_default());
        let body = json!({
            "metadata": {"resourceVersion": read.resource_version()},
            "status": {"admissionChecks": entries},
        });
        self.send(&label("Workload", read), || async {
            api.patch_status(&read.name_any(), &patch_params(), &Patch::Merge(&body))
                .await
        })
        .await
    }

    /// Sets an AdmissionCheck's conditions to `conditions`, fenced by the resource version read.
    pub async fn admission_check_conditions(
        &self,
        read: &AdmissionCheck,
        conditions: &[Condition],
    ) -> Result<AdmissionCheck, WriteError> {
        let api: Api<AdmissionCheck> = Api::all(self.client.clone());
        let body = json!({
            "metadata": {"resourceVersion": read.resource_version()},
            "status": {"conditions": conditions},
        });
        self.send(&label("AdmissionCheck", read), || async {
            api.patch_status(&read.name_any(), &patch_params(), &Patch::Merge(&body))
                .await
        })
        .await
    }

    /// Creates a PodTemplate; `None` when one of its name exists already (made by an earlier
    /// try whose request was not created).
    pub async fn create_pod_template(
        &self,
        template: &PodTemplate,
    ) -> Result<Option<PodTemplate>, WriteError> {
        let api: Api<PodTemplate> = Api::namespaced(
            self.client.clone(),
            &template.namespace().unwrap_or_default(),
        );
        let created = self
            .send(&label("PodTemplate", template), || async {
                api.create(&post_params(), template).await
            })
            .await;
        match created {
            Ok(created) => Ok(Some(created)),
            Err(WriteError::Conflict(_)) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Makes `owner` (the request using it) the only owner of a PodTemplate, so it goes with the
    /// request rather than with the Workload.
    pub async fn own_pod_template(
        &self,
        namespace: &str,
        name: &str,
        owner: &OwnerReference,
    ) -> Result<PodTemplate, WriteError> {
        let api: Api<PodTemplate> = Api::namespaced(self.client.clone(), namespace);
        let body = json!({"metadata": {"ownerReferences": [owner]}});
        self.send(&format!("PodTemplate {namespace}/{name}"), || async {
            api.patch(name, &patch_params(), &Patch::Merge(&body)).await
        })
        .await
    }

    /// Creates a ProvisioningRequest.
    pub async fn create_provisioning_request(
        &self,
        request: &ProvisioningRequest,
    ) -> Result<ProvisioningRequest, WriteError> {
        let api: Api<ProvisioningRequest> = Api::namespaced(
            self.client.clone(),
            &request.namespace().unwrap_or_default(),
        );
        self.send(&label("ProvisioningRequest", request), || async {
            api.create(&post_params(), request).await
        })
        .await
    }

    /// Deletes the ProvisioningRequest read (by UID), its PodTemplates with it; one already gone
    /// counts as deleted.
    pub async fn delete_provisioning_request(
        &self,
        request: &ProvisioningRequest,
    ) -> Result<(), WriteError> {
        let api: Api<ProvisioningRequest> = Api::namespaced(
            self.client.clone(),
            &request.namespace().unwrap_or_default(),
        );
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: request.uid(),
                resource_version: None,
            }),
            ..DeleteParams::background()
        };
        let deleted = self
            .send(&label("ProvisioningRequest", request), || async {
                api.delete(&request.name_any(), &params).await
            })
            .await;
        match deleted {
            Ok(_) | Err(WriteError::NotFound(_)) => Ok(()),
            Err(error) => Err(error),
        }
    }
}
