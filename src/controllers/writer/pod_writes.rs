//! The pod integration's writes to pods: admitted pods started, pods stopped (marked
//! `TerminationTarget`, then deleted), surplus pods deleted, and the `kueue.x-k8s.io/managed`
//! finalizer dropped. Each is fenced by the resource version (or, for a delete, the UID) the
//! decision was made on. Its Workload writes are the Job integration's.

use k8s_openapi::api::core::v1::{Pod, PodCondition};
use kube::api::{DeleteParams, Patch, PatchParams, Preconditions};
use kube::{Api, ResourceExt};
use serde_json::json;

use super::{WriteError, Writer};
use crate::api::keys::{field_managers, finalizers};

fn label(pod: &Pod) -> String {
    format!(
        "Pod {}/{}",
        pod.namespace().unwrap_or_default(),
        pod.name_any()
    )
}

fn api(writer: &Writer, pod: &Pod) -> Api<Pod> {
    Api::namespaced(writer.client.clone(), &pod.namespace().unwrap_or_default())
}

fn params() -> PatchParams {
    PatchParams {
        field_manager: Some(field_managers::KUEUE.to_owned()),
        ..PatchParams::default()
    }
}

impl Writer {
    /// Writes a started pod: its labels and annotations (keys only added), nodeSelector and
    /// tolerations with the pod set info merged in (a merge patch: maps merge, the tolerations
    /// list is replaced by the old one plus the new), and its scheduling gates without the
    /// admission gate, in one patch at the version it was decided on.
    pub async fn start_pod(&self, started: &Pod) -> Result<Pod, WriteError> {
        let spec = started.spec.clone().unwrap_or_default();
        let mut metadata = json!({"resourceVersion": started.resource_version()});
        if let Some(labels) = &started.metadata.labels {
            metadata["labels"] = json!(labels);
        }
        if let Some(annotations) = &started.metadata.annotations {
            metadata["annotations"] = json!(annotations);
        }
        // No gate left is written as null, which removes the list.
        let mut pod_spec = json!({"schedulingGates": spec.scheduling_gates});
        if let Some(selector) = &spec.node_selector {
            pod_spec["nodeSelector"] = json!(selector);
        }
        if let Some(tolerations) = &spec.tolerations {
            pod_spec["tolerations"] = json!(tolerations);
        }
        let body = json!({"metadata": metadata, "spec": pod_spec});
        self.send(&label(started), || async {
            api(self, started)
                .patch(&started.name_any(), &params(), &Patch::Merge(&body))
                .await
        })
        .await
    }

    /// Writes a pod's labels and annotations (keys only added or changed) and its scheduling
    /// gates as given, in one patch at the version it was decided on.
    pub async fn label_pod(&self, labelled: &Pod) -> Result<Pod, WriteError> {
        let gates = labelled
            .spec
            .as_ref()
            .and_then(|s| s.scheduling_gates.clone());
        let body = json!({
            "metadata": {
                "resourceVersion": labelled.resource_version(),
                "labels": labelled.metadata.labels,
                "annotations": labelled.metadata.annotations,
            },
            "spec": {"schedulingGates": gates},
        });
        self.send(&label(labelled), || async {
            api(self, labelled)
                .patch(&labelled.name_any(), &params(), &Patch::Merge(&body))
                .await
        })
        .await
    }

    /// Drops the pod's `kueue.x-k8s.io/managed` finalizer, keeping any other.
    pub async fn finalize_pod(&self, pod: &Pod) -> Result<Pod, WriteError> {
        let keep: Vec<&String> = pod
            .finalizers()
            .iter()
            .filter(|f| *f != finalizers::MANAGED)
            .collect();
        let body = json!({
            "metadata": {"resourceVersion": pod.resource_version(), "finalizers": keep},
        });
        self.send(&label(pod), || async {
            api(self, pod)
                .patch(&pod.name_any(), &params(), &Patch::Merge(&body))
                .await
        })
        .await
    }

    /// Kueue's stop of a pod: the `TerminationTarget` condition applied to its status (field
    /// manager `kueue`), then the pod deleted, only the one read. Returns the pod as the delete
    /// left it (still there while a finalizer holds it), `None` once it is gone.
    pub async fn stop_pod(
        &self,
        pod: &Pod,
        condition: &PodCondition,
    ) -> Result<Option<Pod>, WriteError> {
        let api = api(self, pod);
        let body = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": pod.name_any(), "namespace": pod.namespace(), "uid": pod.uid()},
            "status": {"conditions": [condition]},
        });
        let apply = PatchParams::apply(field_managers::KUEUE).force();
        self.send(&label(pod), || async {
            api.patch_status(&pod.name_any(), &apply, &Patch::Apply(&body))
                .await
        })
        .await?;
        self.delete_pod(pod).await
    }

    /// Deletes the pod read (by UID): a pod the pod integration stops or sheds, or one the Job
    /// integration finds left on a host a failed-node replacement dropped (its Job recreates it).
    /// Returns the pod as the delete left it, `None` once gone.
    pub async fn delete_pod(&self, pod: &Pod) -> Result<Option<Pod>, WriteError> {
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: pod.uid(),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        self.send(&label(pod), || async {
            api(self, pod).delete(&pod.name_any(), &params).await
        })
        .await
        .map(|deleted| deleted.left())
    }
}
