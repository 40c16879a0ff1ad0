//! AppWrapper (`workload.codeflare.dev/appwrapper`): one pod set per `spec.components[i].podSets[j]`,
//! in that order, each named `<appwrapper name>-<pod set index>` as Kueue names them.

use kube::api::DynamicObject;
use serde_json::Value;

use crate::jobs::JobFinished;
use crate::jobs::framework::{JobKind, KindError, KindId, KindPodSet, bool_at, str_at};

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
                pod_sets.push(KindPodSet {
                    name: format!("{name}-{}", pod_sets.len()),
                    template,
                    count,
                    min_count: None,
                    pod_index_label: None,
                    sub_group: None,
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
