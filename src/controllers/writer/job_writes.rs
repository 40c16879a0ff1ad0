//! The job integrations' writes: Workloads created, updated, finished and deleted for jobs,
//! jobs of every kind started and stopped, pods released by the topology ungater or deleted off a replaced
//! node. Every write that changes
//! an existing object is fenced by the resource version it was decided on; a create is fenced
//! by the Workload's name, which the Job determines.

use std::collections::BTreeMap;

use crate::api::Condition;
use crate::api::json_patch::{PatchOp, diff};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{
    ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
    Preconditions,
};
use kube::{Api, ResourceExt};
use serde_json::json;

use super::{WriteError, Writer};
use crate::api::Workload;
use crate::api::keys::{API_VERSION, field_managers, finalizers, labels, scheduling_gates};
use crate::api::workload_status::ReclaimablePod;

fn label<K: ResourceExt>(kind: &str, object: &K) -> String {
    format!(
        "{kind} {}/{}",
        object.namespace().unwrap_or_default(),
        object.name_any()
    )
}

fn params(manager: &str) -> PatchParams {
    PatchParams {
        field_manager: Some(manager.to_owned()),
        ..PatchParams::default()
    }
}

impl Writer {
    /// Creates a Job's Workload.
    pub async fn create_workload(&self, workload: &Workload) -> Result<Workload, WriteError> {
        let api: Api<Workload> = Api::namespaced(
            self.client.clone(),
            &workload.namespace().unwrap_or_default(),
        );
        let params = PostParams {
            field_manager: Some(field_managers::JOB_CONTROLLER.to_owned()),
            ..PostParams::default()
        };
        self.send(&label("Workload", workload), || async {
            api.create(&params, workload).await
        })
        .await
    }

    /// Replaces a Workload's spec (its resource version fences the write).
    pub async fn replace_workload(&self, workload: &Workload) -> Result<Workload, WriteError> {
        let api: Api<Workload> = Api::namespaced(
            self.client.clone(),
            &workload.namespace().unwrap_or_default(),
        );
        let params = PostParams {
            field_manager: Some(field_managers::JOB_CONTROLLER.to_owned()),
            ..PostParams::default()
        };
        self.send(&label("Workload", workload), || async {
            api.replace(&workload.name_any(), &params, workload).await
        })
        .await
    }

    /// The Workloads job `job_uid` controls in `namespace`, by name with their resource versions,
    /// read from the API server now rather than from a watch: those labelled with its UID, and
    /// each of `also` that still exists. A fence for a write decided on them, not a write.
    pub async fn controlled_workloads<'a>(
        &self,
        namespace: &str,
        job_uid: &str,
        also: impl Iterator<Item = &'a String>,
    ) -> Result<BTreeMap<String, String>, WriteError> {
        let api: Api<Workload> = Api::namespaced(self.client.clone(), namespace);
        let object = format!("the Workloads of job {job_uid} in {namespace}");
        let params = ListParams::default().labels(&format!("{}={job_uid}", labels::JOB_UID));
        let listed = self.send(&object, || api.list(&params)).await?;
        let controls = |w: &Workload| {
            w.owner_references()
                .iter()
                .any(|o| o.controller == Some(true) && o.uid == job_uid)
        };
        let mut read: BTreeMap<String, String> = listed
            .items
            .iter()
            .filter(|w| controls(w))
            .map(|w| (w.name_any(), w.resource_version().unwrap_or_default()))
            .collect();
        for name in also {
            if read.contains_key(name) {
                continue;
            }
            match self.send(&object, || api.get_opt(name)).await? {
                Some(w) if controls(&w) => {
                    read.insert(name.clone(), w.resource_version().unwrap_or_default());
                }
                _ => {}
            }
        }
        Ok(read)
    }

    /// Deletes a Workload, only the one read (by UID and resource version).
    pub async fn delete_workload(&self, workload: &Workload) -> Result<(), WriteError> {
        let api: Api<Workload> = Api::namespaced(
            self.client.clone(),
            &workload.namespace().unwrap_or_default(),
        );
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: workload.uid(),
                resource_version: workload.resource_version(),
            }),
            ..DeleteParams::background()
        };
        self.send(&label("Workload", workload), || async {
            api.delete(&workload.name_any(), &params).await
        })
        .await
        .map(|_| ())
    }

    /// Applies one condition to a Workload's status as Kueue's job controller does: server-side
    /// apply under a field manager of its own per condition type, so it neither takes nor drops
    /// the conditions the admission owns.
    pub async fn workload_condition(
        &self,
        read: &Workload,
        condition: &Condition,
    ) -> Result<Workload, WriteError> {
        let manager = format!("{}-{}", field_managers::JOB_CONTROLLER, condition.type_);
        self.apply_workload_status(read, &manager, json!({"conditions": [condition]}))
            .await
    }

    /// Applies the Workload's `status.reclaimablePods` as Kueue's job reconciler does, under a
    /// field manager of its own.
    pub async fn workload_reclaimable_pods(
        &self,
        read: &Workload,
        pods: &[ReclaimablePod],
    ) -> Result<Workload, WriteError> {
        let status = json!({"reclaimablePods": pods});
        self.apply_workload_status(read, field_managers::RECLAIMABLE_PODS, status)
            .await
    }

    /// Applies `status` (the fields `manager` owns) to the Workload by server-side apply, fenced
    /// by the resource version read.
    async fn apply_workload_status(
        &self,
        read: &Workload,
        manager: &str,
        status: serde_json::Value,
    ) -> Result<Workload, WriteError> {
        let api: Api<Workload> =
            Api::namespaced(self.client.clone(), &read.namespace().unwrap_or_default());
        let body = json!({
            "apiVersion": API_VERSION,
            "kind": "Workload",
            "metadata": {
                "name": read.name_any(),
                "namespace": read.namespace(),
                "resourceVersion": read.resource_version(),
            },
            "status": status,
        });
        let params = PatchParams::apply(manager).force();
        self.send(&label("Workload", read), || async {
            api.patch_status(&read.name_any(), &params, &Patch::Apply(&body))
                .await
        })
        .await
    }

    /// Drops the Workload's `resource-in-use` finalizer, keeping any other.
    pub async fn release_workload(&self, read: &Workload) -> Result<Workload, WriteError> {
        let api: Api<Workload> =
            Api::namespaced(self.client.clone(), &read.namespace().unwrap_or_default());
        let keep: Vec<&String> = read
            .finalizers()
            .iter()
            .filter(|f| *f != finalizers::RESOURCE_IN_USE)
            .collect();
        let body = json!({
            "metadata": {"resourceVersion": read.resource_version(), "finalizers": keep},
        });
        self.send(&label("Workload", read), || async {
            api.patch(
                &read.name_any(),
                &params(field_managers::JOB_CONTROLLER),
                &Patch::Merge(&body),
            )
            .await
        })
        .await
    }

    /// Changes the Job `read` into `job` (start, suspension, restore) by a JSONPatch of what
    /// differs, fenced by the resource version read: fields the typed Job does not know (a newer
    /// API server's) are on neither side, so the patch keeps them, where a PUT would drop them.
    pub async fn patch_job(&self, read: &Job, job: &Job) -> Result<Job, WriteError> {
        let api: Api<Job> =
            Api::namespaced(self.client.clone(), &job.namespace().unwrap_or_default());
        let params = PatchParams {
            field_manager: Some(field_managers::JOB_CONTROLLER.to_owned()),
            ..PatchParams::default()
        };
        let patch = job_patch(read, job)?;
        self.send(&label("Job", job), || async {
            api.patch(&job.name_any(), &params, &Patch::Json::<()>(patch.clone()))
                .await
        })
        .await
    }

    /// Replaces a job of a framework kind (start, suspend or restore), as `resource` serves it.
    pub async fn replace_object(
        &self,
        job: &DynamicObject,
        resource: &ApiResource,
    ) -> Result<DynamicObject, WriteError> {
        let api: Api<DynamicObject> = Api::namespaced_with(
            self.client.clone(),
            &job.namespace().unwrap_or_default(),
            resource,
        );
        let params = PostParams {
            field_manager: Some(field_managers::JOB_CONTROLLER.to_owned()),
            ..PostParams::default()
        };
        self.send(&label(&resource.kind, job), || async {
            api.replace(&job.name_any(), &params, job).await
        })
        .await
    }

    /// Deletes the Job `namespace/name` with this UID, its pods and Workload in the background.
    pub async fn delete_job(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
    ) -> Result<(), WriteError> {
        let api: Api<Job> = Api::namespaced(self.client.clone(), namespace);
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: Some(uid.to_owned()),
                resource_version: None,
            }),
            ..DeleteParams::background()
        };
        self.send(&format!("Job {namespace}/{name}"), || async {
            api.delete(name, &params).await
        })
        .await
        .map(|_| ())
    }

    /// Clears a suspended Job's `status.startTime`, which Kubernetes requires before its pod
    /// template's scheduling directives may change.
    pub async fn clear_job_start_time(&self, job: &Job) -> Result<Job, WriteError> {
        let api: Api<Job> =
            Api::namespaced(self.client.clone(), &job.namespace().unwrap_or_default());
        let body = json!({
            "metadata": {"resourceVersion": job.resource_version()},
            "status": {"startTime": null},
        });
        self.send(&label("Job", job), || async {
            api.patch_status(
                &job.name_any(),
                &params(field_managers::JOB_CONTROLLER),
                &Patch::Merge(&body),
            )
            .await
        })
        .await
    }

    /// Releases a pod the topology ungater placed: removes the `kueue.x-k8s.io/topology` gate and
    /// adds the domain's nodeSelector in one patch, at the resource version the choice was made
    /// on, so a pod is never released twice nor into a domain chosen from an older view.
    pub async fn ungate_pod(
        &self,
        pod: &Pod,
        node_selector: &BTreeMap<String, String>,
    ) -> Result<Pod, WriteError> {
        let api: Api<Pod> =
            Api::namespaced(self.client.clone(), &pod.namespace().unwrap_or_default());
        let body = json!({
            "metadata": {"resourceVersion": pod.resource_version()},
            "spec": {
                "schedulingGates": [{"name": scheduling_gates::TOPOLOGY, "$patch": "delete"}],
                "nodeSelector": node_selector,
            },
        });
        self.send(&label("Pod", pod), || async {
            api.patch(
                &pod.name_any(),
                &params(field_managers::TOPOLOGY_UNGATER),
                &Patch::Strategic(&body),
            )
            .await
        })
        .await
    }
}

/// The JSONPatch turning `read` into `job`. It sets the resource version read, so the API server
/// refuses it with a conflict if the Job has changed since, as it refuses a stale update.
fn job_patch(read: &Job, job: &Job) -> Result<::json_patch::Patch, WriteError> {
    let encode = |job: &Job| serde_json::to_value(job).map_err(WriteError::Encode);
    let version = read.metadata.resource_version.clone().unwrap_or_default();
    let operations: Vec<PatchOp> = std::iter::once(PatchOp::add(
        "/metadata/resourceVersion",
        serde_json::Value::String(version),
    ))
    .chain(diff(&encode(read)?, &encode(job)?))
    .collect();
    let value = serde_json::to_value(operations).map_err(WriteError::Encode)?;
    serde_json::from_value(value).map_err(WriteError::Encode)
}

#[cfg(test)]
mod tests;
