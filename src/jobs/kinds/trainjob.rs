//! TrainJob (`trainer.kubeflow.org/trainjob`, Kubeflow Trainer v2, v1alpha1), as Kueue's
//! `jobs/trainjob` integration. A TrainJob's pod templates are in the runtime it names in
//! `spec.runtimeRef` (a `TrainingRuntime` in its namespace or a `ClusterTrainingRuntime`); its
//! pod sets are those of the JobSet the trainer runs it as ([`runtime::jobset_spec`]): one per
//! replicated Job, counted and ranked as a JobSet's. Suspended at `spec.suspend`.
//!
//! Started, the admission goes where Kueue writes it: the TrainJob's runtime patch of manager
//! `kueue.x-k8s.io/manager` (`spec.runtimePatches`), one replicated-Job patch per pod set with
//! its labels, annotations, nodeSelector, tolerations and scheduling gates; stopped, those
//! patches are removed once the TrainJob is suspended and no pod of it is active.

mod merge;
mod runtime;

use kube::api::DynamicObject;
use serde_json::{Value, json};

use super::jobset::{JOBSET, pods_per_replica, replicas};
use crate::api::keys::finished_reasons;
use crate::api::workload_status::ReclaimablePod;
use crate::jobs::PodSetInfo;
use crate::jobs::framework::{
    JobKind, KindError, KindId, KindPodSet, OwnAdmission, Reference, ReferencedKind, bool_at,
    str_at, true_condition,
};
use crate::jobs::job_lifecycle::JobFinished;

use self::runtime::{KIND, KUEUE_MANAGER, Runtime, jobset_spec};

const GROUP: &str = "trainer.kubeflow.org";
/// The field naming the runtime.
const RUNTIME_REF: &str = "spec.runtimeRef";

/// TrainJob's rules.
pub struct TrainJobRules;

/// The one instance the registry hands out.
pub static TRAINJOB: TrainJobRules = TrainJobRules;

static ID: KindId = KindId {
    group: GROUP,
    version: "v1alpha1",
    kind: KIND,
    plural: "trainjobs",
    framework: "trainer.kubeflow.org/trainjob",
};

/// The runtimes a TrainJob may name, as Kueue's trainer runtime registry knows them.
static RUNTIMES: [ReferencedKind; 2] = [
    ReferencedKind {
        group: GROUP,
        version: "v1alpha1",
        kind: "TrainingRuntime",
        plural: "trainingruntimes",
        namespaced: true,
    },
    ReferencedKind {
        group: GROUP,
        version: "v1alpha1",
        kind: "ClusterTrainingRuntime",
        plural: "clustertrainingruntimes",
        namespaced: false,
    },
];

fn job_name(job: &DynamicObject) -> String {
    job.metadata.name.clone().unwrap_or_default()
}

fn array_at<'a>(job: &'a DynamicObject, pointer: &str) -> &'a [Value] {
    job.data
        .pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn int_field(value: &Value, key: &str) -> i64 {
    value.get(key).and_then(Value::as_i64).unwrap_or(0)
}

/// `status.jobsStatus`: the trainer's count of each replicated Job's pods.
fn jobs_status(job: &DynamicObject) -> &[Value] {
    array_at(job, "/status/jobsStatus")
}

impl JobKind for TrainJobRules {
    fn id(&self) -> &'static KindId {
        &ID
    }

    /// The pod sets of the composed JobSet, named, counted and ranked as a JobSet's.
    fn pod_sets(&self, job: &DynamicObject) -> Result<Vec<KindPodSet>, KindError> {
        JOBSET.pod_sets(job)
    }

    fn referenced_kinds(&self) -> &'static [ReferencedKind] {
        &RUNTIMES
    }

    /// `spec.runtimeRef`, its API group and kind defaulted as the CRD defaults them; a kind the
    /// trainer has no runtime for is refused.
    fn reference(&self, job: &DynamicObject) -> Result<Option<Reference>, KindError> {
        let name = str_at(job, "/spec/runtimeRef/name")
            .filter(|n| !n.is_empty())
            .ok_or_else(|| KindError::Missing {
                kind: KIND,
                job: job_name(job),
                field: format!("{RUNTIME_REF}.name"),
            })?;
        let group = str_at(job, "/spec/runtimeRef/apiGroup").unwrap_or(GROUP);
        let kind = str_at(job, "/spec/runtimeRef/kind").unwrap_or("ClusterTrainingRuntime");
        let runtime = RUNTIMES
            .iter()
            .find(|r| r.group == group && r.kind == kind)
            .ok_or_else(|| KindError::Invalid {
                kind: KIND,
                job: job_name(job),
                field: RUNTIME_REF.to_owned(),
                reason: format!(
                    "unsupported runtime: {kind}.{group}; a TrainJob runs on a TrainingRuntime or a ClusterTrainingRuntime of {GROUP}"
                ),
            })?;
        Ok(Some(Reference {
            kind: runtime,
            namespace: runtime
                .namespaced
                .then(|| job.metadata.namespace.clone().unwrap_or_default()),
            name: name.to_owned(),
            field: RUNTIME_REF,
        }))
    }

    /// The TrainJob's metadata and status with the spec of the JobSet it runs as.
    fn compose(
        &self,
        job: &DynamicObject,
        referenced: &DynamicObject,
    ) -> Result<Option<DynamicObject>, KindError> {
        let described = match self.reference(job)? {
            Some(reference) => reference.to_string(),
            None => referenced.metadata.name.clone().unwrap_or_default(),
        };
        let spec = jobset_spec(
            job,
            &Runtime {
                object: referenced,
                described,
            },
        )?;
        let status = job.data.get("status").cloned().unwrap_or(Value::Null);
        Ok(Some(DynamicObject {
            types: None,
            metadata: job.metadata.clone(),
            data: json!({"spec": spec, "status": status}),
        }))
    }

    fn own_admission(&self) -> Option<&dyn OwnAdmission> {
        Some(self)
    }

    fn is_suspended(&self, job: &DynamicObject) -> bool {
        bool_at(job, "/spec/suspend").unwrap_or(false)
    }

    fn set_suspended(&self, job: &mut DynamicObject, suspended: bool) -> Result<(), KindError> {
        let name = job_name(job);
        let spec = job
            .data
            .get_mut("spec")
            .and_then(Value::as_object_mut)
            .ok_or(KindError::Missing {
                kind: KIND,
                job: name,
                field: "spec".to_owned(),
            })?;
        spec.insert("suspend".to_owned(), Value::Bool(suspended));
        Ok(())
    }

    /// `Complete` first, then `Failed`, as Kueue asks them.
    fn finished(&self, job: &DynamicObject) -> Option<JobFinished> {
        let conditions = "/status/conditions";
        let (reason, message) = true_condition(job, conditions, &["Complete"])
            .map(|(_, message)| (finished_reasons::SUCCEEDED, message))
            .or_else(|| {
                true_condition(job, conditions, &["Failed"])
                    .map(|(_, message)| (finished_reasons::FAILED, message))
            })?;
        Some(JobFinished {
            reason,
            message: message.to_owned(),
        })
    }

    /// Kueue's: the composed JobSet's replicas, all ready or succeeded in `status.jobsStatus`.
    fn pods_ready(&self, job: &DynamicObject) -> bool {
        let wanted: i64 = array_at(job, "/spec/replicatedJobs")
            .iter()
            .map(|r| i64::from(replicas(r)))
            .sum();
        let ready: i64 = jobs_status(job)
            .iter()
            .map(|s| int_field(s, "ready") + int_field(s, "succeeded"))
            .sum();
        wanted == ready
    }

    fn is_active(&self, job: &DynamicObject) -> bool {
        jobs_status(job).iter().any(|s| int_field(s, "active") > 0)
    }

    /// The pods of each replicated Job's succeeded Jobs, from `status.jobsStatus` (Kueue's
    /// `ReclaimablePods`).
    fn reclaimable_pods(&self, job: &DynamicObject) -> Vec<ReclaimablePod> {
        let statuses = jobs_status(job);
        array_at(job, "/spec/replicatedJobs")
            .iter()
            .filter_map(|replicated| {
                let name = replicated.get("name")?.as_str()?;
                let status = statuses
                    .iter()
                    .find(|s| s.get("name").and_then(Value::as_str) == Some(name))?;
                let succeeded = i32::try_from(int_field(status, "succeeded")).ok()?;
                (succeeded > 0 && succeeded <= replicas(replicated)).then(|| ReclaimablePod {
                    name: name.to_owned(),
                    count: succeeded.saturating_mul(pods_per_replica(replicated)),
                })
            })
            .collect()
    }
}

impl OwnAdmission for TrainJobRules {
    /// Kueue's runtime patch holds one replicated-Job patch per pod set; the patch is added when
    /// the TrainJob has none (Kueue's webhook adds it at creation).
    fn run_with(&self, job: &mut DynamicObject, infos: &[PodSetInfo]) -> Result<(), KindError> {
        let replicated_jobs: Vec<Value> = infos.iter().map(replicated_job_patch).collect();
        let name = job_name(job);
        let patch = kueue_patch(job).ok_or_else(|| KindError::Invalid {
            kind: KIND,
            job: name.clone(),
            field: "spec.runtimePatches".to_owned(),
            reason: "not a list".to_owned(),
        })?;
        let spec = patch
            .as_object_mut()
            .map(|p| p.entry("trainingRuntimeSpec").or_insert_with(|| json!({})))
            .and_then(Value::as_object_mut)
            .map(|s| s.entry("template").or_insert_with(|| json!({})))
            .and_then(Value::as_object_mut)
            .map(|t| t.entry("spec").or_insert_with(|| json!({})))
            .and_then(Value::as_object_mut)
            .ok_or_else(|| KindError::Invalid {
                kind: KIND,
                job: name.clone(),
                field: format!("spec.runtimePatches[manager={KUEUE_MANAGER}]"),
                reason: "trainingRuntimeSpec.template.spec is not an object".to_owned(),
            })?;
        spec.insert("replicatedJobs".to_owned(), Value::Array(replicated_jobs));
        Ok(())
    }

    fn restore(&self, job: &mut DynamicObject) -> bool {
        job.data
            .get_mut("spec")
            .and_then(|s| s.get_mut("runtimePatches"))
            .and_then(Value::as_array_mut)
            .and_then(|patches| patches.iter_mut().find(|p| is_kueue_patch(p)))
            .and_then(|p| p.pointer_mut("/trainingRuntimeSpec/template/spec"))
            .and_then(Value::as_object_mut)
            .is_some_and(|spec| spec.remove("replicatedJobs").is_some())
    }
}

fn is_kueue_patch(patch: &Value) -> bool {
    patch.get("manager").and_then(Value::as_str) == Some(KUEUE_MANAGER)
}

/// Kueue's runtime patch of the TrainJob, appended when absent; `None` when the spec cannot
/// hold one.
fn kueue_patch(job: &mut DynamicObject) -> Option<&mut Value> {
    let patches = job
        .data
        .get_mut("spec")?
        .as_object_mut()?
        .entry("runtimePatches")
        .or_insert_with(|| json!([]))
        .as_array_mut()?;
    let index = match patches.iter().position(is_kueue_patch) {
        Some(index) => index,
        None => {
            patches.push(json!({"manager": KUEUE_MANAGER}));
            patches.len() - 1
        }
    };
    patches.get_mut(index)
}

/// One pod set's admission as Kueue's `ReplicatedJobPatch`; empty fields left out, as Go's
/// `omitempty` leaves them.
fn replicated_job_patch(info: &PodSetInfo) -> Value {
    let mut metadata = serde_json::Map::new();
    if !info.annotations.is_empty() {
        metadata.insert("annotations".to_owned(), json!(info.annotations));
    }
    if !info.labels.is_empty() {
        metadata.insert("labels".to_owned(), json!(info.labels));
    }
    let mut spec = serde_json::Map::new();
    if !info.node_selector.is_empty() {
        spec.insert("nodeSelector".to_owned(), json!(info.node_selector));
    }
    if !info.tolerations.is_empty() {
        spec.insert("tolerations".to_owned(), json!(info.tolerations));
    }
    if !info.scheduling_gates.is_empty() {
        let gates: Vec<Value> = info
            .scheduling_gates
            .iter()
            .map(|name| json!({"name": name}))
            .collect();
        spec.insert("schedulingGates".to_owned(), Value::Array(gates));
    }
    json!({"name": info.name, "template": {"spec": {"template": {
        "metadata": metadata, "spec": spec}}}})
}

#[cfg(test)]
mod tests;
