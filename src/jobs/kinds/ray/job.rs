//! RayJob (`ray.io/rayjob`): the pod sets of its `spec.rayClusterSpec`, then, in `K8sJobMode`, pod
//! set `submitter` of one pod from `spec.submitterPodTemplate`, or KubeRay's default submitter
//! (the head's image, 500m cpu and 200Mi memory requested) when none is given; starting writes
//! that default into the RayJob, as Kueue does. In `SidecarMode` the head counts KubeRay's
//! submitter container. Suspended at `spec.suspend`; finished once `jobDeploymentStatus` is
//! `Complete` or `Failed` (succeeded when `jobStatus` is `SUCCEEDED`); a RayJob on an existing
//! cluster (`spec.clusterSelector`) is left alone.

use k8s_openapi::api::core::v1::{Container, PodTemplateSpec};
use kube::api::DynamicObject;
use serde_json::{Value, json};

use super::spec::{ClusterSpec, fixed_resources, set_bool_at, whole};
use crate::jobs::JobFinished;
use crate::jobs::framework::{JobKind, KindError, KindId, KindPodSet, bool_at, str_at};

static ID: KindId = KindId {
    group: "ray.io",
    version: "v1",
    kind: "RayJob",
    plural: "rayjobs",
    framework: "ray.io/rayjob",
};

/// The submitter Job's pod set.
const SUBMITTER: &str = "submitter";
const SUBMITTER_TEMPLATE: &str = "/spec/submitterPodTemplate";
/// KubeRay's name for the submitter container.
const SUBMITTER_CONTAINER: &str = "ray-job-submitter";

/// The RayJob's rules.
pub struct RayJobKind;

/// The RayJob kind, for the registry.
pub static RAYJOB: RayJobKind = RayJobKind;

fn spec(job: &DynamicObject) -> ClusterSpec<'_> {
    ClusterSpec {
        kind: ID.kind,
        job,
        pointer: "/spec/rayClusterSpec",
    }
}

fn submission_mode(job: &DynamicObject) -> Option<&str> {
    str_at(job, "/spec/submissionMode")
}

fn deployment_status(job: &DynamicObject) -> &str {
    str_at(job, "/status/jobDeploymentStatus").unwrap_or_default()
}

fn has_cluster_selector(job: &DynamicObject) -> bool {
    job.data
        .pointer("/spec/clusterSelector")
        .and_then(Value::as_object)
        .is_some_and(|s| !s.is_empty())
}

/// KubeRay's submitter container resources: 500m cpu and 200Mi memory requested, 1 cpu and 1Gi
/// memory at most.
fn submitter_container(image: Option<&Value>) -> Value {
    let mut container = json!({
        "name": SUBMITTER_CONTAINER,
        "resources": fixed_resources(("500m", "200Mi"), ("1", "1Gi")),
    });
    if let Some(image) = image {
        container["image"] = image.clone();
    }
    container
}

impl JobKind for RayJobKind {
    fn id(&self) -> &'static KindId {
        &ID
    }

    fn pod_sets(&self, job: &DynamicObject) -> Result<Vec<KindPodSet>, KindError> {
        let mut pod_sets = spec(job).pod_sets()?;
        if submission_mode(job) == Some("K8sJobMode") {
            pod_sets.push(whole(
                SUBMITTER.to_owned(),
                SUBMITTER_TEMPLATE.to_owned(),
                1,
            ));
        }
        Ok(pod_sets)
    }

    fn is_suspended(&self, job: &DynamicObject) -> bool {
        bool_at(job, "/spec/suspend").unwrap_or(false)
    }

    fn set_suspended(&self, job: &mut DynamicObject, suspended: bool) -> Result<(), KindError> {
        set_bool_at(ID.kind, job, "/spec", "suspend", suspended)
    }

    fn finished(&self, job: &DynamicObject) -> Option<JobFinished> {
        if !matches!(deployment_status(job), "Complete" | "Failed") {
            return None;
        }
        let succeeded = str_at(job, "/status/jobStatus") == Some("SUCCEEDED");
        Some(JobFinished {
            reason: if succeeded { "Succeeded" } else { "Failed" },
            message: str_at(job, "/status/message")
                .unwrap_or_default()
                .to_owned(),
        })
    }

    fn pods_ready(&self, job: &DynamicObject) -> bool {
        str_at(job, "/status/rayClusterStatus/state") == Some("ready")
    }

    /// Kueue: no pod runs while the deployment status is `Suspended` or new (empty).
    fn is_active(&self, job: &DynamicObject) -> bool {
        !matches!(deployment_status(job), "Suspended" | "")
    }

    fn skip(&self, job: &DynamicObject) -> bool {
        has_cluster_selector(job)
    }

    fn default_template(&self, job: &DynamicObject, pod_set: &KindPodSet) -> Option<Value> {
        (pod_set.template == SUBMITTER_TEMPLATE).then(|| {
            let image = job
                .data
                .pointer("/spec/rayClusterSpec/headGroupSpec/template/spec/containers/0/image");
            json!({"spec": {
                "containers": [submitter_container(image)],
                "restartPolicy": "Never",
            }})
        })
    }

    fn adjust_workload_template(
        &self,
        job: &DynamicObject,
        pod_set: &KindPodSet,
        template: &mut PodTemplateSpec,
    ) -> Result<(), KindError> {
        let spec = spec(job);
        if !spec.is_head(pod_set) {
            return Ok(());
        }
        spec.adjust_head(template)?;
        // KubeRay adds its default submitter to the head pod in SidecarMode, ignoring
        // `submitterPodTemplate`.
        if submission_mode(job) == Some("SidecarMode") {
            template
                .spec
                .get_or_insert_default()
                .containers
                .push(Container {
                    name: SUBMITTER_CONTAINER.to_owned(),
                    resources: Some(fixed_resources(("500m", "200Mi"), ("1", "1Gi"))),
                    ..Default::default()
                });
        }
        Ok(())
    }

    /// Kueue's RayJob webhook: a managed RayJob brings its own cluster, which it shuts down once
    /// it has finished.
    fn validate_managed(&self, job: &DynamicObject) -> Vec<KindError> {
        let invalid = |field: &str, reason: &str| KindError::Invalid {
            kind: ID.kind,
            job: job.metadata.name.clone().unwrap_or_default(),
            field: field.to_owned(),
            reason: reason.to_owned(),
        };
        let has_spec = job
            .data
            .pointer("/spec/rayClusterSpec")
            .is_some_and(|v| !v.is_null());
        match (has_cluster_selector(job), has_spec) {
            (true, true) => {
                return vec![invalid(
                    "spec.clusterSelector",
                    "a kueue managed job should not use an existing cluster",
                )];
            }
            // A RayJob on an existing cluster is not managed.
            (true, false) => return Vec::new(),
            (false, false) => {
                return vec![invalid(
                    "spec.rayClusterSpec",
                    "Required value: rayClusterSpec is required for Kueue-managed jobs that don't \
                     use clusterSelector",
                )];
            }
            (false, true) => {}
        }
        let mut errors = Vec::new();
        if bool_at(job, "/spec/shutdownAfterJobFinishes") != Some(true) {
            errors.push(invalid(
                "spec.shutdownAfterJobFinishes",
                "a kueue managed job should delete the cluster after finishing",
            ));
        }
        spec(job).validate(&mut errors);
        errors
    }
}

#[cfg(test)]
mod tests;
