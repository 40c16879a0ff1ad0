//! The JobSet spec a TrainJob runs as, composed from its runtime as Kueue composes it
//! (`getChildJobSet`, through the trainer v2.3 runtime framework's `RuntimeInfo` and JobSet
//! builder), for the parts that make its pod sets:
//!
//! - the runtime's `spec.template.spec`, with each of the TrainJob's `spec.runtimePatches`
//!   merged in (strategic merge), the replicated Jobs kept in the runtime's order;
//! - each replicated Job's pod count: its parallelism, or for the trainer step (label
//!   `trainer.kubeflow.org/trainjob-ancestor-step: trainer`) under an `mlPolicy` its
//!   `numNodes`, then the TrainJob's `spec.trainer.numNodes` as the ML-policy plugins set it
//!   (torch, JAX, XGBoost and plain runtimes on the trainer step; MPI on the Job named `node`,
//!   one fewer when the launcher runs as a node); written as parallelism and completions;
//! - `spec.trainer.resourcesPerNode` merged into the `node` container's resources, and its
//!   image, command, args and env; the initializers' storage URI, env and secret;
//! - one replica for the trainer and initializer steps;
//! - the coscheduling plugin's pod-group label on every pod template.
//!
//! What the ML-policy plugins add only when the trainer builds the JobSet itself (the torch
//! `PET_*` and MPI environment, volumes and ports) Kueue leaves out of its pod sets, and so
//! does kuota.

use std::collections::BTreeMap;

use kube::api::DynamicObject;
use serde_json::{Map, Value, json};

use super::merge::strategic_merge;
use crate::jobs::framework::KindError;

/// The label naming the TrainJob step a replicated Job runs.
pub const ANCESTOR_LABEL: &str = "trainer.kubeflow.org/trainjob-ancestor-step";
const TRAINER: &str = "trainer";
const DATASET_INITIALIZER: &str = "dataset-initializer";
const MODEL_INITIALIZER: &str = "model-initializer";
/// The trainer's container (and, for MPI, its worker Job).
const NODE: &str = "node";
const STORAGE_URI: &str = "STORAGE_URI";
/// The scheduler-plugins pod-group label the coscheduling plugin writes.
const POD_GROUP_LABEL: &str = "scheduling.x-k8s.io/pod-group";

/// The kind, as errors name it.
pub const KIND: &str = "TrainJob";
/// The manager of the runtime patch Kueue writes the admission into.
pub const KUEUE_MANAGER: &str = "kueue.x-k8s.io/manager";

/// The runtime a TrainJob names, as errors name it (`TrainingRuntime ns/torch`).
pub struct Runtime<'a> {
    pub object: &'a DynamicObject,
    pub described: String,
}

/// The spec of the JobSet the trainer runs `job` as, from `runtime`.
pub fn jobset_spec(job: &DynamicObject, runtime: &Runtime<'_>) -> Result<Value, KindError> {
    let job_name = job.metadata.name.clone().unwrap_or_default();
    let runtime_field = |path: String| format!("{} {path}", runtime.described);
    let missing = |path: String| KindError::Missing {
        kind: KIND,
        job: job_name.clone(),
        field: runtime_field(path),
    };
    let template = "spec.template.spec";
    let mut spec = runtime
        .object
        .data
        .pointer("/spec/template/spec")
        .filter(|s| s.is_object())
        .cloned()
        .ok_or_else(|| missing(template.to_owned()))?;
    let policy = Policy::of(runtime.object);
    apply_runtime_patches(&mut spec, job);
    let trainer = job.data.pointer("/spec/trainer");
    let jobs = spec
        .get_mut("replicatedJobs")
        .and_then(Value::as_array_mut)
        .filter(|jobs| !jobs.is_empty())
        .ok_or_else(|| missing(format!("{template}.replicatedJobs")))?;
    let mut steps = Vec::with_capacity(jobs.len());
    for (index, replicated) in jobs.iter_mut().enumerate() {
        let at = |rest: &str| format!("{template}.replicatedJobs[{index}]{rest}");
        let name = replicated
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| missing(at(".name")))?
            .to_owned();
        if !replicated
            .pointer("/template/spec/template")
            .is_some_and(Value::is_object)
        {
            return Err(missing(at(".template.spec.template")));
        }
        let ancestor = ancestor(replicated);
        let trainer_step = ancestor.as_deref() == Some(TRAINER) && policy.present;
        let mut count = int(replicated.pointer("/template/spec/parallelism")).unwrap_or(1);
        if trainer_step {
            count = policy.num_nodes;
        }
        if let Some(resources) = trainer.and_then(|t| t.get("resourcesPerNode"))
            && (trainer_step || policy.launcher_as_node && name == NODE)
            && let Some(container) = container_mut(replicated, NODE)
        {
            let merged = container
                .as_object_mut()
                .map(|c| c.entry("resources").or_insert_with(|| json!({})));
            if let Some(merged) = merged {
                strategic_merge(merged, resources);
            }
        }
        steps.push(Step {
            name,
            ancestor,
            count: count.max(1),
        });
    }
    apply_num_nodes(&mut steps, &policy, trainer);
    for (replicated, step) in jobs.iter_mut().zip(&steps) {
        build(replicated, step, &policy, job);
        if let Some(spec) = replicated
            .pointer_mut("/template/spec")
            .and_then(Value::as_object_mut)
        {
            spec.insert("parallelism".to_owned(), json!(step.count));
            spec.insert("completions".to_owned(), json!(step.count));
        }
        if policy.coscheduling
            && let Some(labels) = object_at(
                replicated,
                &["template", "spec", "template", "metadata", "labels"],
            )
        {
            labels.insert(POD_GROUP_LABEL.to_owned(), json!(job_name));
        }
    }
    Ok(spec)
}

/// What the runtime's policies decide about pod counts.
struct Policy {
    /// An `mlPolicy` is set.
    present: bool,
    /// `mlPolicy.numNodes`, defaulted to 1.
    num_nodes: i64,
    torch: bool,
    mpi: bool,
    jax: bool,
    xgboost: bool,
    /// `mlPolicy.mpi.runLauncherAsNode`.
    launcher_as_node: bool,
    /// `podGroupPolicy.coscheduling` is set.
    coscheduling: bool,
}

impl Policy {
    fn of(runtime: &DynamicObject) -> Self {
        let ml = runtime
            .data
            .pointer("/spec/mlPolicy")
            .filter(|p| !p.is_null());
        let has = |key: &str| ml.and_then(|p| p.get(key)).is_some_and(|v| !v.is_null());
        Policy {
            present: ml.is_some(),
            num_nodes: int(ml.and_then(|p| p.get("numNodes"))).unwrap_or(1),
            torch: has("torch"),
            mpi: has("mpi"),
            jax: has("jax"),
            xgboost: has("xgboost"),
            launcher_as_node: ml
                .and_then(|p| p.pointer("/mpi/runLauncherAsNode"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
            coscheduling: runtime
                .data
                .pointer("/spec/podGroupPolicy/coscheduling")
                .is_some_and(|v| !v.is_null()),
        }
    }
}

/// One replicated Job as the runtime framework sees it.
struct Step {
    name: String,
    ancestor: Option<String>,
    count: i64,
}

fn int(value: Option<&Value>) -> Option<i64> {
    value.and_then(Value::as_i64)
}

fn ancestor(replicated: &Value) -> Option<String> {
    replicated
        .pointer("/template/metadata/labels")
        .and_then(|labels| labels.get(ANCESTOR_LABEL))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// The runtime patches merged in their order; the replicated Jobs then sorted back into the
/// runtime's order (the trainer's `mergeRuntimePatches`: a Job the runtime lacks sorts first).
fn apply_runtime_patches(spec: &mut Value, job: &DynamicObject) {
    let names = |spec: &Value| -> BTreeMap<String, usize> {
        spec.get("replicatedJobs")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .enumerate()
            .filter_map(|(i, j)| Some((j.get("name")?.as_str()?.to_owned(), i)))
            .collect()
    };
    let order = names(spec);
    let patches = job
        .data
        .pointer("/spec/runtimePatches")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    // Kueue's own patch holds an admission, not the job's request: the Workload is built, and
    // compared, without it, so a stopped job whose patch is still being removed is not taken
    // for a changed one.
    let requested = patches
        .iter()
        .filter(|p| p.get("manager").and_then(Value::as_str) != Some(KUEUE_MANAGER));
    for patch in requested {
        if let Some(patch) = patch
            .pointer("/trainingRuntimeSpec/template/spec")
            .filter(|p| p.is_object())
        {
            strategic_merge(spec, patch);
        }
    }
    if let Some(jobs) = spec.get_mut("replicatedJobs").and_then(Value::as_array_mut) {
        let rank = |j: &Value| {
            j.get("name")
                .and_then(Value::as_str)
                .and_then(|n| order.get(n).copied())
                .unwrap_or(0)
        };
        jobs.sort_by_key(rank);
    }
}

/// `spec.trainer.numNodes` as the ML-policy plugins apply it.
fn apply_num_nodes(steps: &mut [Step], policy: &Policy, trainer: Option<&Value>) {
    let Some(num_nodes) = int(trainer.and_then(|t| t.get("numNodes"))) else {
        return;
    };
    // The plain-ML plugin serves every runtime that is not torch, MPI or JAX.
    let plain = !(policy.torch || policy.mpi || policy.jax);
    if (policy.torch || policy.jax || policy.xgboost || plain)
        && let Some(step) = steps
            .iter_mut()
            .find(|s| s.ancestor.as_deref() == Some(TRAINER))
    {
        step.count = num_nodes;
    }
    if policy.mpi
        && let Some(step) = steps.iter_mut().find(|s| s.name == NODE)
    {
        step.count = if policy.launcher_as_node {
            (num_nodes - 1).max(1)
        } else {
            num_nodes
        };
    }
}

/// The trainer's JobSet builder (`Initializer`, `Trainer`) on one replicated Job.
fn build(replicated: &mut Value, step: &Step, policy: &Policy, job: &DynamicObject) {
    let spec = job.data.get("spec");
    let ancestor = step.ancestor.as_deref();
    let initializer = match ancestor {
        Some(DATASET_INITIALIZER) => Some(("dataset", DATASET_INITIALIZER)),
        Some(MODEL_INITIALIZER) => Some(("model", MODEL_INITIALIZER)),
        _ => None,
    };
    if let Some((key, container_name)) = initializer {
        set_replicas_to_one(replicated);
        let source = spec.and_then(|s| s.pointer(&format!("/initializer/{key}")));
        if let (Some(source), Some(container)) = (source, container_mut(replicated, container_name))
        {
            if let Some(uri) = source.get("storageUri").and_then(Value::as_str) {
                upsert_env(container, &[json!({"name": STORAGE_URI, "value": uri})]);
            }
            if let Some(env) = source.get("env").and_then(Value::as_array) {
                upsert_env(container, env);
            }
            if let Some(secret) = source.pointer("/secretRef/name").and_then(Value::as_str)
                && let Some(container) = container.as_object_mut()
                && let Some(env_from) = container
                    .entry("envFrom")
                    .or_insert_with(|| json!([]))
                    .as_array_mut()
            {
                env_from.push(json!({"secretRef": {"name": secret}}));
            }
        }
    }
    let trainer = spec.and_then(|s| s.get("trainer"));
    if ancestor == Some(TRAINER) {
        set_replicas_to_one(replicated);
        if let (Some(trainer), Some(Value::Object(container))) =
            (trainer, container_mut(replicated, NODE))
        {
            for field in ["image", "command", "args"] {
                if let Some(value) = trainer.get(field).filter(|v| !v.is_null()) {
                    container.insert(field.to_owned(), value.clone());
                }
            }
        }
    }
    if (ancestor == Some(TRAINER) || policy.launcher_as_node && step.name == NODE)
        && let Some(env) = trainer.and_then(|t| t.get("env")).and_then(Value::as_array)
        && let Some(container) = container_mut(replicated, NODE)
    {
        upsert_env(container, env);
    }
}

fn set_replicas_to_one(replicated: &mut Value) {
    if let Some(replicated) = replicated.as_object_mut() {
        replicated.insert("replicas".to_owned(), json!(1));
    }
}

/// The first container named `name` of the replicated Job's pod template.
fn container_mut<'a>(replicated: &'a mut Value, name: &str) -> Option<&'a mut Value> {
    replicated
        .pointer_mut("/template/spec/template/spec/containers")?
        .as_array_mut()?
        .iter_mut()
        .find(|c| c.get("name").and_then(Value::as_str) == Some(name))
}

/// Each variable replaces the container's one of its name, or is appended.
fn upsert_env(container: &mut Value, vars: &[Value]) {
    let Some(env) = container
        .as_object_mut()
        .and_then(|c| c.entry("env").or_insert_with(|| json!([])).as_array_mut())
    else {
        return;
    };
    for var in vars {
        let name = var.get("name");
        match env.iter_mut().find(|e| e.get("name") == name) {
            Some(existing) => *existing = var.clone(),
            None => env.push(var.clone()),
        }
    }
}

/// The object at `path`, created empty (with every object on the way) when absent.
fn object_at<'a>(value: &'a mut Value, path: &[&str]) -> Option<&'a mut Map<String, Value>> {
    let mut current = value;
    for key in path {
        let object = current.as_object_mut()?;
        let next = object.entry(*key).or_insert_with(|| json!({}));
        if next.is_null() {
            *next = json!({});
        }
        current = next;
    }
    current.as_object_mut()
}

#[cfg(test)]
mod tests;
