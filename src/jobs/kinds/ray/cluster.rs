//! RayCluster (`ray.io/raycluster`): its spec's head and worker groups, suspended at
//! `spec.suspend`. A RayCluster never finishes; it is active and its pods ready while its state is
//! `ready`, as Kueue reads it.

use k8s_openapi::api::core::v1::PodTemplateSpec;
use kube::api::DynamicObject;

use super::spec::{ClusterSpec, set_bool_at};
use crate::jobs::JobFinished;
use crate::jobs::framework::{JobKind, KindError, KindId, KindPodSet, bool_at, str_at};

static ID: KindId = KindId {
    group: "ray.io",
    version: "v1",
    kind: "RayCluster",
    plural: "rayclusters",
    framework: "ray.io/raycluster",
};

/// The RayCluster's rules.
pub struct RayClusterKind;

/// The RayCluster kind, for the registry.
pub static RAYCLUSTER: RayClusterKind = RayClusterKind;

fn spec(job: &DynamicObject) -> ClusterSpec<'_> {
    ClusterSpec {
        kind: ID.kind,
        job,
        pointer: "/spec",
    }
}

fn ready(job: &DynamicObject) -> bool {
    str_at(job, "/status/state") == Some("ready")
}

impl JobKind for RayClusterKind {
    fn id(&self) -> &'static KindId {
        &ID
    }

    fn pod_sets(&self, job: &DynamicObject) -> Result<Vec<KindPodSet>, KindError> {
        spec(job).pod_sets()
    }

    fn is_suspended(&self, job: &DynamicObject) -> bool {
        bool_at(job, "/spec/suspend").unwrap_or(false)
    }

    fn set_suspended(&self, job: &mut DynamicObject, suspended: bool) -> Result<(), KindError> {
        set_bool_at(ID.kind, job, "/spec", "suspend", suspended)
    }

    /// Kueue: a RayCluster is never finished.
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
