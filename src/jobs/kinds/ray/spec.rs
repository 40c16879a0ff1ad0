//! A RayClusterSpec within a Ray kind's object, read as Kueue's `raycluster/common.go` reads it:
//! its pod sets, what KubeRay adds to the head pod, and Kueue's checks of it.

use std::str::FromStr;

use k8s_openapi::api::core::v1::{Container, PodTemplateSpec, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use kube::api::DynamicObject;
use serde_json::Value;

use crate::engine::quantity::Quantity;
use crate::jobs::framework::{KindError, KindPodSet, bool_at};

/// The head group's pod set; Kueue forbids it as a worker group's name.
const HEAD: &str = "head";
/// Kueue's `MaxPodSets`: the most pod sets a Workload holds.
const MAX_POD_SETS: usize = 18;
/// Kueue's `ray.io/ft-enabled`: GCS fault tolerance asked for by annotation.
const FT_ENABLED_ANNOTATION: &str = "ray.io/ft-enabled";

/// A RayClusterSpec within a kind's object.
#[derive(Clone, Copy)]
pub(super) struct ClusterSpec<'a> {
    /// The kind, for errors.
    pub(super) kind: &'static str,
    pub(super) job: &'a DynamicObject,
    /// JSON pointer to the spec: `/spec`, `/spec/rayClusterSpec` or `/spec/rayClusterConfig`.
    pub(super) pointer: &'static str,
}

impl<'a> ClusterSpec<'a> {
    /// The spec's field path as errors name it, for example `spec.rayClusterSpec`.
    fn path(&self) -> String {
        self.pointer.trim_start_matches('/').replace('/', ".")
    }

    fn name(&self) -> String {
        self.job.metadata.name.clone().unwrap_or_default()
    }

    fn at(&self, relative: &str) -> Option<&'a Value> {
        self.job
            .data
            .pointer(&format!("{}{relative}", self.pointer))
    }

    fn invalid(&self, field: String, reason: impl Into<String>) -> KindError {
        KindError::Invalid {
            kind: self.kind,
            job: self.name(),
            field,
            reason: reason.into(),
        }
    }

    fn worker_groups(&self) -> &'a [Value] {
        self.at("/workerGroupSpecs")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    fn autoscaling(&self) -> bool {
        bool_at(
            self.job,
            &format!("{}/enableInTreeAutoscaling", self.pointer),
        ) == Some(true)
    }

    /// Kueue's `BuildPodSets`: the head, then each worker group.
    pub(super) fn pod_sets(&self) -> Result<Vec<KindPodSet>, KindError> {
        if !self.at("").is_some_and(Value::is_object) {
            return Err(KindError::Missing {
                kind: self.kind,
                job: self.name(),
                field: self.path(),
            });
        }
        let mut pod_sets = vec![whole(
            HEAD.to_owned(),
            format!("{}/headGroupSpec/template", self.pointer),
            1,
        )];
        for (i, group) in self.worker_groups().iter().enumerate() {
            let field = format!("{}.workerGroupSpecs[{i}]", self.path());
            let name = group
                .get("groupName")
                .and_then(Value::as_str)
                .ok_or_else(|| KindError::Missing {
                    kind: self.kind,
                    job: self.name(),
                    field: format!("{field}.groupName"),
                })?;
            let count = self.worker_count(group, &field)?;
            pod_sets.push(whole(
                name.to_lowercase(),
                format!("{}/workerGroupSpecs/{i}/template", self.pointer),
                count,
            ));
        }
        Ok(pod_sets)
    }

    /// Kueue's `effectiveWorkerCount`: `replicas` (one when unset) times `numOfHosts` when above
    /// one.
    fn worker_count(&self, group: &Value, field: &str) -> Result<i32, KindError> {
        let number = |key: &str| -> Result<Option<i32>, KindError> {
            match group.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v
                    .as_i64()
                    .and_then(|n| i32::try_from(n).ok())
                    .filter(|n| *n >= 0)
                    .map(Some)
                    .ok_or_else(|| {
                        self.invalid(
                            format!("{field}.{key}"),
                            "not a non-negative 32-bit integer",
                        )
                    }),
            }
        };
        let replicas = number("replicas")?.unwrap_or(1);
        match number("numOfHosts")? {
            Some(hosts) if hosts > 1 => replicas.checked_mul(hosts).ok_or_else(|| {
                self.invalid(
                    format!("{field}.numOfHosts"),
                    "replicas times numOfHosts exceeds a 32-bit integer",
                )
            }),
            _ => Ok(replicas),
        }
    }

    /// Kueue's `IsGCSFaultToleranceEnabled`: the annotation on the object, or the spec's options.
    fn gcs_fault_tolerance(&self) -> bool {
        let annotated = self
            .job
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(FT_ENABLED_ANNOTATION))
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        annotated
            || self
                .at("/gcsFaultToleranceOptions")
                .is_some_and(|v| !v.is_null())
    }

    /// Whether `pod_set` is the head's (a worker group may lowercase to the same name).
    pub(super) fn is_head(&self, pod_set: &KindPodSet) -> bool {
        pod_set.template == format!("{}/headGroupSpec/template", self.pointer)
    }

    /// What KubeRay adds to the head pod, added to the head's Workload template.
    pub(super) fn adjust_head(&self, template: &mut PodTemplateSpec) -> Result<(), KindError> {
        let spec = template.spec.get_or_insert_default();
        if self.gcs_fault_tolerance() {
            // KubeRay's Redis cleanup Job requests 200m cpu and 256Mi memory; Kueue counts at
            // least that much on the head's Ray container.
            let field = format!("{}.headGroupSpec.template.spec.containers", self.path());
            let ray = spec.containers.first_mut().ok_or_else(|| {
                self.invalid(
                    field.clone(),
                    "cannot account for Redis cleanup resources: the head pod template must \
                     include the Ray container",
                )
            })?;
            let requests = ray
                .resources
                .get_or_insert_default()
                .requests
                .get_or_insert_default();
            for (resource, floor) in [("cpu", "200m"), ("memory", "256Mi")] {
                let current = match requests.get(resource) {
                    None => None,
                    Some(q) => Some(Quantity::from_str(&q.0).map_err(|e| {
                        self.invalid(
                            format!("{field}[0].resources.requests.{resource}"),
                            e.to_string(),
                        )
                    })?),
                };
                let floor_value = Quantity::from_str(floor).unwrap_or_default();
                if current.is_none_or(|c| c < floor_value) {
                    requests.insert(resource.to_owned(), K8sQuantity(floor.to_owned()));
                }
            }
        }
        if self.autoscaling() {
            let resources = match self.at("/autoscalerOptions/resources") {
                Some(v) if !v.is_null() => serde_json::from_value(v.clone()).map_err(|e| {
                    self.invalid(
                        format!("{}.autoscalerOptions.resources", self.path()),
                        e.to_string(),
                    )
                })?,
                // KubeRay's autoscaler sidecar defaults.
                _ => fixed_resources(("500m", "512Mi"), ("500m", "512Mi")),
            };
            spec.containers.push(Container {
                name: "autoscaler".to_owned(),
                resources: Some(resources),
                ..Default::default()
            });
        }
        Ok(())
    }

    /// Kueue's `ValidateCreate` of a RayClusterSpec, for a job it manages.
    pub(super) fn validate(&self, errors: &mut Vec<KindError>) {
        if self.autoscaling() {
            // Kueue allows autoscaling only to elastic jobs, whose Workload slices kuota does not
            // build: a scaled cluster would run past its admitted quota.
            errors.push(self.invalid(
                format!("{}.enableInTreeAutoscaling", self.path()),
                "a kueue managed job should not use autoscaling: only elastic jobs may, and they \
                 are not supported",
            ));
        }
        let groups = self.worker_groups();
        if groups.len() + 1 > MAX_POD_SETS {
            errors.push(self.invalid(
                format!("{}.workerGroupSpecs", self.path()),
                format!(
                    "Too many: {}: must have at most {MAX_POD_SETS} items",
                    groups.len() + 1
                ),
            ));
        }
        for (i, group) in groups.iter().enumerate() {
            if group.get("groupName").and_then(Value::as_str) == Some(HEAD) {
                errors.push(self.invalid(
                    format!("{}.workerGroupSpecs[{i}].groupName", self.path()),
                    format!("Forbidden: {HEAD:?} is reserved for the head group"),
                ));
            }
        }
    }
}

/// A pod set run whole, without ranks.
pub(super) fn whole(name: String, template: String, count: i32) -> KindPodSet {
    KindPodSet {
        name,
        template,
        count,
        min_count: None,
        pod_index_label: None,
        sub_group: None,
    }
}

/// Requests and limits of cpu and memory, as KubeRay sets its sidecars'.
pub(super) fn fixed_resources(
    requests: (&str, &str),
    limits: (&str, &str),
) -> ResourceRequirements {
    let list = |(cpu, memory): (&str, &str)| {
        [("cpu", cpu), ("memory", memory)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), K8sQuantity(v.to_owned())))
            .collect()
    };
    ResourceRequirements {
        requests: Some(list(requests)),
        limits: Some(list(limits)),
        ..Default::default()
    }
}

/// Sets a boolean `key` in the object at `pointer`, which must exist.
pub(super) fn set_bool_at(
    kind: &'static str,
    job: &mut DynamicObject,
    pointer: &str,
    key: &str,
    value: bool,
) -> Result<(), KindError> {
    let name = job.metadata.name.clone().unwrap_or_default();
    let object = job
        .data
        .pointer_mut(pointer)
        .and_then(Value::as_object_mut)
        .ok_or_else(|| KindError::Missing {
            kind,
            job: name,
            field: pointer.trim_start_matches('/').replace('/', "."),
        })?;
    object.insert(key.to_owned(), Value::Bool(value));
    Ok(())
}
