//! AppWrapper (`workload.codeflare.dev/appwrapper`): one pod set per `spec.components[i].podSets[j]`,
//! in that order, each named `<appwrapper name>-<pod set index>` as Kueue names them. A pod set's
//! own annotations name the pod labels the TAS ungater ranks its pods by, as the AppWrapper
//! controller's utilities define them.

use kube::api::DynamicObject;
use serde_json::Value;

use crate::jobs::JobFinished;
use crate::jobs::framework::{JobKind, KindError, KindId, KindPodSet, SubGroup, bool_at, str_at};

/// A pod set's annotation naming the pod label that holds each pod's rank.
const TAS_POD_INDEX_LABEL: &str = "workload.codeflare.dev.appwrapper/tas-pod-index-label";
/// A pod set's annotation naming the pod label that holds each pod's sub-group index.
const TAS_SUB_GROUP_INDEX_LABEL: &str =
    "workload.codeflare.dev.appwrapper/tas-sub-group-index-label";
/// A pod set's annotation holding how many sub-groups it has.
const TAS_SUB_GROUP_COUNT: &str = "workload.codeflare.dev.appwrapper/tas-sub-group-count";

static ID: KindId = KindId {
    group: "workload.codeflare.dev",
    version: "v1beta2",
    kind: "AppWrapper",
    plural: "appwrappers",
    framework: "workload.codeflare.dev/appwrapper",
};

/// The AppWrapper's rules.
pub struct AppWrapperKind;

/// The AppWrapper kind, for the registry.
pub static APPWRAPPER: AppWrapperKind = AppWrapperKind;

fn condition_true(job: &DynamicObject, type_: &str) -> bool {
    crate::jobs::framework::true_condition(job, "/status/conditions", &[type_]).is_some()
}

/// The component-relative `path` (`template.spec.template`) as a JSON pointer under component `i`.
fn pointer_for(component: usize, path: &str) -> String {
    let mut pointer = format!("/spec/components/{component}");
    for segment in path.split('.').filter(|s| !s.is_empty()) {
        pointer.push('/');
        pointer.push_str(&segment.replace('~', "~0").replace('/', "~1"));
    }
    pointer
}

impl JobKind for AppWrapperKind {
    fn id(&self) -> &'static KindId {
        &ID
    }

    fn pod_sets(&self, job: &DynamicObject) -> Result<Vec<KindPodSet>, KindError> {
        let name = job.metadata.name.clone().unwrap_or_default();
        let components = job
            .data
            .pointer("/spec/components")
            .and_then(Value::as_array)
            .ok_or_else(|| KindError::Missing {
                kind: ID.kind,
                job: name.clone(),
                field: "spec.components".to_owned(),
            })?;
        let mut pod_sets = Vec::new();
        for (c, component) in components.iter().enumerate() {
            let sets = component.get("podSets").and_then(Value::as_array);
            for (p, set) in sets.into_iter().flatten().enumerate() {
                let field = format!("spec.components[{c}].podSets[{p}]");
                let path =
                    set.get("path")
                        .and_then(Value::as_str)
                        .ok_or_else(|| KindError::Missing {
                            kind: ID.kind,
                            job: name.clone(),
                            field: format!("{field}.path"),
                        })?;
                let template = pointer_for(c, path);
                if job.data.pointer(&template).is_none() {
                    return Err(KindError::Invalid {
                        kind: ID.kind,
                        job: name.clone(),
                        field: format!("{field}.path"),
                        reason: format!("{path:?} names no pod template in the component"),
                    });
                }
                // Kueue's `Replicas`: an absent count is one pod.
                let count = match set.get("replicas") {
                    None | Some(Value::Null) => 1,
                    Some(v) => v
                        .as_i64()
                        .and_then(|n| i32::try_from(n).ok())
                        .filter(|n| *n >= 0)
                        .ok_or_else(|| KindError::Invalid {
                            kind: ID.kind,
                            job: name.clone(),
                            field: format!("{field}.replicas"),
                            reason: "not a non-negative 32-bit integer".to_owned(),
                        })?,
                };
                let annotation = |key: &str| {
                    set.pointer(&format!("/annotations/{}", key.replace('/', "~1")))
                        .and_then(Value::as_str)
                };
                // As Kueue, a sub-group count that is not a number is left out.
                let sub_group = annotation(TAS_SUB_GROUP_INDEX_LABEL)
                    .zip(annotation(TAS_SUB_GROUP_COUNT).and_then(|c| c.parse().ok()))
                    .map(|(label, count)| SubGroup {
                        index_label: label.to_owned().into(),
                        count,
                    });
                pod_sets.push(KindPodSet {
                    name: format!("{name}-{}", pod_sets.len()),
                    template,
                    count,
                    min_count: None,
                    pod_index_label: annotation(TAS_POD_INDEX_LABEL).map(|l| l.to_owned().into()),
                    sub_group,
                });
            }
        }
        Ok(pod_sets)
    }

    fn is_suspended(&self, job: &DynamicObject) -> bool {
        bool_at(job, "/spec/suspend").unwrap_or(false)
    }

    fn set_suspended(&self, job: &mut DynamicObject, suspended: bool) -> Result<(), KindError> {
        let spec = job
            .data
            .get_mut("spec")
            .and_then(Value::as_object_mut)
            .ok_or_else(|| KindError::Missing {
                kind: ID.kind,
                job: job.metadata.name.clone().unwrap_or_default(),
                field: "spec".to_owned(),
            })?;
        spec.insert("suspend".to_owned(), Value::Bool(suspended));
        Ok(())
    }

    /// Kueue: `Succeeded` ends it; `Failed` ends it once its resources are gone
    /// (`ResourcesDeployed` no longer true).
    fn finished(&self, job: &DynamicObject) -> Option<JobFinished> {
        match str_at(job, "/status/phase")? {
            "Succeeded" => Some(JobFinished {
                reason: "Succeeded",
                message: "AppWrapper finished successfully".to_owned(),
            }),
            "Failed" if !condition_true(job, "ResourcesDeployed") => Some(JobFinished {
                reason: "Failed",
                message: "AppWrapper failed".to_owned(),
            }),
            _ => None,
        }
    }

    fn pods_ready(&self, job: &DynamicObject) -> bool {
        condition_true(job, "PodsReady")
    }

    fn is_active(&self, job: &DynamicObject) -> bool {
        condition_true(job, "QuotaReserved")
    }
}

#[cfg(test)]
mod tests;
