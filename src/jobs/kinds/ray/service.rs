//! RayService (`ray.io/rayservice`): the pod sets of its `spec.rayClusterConfig`, suspended at
//! `spec.rayClusterConfig.suspend` as Kueue suspends it. A RayService serves until deleted: it
//! never finishes, and is active and its pods ready while its `Ready` condition is true.

use k8s_openapi::api::core::v1::PodTemplateSpec;
use kube::api::DynamicObject;

use super::spec::{ClusterSpec, set_bool_at};
use crate::jobs::JobFinished;
use crate::jobs::framework::{JobKind, KindError, KindId, KindPodSet, bool_at, true_condition};

static ID: KindId = KindId {
    group: "ray.io",
    version: "v1",
    kind: "RayService",
    plural: "rayservices",
    framework: "ray.io/rayservice",
};

const CLUSTER_CONFIG: &str = "/spec/rayClusterConfig";

/// The RayService's rules.
pub struct RayServiceKind;

/// The RayService kind, for the registry.
pub static RAYSERVICE: RayServiceKind = RayServiceKind;

fn spec(job: &DynamicObject) -> ClusterSpec<'_> {
    ClusterSpec {
        kind: ID.kind,
        job,
        pointer: CLUSTER_CONFIG,
    }
}

fn ready(job: &DynamicObject) -> bool {
    true_condition(job, "/status/conditions", &["Ready"]).is_some()
}

impl JobKind for RayServiceKind {
    fn id(&self) -> &'static KindId {
        &ID
    }

    fn pod_sets(&self, job: &DynamicObject) -> Result<Vec<KindPodSet>, KindError> {
        spec(job).pod_sets()
    }

    fn is_suspended(&self, job: &DynamicObject) -> bool {
        bool_at(job, &format!("{CLUSTER_CONFIG}/suspend")).unwrap_or(false)
    }

    fn set_suspended(&self, job: &mut DynamicObject, suspended: bool) -> Result<(), KindError> {
        set_bool_at(ID.kind, job, CLUSTER_CONFIG, "suspend", suspended)
    }

    /// Kueue: a RayService is never finished.
    fn finished(&self, _job: &DynamicObject) -> Option<JobFinished> {
        None
    }

    fn pods_ready(&self, job: &DynamicObject) -> bool {
        ready(job)
    }

    fn is_active(&self, job: &DynamicObject) -> bool {
        ready(job)
    }

    fn adjust_workload_template(
        &self,
        job: &DynamicObject,
        pod_set: &KindPodSet,
        template: &mut PodTemplateSpec,
    ) -> Result<(), KindError> {
        let spec = spec(job);
        if spec.is_head(pod_set) {
            spec.adjust_head(template)?;
        }
        Ok(())
    }

    fn validate_managed(&self, job: &DynamicObject) -> Vec<KindError> {
        let mut errors = Vec::new();
        spec(job).validate(&mut errors);
        errors
    }
}

#[cfg(test)]
mod tests;
