//! The Kubeflow training-operator v1 kinds (`kubeflow.org/pytorchjob`, `tfjob`, `xgboostjob`,
//! `paddlejob`, `jaxjob`), as Kueue's `jobs/kubeflow/kubeflowjob`, and the MPI operator's
//! `kubeflow.org/mpijob` (v2beta1), as Kueue's `jobs/mpijob`: one pod set per replica type the
//! job has, in the kind's replica-type order, named as the replica type in lower case, suspended
//! at `spec.runPolicy.suspend`. The kinds differ only in their version, replica-spec field and
//! replica-type order.

use kube::api::DynamicObject;
use serde_json::{Map, Value};

use crate::api::keys::finished_reasons;
use crate::jobs::framework::{JobKind, KindError, KindId, KindPodSet, bool_at, true_condition};
use crate::jobs::job_lifecycle::JobFinished;

/// The pod label both operators write with each pod's index within its replica type.
const REPLICA_INDEX: &str = "training.kubeflow.org/replica-index";

/// One training-operator kind's rules.
pub struct TrainingJobRules {
    id: &'static KindId,
    /// The field of `spec` holding the replica specs, for example `pytorchReplicaSpecs`.
    replica_specs: &'static str,
    /// The kind's replica types in Kueue's order (its `OrderedReplicaTypes`).
    replica_types: &'static [&'static str],
}

const fn id(kind: &'static str, plural: &'static str, framework: &'static str) -> KindId {
    KindId {
        group: "kubeflow.org",
        version: "v1",
        kind,
        plural,
        framework,
    }
}

static PYTORCHJOB_ID: KindId = id("PyTorchJob", "pytorchjobs", "kubeflow.org/pytorchjob");
static TFJOB_ID: KindId = id("TFJob", "tfjobs", "kubeflow.org/tfjob");
static XGBOOSTJOB_ID: KindId = id("XGBoostJob", "xgboostjobs", "kubeflow.org/xgboostjob");
static PADDLEJOB_ID: KindId = id("PaddleJob", "paddlejobs", "kubeflow.org/paddlejob");
static JAXJOB_ID: KindId = id("JAXJob", "jaxjobs", "kubeflow.org/jaxjob");
static MPIJOB_ID: KindId = KindId {
    version: "v2beta1",
    ..id("MPIJob", "mpijobs", "kubeflow.org/mpijob")
};

pub static PYTORCHJOB: TrainingJobRules = TrainingJobRules {
    id: &PYTORCHJOB_ID,
    replica_specs: "pytorchReplicaSpecs",
    replica_types: &["Master", "Worker"],
};
pub static TFJOB: TrainingJobRules = TrainingJobRules {
    id: &TFJOB_ID,
    replica_specs: "tfReplicaSpecs",
    replica_types: &["Chief", "Master", "PS", "Worker", "Evaluator"],
};
pub static XGBOOSTJOB: TrainingJobRules = TrainingJobRules {
    id: &XGBOOSTJOB_ID,
    replica_specs: "xgbReplicaSpecs",
    replica_types: &["Master", "Worker"],
};
pub static PADDLEJOB: TrainingJobRules = TrainingJobRules {
    id: &PADDLEJOB_ID,
    replica_specs: "paddleReplicaSpecs",
    replica_types: &["Master", "Worker"],
};
pub static JAXJOB: TrainingJobRules = TrainingJobRules {
    id: &JAXJOB_ID,
    replica_specs: "jaxReplicaSpecs",
    replica_types: &["Worker"],
};
pub static MPIJOB: TrainingJobRules = TrainingJobRules {
    id: &MPIJOB_ID,
    replica_specs: "mpiReplicaSpecs",
    replica_types: &["Launcher", "Worker"],
};

fn job_name(job: &DynamicObject) -> String {
    job.metadata.name.clone().unwrap_or_default()
}

impl TrainingJobRules {
    fn specs<'a>(&self, job: &'a DynamicObject) -> Option<&'a Map<String, Value>> {
        job.data.get("spec")?.get(self.replica_specs)?.as_object()
    }

    /// The replica types the job has, in the kind's order (Kueue skips the absent ones).
    fn present<'a>(&self, job: &'a DynamicObject) -> Vec<(&'static str, &'a Value)> {
        let Some(specs) = self.specs(job) else {
            return Vec::new();
        };
        self.replica_types
            .iter()
            .filter_map(|t| specs.get(*t).filter(|s| !s.is_null()).map(|s| (*t, s)))
            .collect()
    }

    fn error(&self, job: &DynamicObject, field: String) -> KindError {
        KindError::Missing {
            kind: self.id.kind,
            job: job_name(job),
            field,
        }
    }
}

impl JobKind for TrainingJobRules {
    fn id(&self) -> &'static KindId {
        self.id
    }

    fn pod_sets(&self, job: &DynamicObject) -> Result<Vec<KindPodSet>, KindError> {
        let present = self.present(job);
        if present.is_empty() {
            return Err(self.error(job, format!("spec.{}", self.replica_specs)));
        }
        present
            .into_iter()
            .map(|(replica_type, spec)| {
                if spec.get("template").is_none() {
                    let field = format!("spec.{}.{replica_type}.template", self.replica_specs);
                    return Err(self.error(job, field));
                }
                // Kueue's `podsCount`: replicas, 1 when unset.
                let count = match spec.get("replicas") {
                    None | Some(Value::Null) => 1,
                    Some(value) => value
                        .as_i64()
                        .and_then(|n| i32::try_from(n).ok())
                        .filter(|n| *n >= 0)
                        .ok_or_else(|| KindError::Invalid {
                            kind: self.id.kind,
                            job: job_name(job),
                            field: format!("spec.{}.{replica_type}.replicas", self.replica_specs),
                            reason: format!("{value} is not a pod count"),
                        })?,
                };
                Ok(KindPodSet {
                    name: replica_type.to_lowercase(),
                    template: format!("/spec/{}/{replica_type}/template", self.replica_specs),
                    count,
                    min_count: None,
                    pod_index_label: Some(REPLICA_INDEX.into()),
                    sub_group: None,
                })
            })
            .collect()
    }

    fn is_suspended(&self, job: &DynamicObject) -> bool {
        bool_at(job, "/spec/runPolicy/suspend").unwrap_or(false)
    }

    fn set_suspended(&self, job: &mut DynamicObject, suspended: bool) -> Result<(), KindError> {
        let missing = self.error(job, "spec".to_owned());
        let spec = job
            .data
            .get_mut("spec")
            .and_then(Value::as_object_mut)
            .ok_or(missing)?;
        let run_policy = spec
            .entry("runPolicy")
            .or_insert_with(|| Value::Object(Map::new()));
        if run_policy.is_null() {
            *run_policy = Value::Object(Map::new());
        }
        let Some(run_policy) = run_policy.as_object_mut() else {
            return Err(KindError::Invalid {
                kind: self.id.kind,
                job: job_name(job),
                field: "spec.runPolicy".to_owned(),
                reason: "not an object".to_owned(),
            });
        };
        run_policy.insert("suspend".to_owned(), Value::Bool(suspended));
        Ok(())
    }

    /// The first `Succeeded` or `Failed` condition that is true, as Kueue's `Finished`.
    fn finished(&self, job: &DynamicObject) -> Option<JobFinished> {
        let (type_, message) = true_condition(job, "/status/conditions", &["Succeeded", "Failed"])?;
        Some(JobFinished {
            reason: if type_ == "Failed" {
                finished_reasons::FAILED
            } else {
                finished_reasons::SUCCEEDED
            },
            message: message.to_owned(),
        })
    }

    /// A true `Running` condition, as Kueue's `PodsReady` for these kinds.
    fn pods_ready(&self, job: &DynamicObject) -> bool {
        true_condition(job, "/status/conditions", &["Running"]).is_some()
    }

    /// Some replica type with active pods.
    fn is_active(&self, job: &DynamicObject) -> bool {
        job.data
            .pointer("/status/replicaStatuses")
            .and_then(Value::as_object)
            .is_some_and(|statuses| {
                statuses
                    .values()
                    .any(|s| s.get("active").and_then(Value::as_i64).unwrap_or(0) != 0)
            })
    }
}

#[cfg(test)]
mod tests;
