//! Starting and stopping a job of any kind: Kueue's `RunWithPodSetsInfo` and
//! `RestorePodSetsInfo`, applied to each pod template at its pointer, or written by a kind that
//! keeps its admission elsewhere ([`OwnAdmission`](super::kind::OwnAdmission)).
//!
//! Only the fields the admission owns are written back into a template (labels, annotations,
//! nodeSelector, tolerations, scheduling gates), so fields kuota's pod types do not know survive.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::DynamicObject;
use serde_json::{Map, Value};

use crate::api::Workload;
use crate::engine::features::FeatureGates;

use super::super::pod_set_info::{FlavorInfo, PodSetInfo, PodSetInfoError, pod_set_infos};
use super::kind::{JobKind, KindError};
use super::workload::{FrameworkError, pod_set_source, template_at};

/// Why a job cannot be started with its admission.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    /// The admission's pod-set infos cannot be built or do not fit the job's templates.
    #[error(transparent)]
    PodSetInfo(#[from] PodSetInfoError),
    /// A pod template cannot be read.
    #[error(transparent)]
    Template(Box<FrameworkError>),
    /// The kind's rules cannot resume or resize the job.
    #[error(transparent)]
    Kind(#[from] KindError),
}

impl From<FrameworkError> for StartError {
    fn from(error: FrameworkError) -> Self {
        Self::Template(Box::new(error))
    }
}

impl StartError {
    /// Whether retrying cannot help: Kueue then finishes the Workload with `FailedToStart`.
    pub fn is_permanent(&self) -> bool {
        match self {
            Self::PodSetInfo(e) => e.is_permanent(),
            // The referenced object may yet be created.
            Self::Template(e) => !matches!(**e, FrameworkError::ReferenceMissing { .. }),
            Self::Kind(_) => true,
        }
    }
}

/// The job as started with `workload`'s admission: each template merged with its pod set's
/// info (flavors' node selectors and tolerations, admission labels and annotations, scheduling
/// gates including the topology gate), partially admitted pod sets resized, and resumed. A kind
/// with its own admission writes the infos itself. `referenced` is the object the job builds its
/// pod sets from, if its kind reads one and it exists.
pub fn start(
    kind: &dyn JobKind,
    job: &DynamicObject,
    referenced: Option<&DynamicObject>,
    workload: &Workload,
    flavors: &BTreeMap<String, FlavorInfo>,
    gates: &FeatureGates,
) -> Result<DynamicObject, StartError> {
    let infos = pod_set_infos(workload, flavors, gates)?;
    let source = pod_set_source(kind, job, referenced)?;
    let pod_sets = kind.pod_sets(&source)?;
    if infos.len() != pod_sets.len() {
        return Err(PodSetInfoError::PodSetCount {
            want: pod_sets.len(),
            got: infos.len(),
        }
        .into());
    }
    let mut started = job.clone();
    if let Some(own) = kind.own_admission() {
        own.run_with(&mut started, &infos)?;
        kind.set_suspended(&mut started, false)?;
        return Ok(started);
    }
    for pod_set in &pod_sets {
        let info = infos
            .iter()
            .find(|info| info.name == pod_set.name)
            .ok_or_else(|| PodSetInfoError::MissingPodSet {
                pod_set: pod_set.name.clone(),
            })?;
        let mut template = template_at(kind, job, pod_set)?;
        let (meta, spec) = parts(&mut template);
        info.merge_into(meta, spec)?;
        if started.data.pointer(&pod_set.template).is_none()
            && let Some(default) = kind.default_template(job, pod_set)
        {
            insert_at(kind, &mut started, &pod_set.template, default)?;
        }
        write_admission_fields(&mut started, &pod_set.template, meta, spec);
        if pod_set.min_count.is_some() && info.count != pod_set.count {
            kind.set_count(&mut started, &pod_set.name, info.count)?;
        }
    }
    kind.set_suspended(&mut started, false)?;
    Ok(started)
}

/// The job suspended, each template restored to the Workload's copy of it (labels, annotations,
/// nodeSelector, tolerations, scheduling gates) and each resized pod set to its requested count;
/// `None` when the job already is so. A kind with its own admission is first only suspended,
/// and restored once none of its pods is active (Kueue's custom `Stop`).
pub fn stop(
    kind: &dyn JobKind,
    job: &DynamicObject,
    workload: &Workload,
) -> Result<Option<DynamicObject>, StartError> {
    let mut stopped = job.clone();
    if let Some(own) = kind.own_admission() {
        let changed = if kind.is_suspended(job) {
            !kind.is_active(job) && own.restore(&mut stopped)
        } else {
            kind.set_suspended(&mut stopped, true)?;
            true
        };
        return Ok(changed.then_some(stopped));
    }
    if !kind.is_suspended(job) {
        kind.set_suspended(&mut stopped, true)?;
    }
    for pod_set in &kind.pod_sets(job)? {
        let Some(original) = workload
            .spec
            .pod_sets
            .iter()
            .find(|p| p.name == pod_set.name)
        else {
            continue;
        };
        let info = PodSetInfo::from_pod_set(original);
        let mut template = template_at(kind, job, pod_set)?;
        let (meta, spec) = parts(&mut template);
        if info.restore_into(meta, spec) {
            write_admission_fields(&mut stopped, &pod_set.template, meta, spec);
        }
        if pod_set.min_count.is_some() && pod_set.count != info.count {
            kind.set_count(&mut stopped, &pod_set.name, info.count)?;
        }
    }
    Ok((stopped.data != job.data).then_some(stopped))
}

/// Writes `value` at `pointer`, whose parent must be an object (Kueue writes the default
/// template it started a pod set with into the job).
fn insert_at(
    kind: &dyn JobKind,
    job: &mut DynamicObject,
    pointer: &str,
    value: Value,
) -> Result<(), KindError> {
    let (parent, last) = pointer.rsplit_once('/').unwrap_or(("", pointer));
    let key = last.replace("~1", "/").replace("~0", "~");
    let name = job.metadata.name.clone().unwrap_or_default();
    let object = job
        .data
        .pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .ok_or_else(|| KindError::Missing {
            kind: kind.id().kind,
            job: name,
            field: parent.trim_start_matches('/').replace('/', "."),
        })?;
    object.insert(key, value);
    Ok(())
}

/// A template's metadata and spec, created empty when absent.
fn parts(template: &mut PodTemplateSpec) -> (&mut ObjectMeta, &mut PodSpec) {
    (
        template.metadata.get_or_insert_default(),
        template.spec.get_or_insert_default(),
    )
}

/// Writes the fields an admission owns into the template at `pointer`, dropping the ones that
/// are now unset. The template was read at `pointer`, so it is an object there.
fn write_admission_fields(
    job: &mut DynamicObject,
    pointer: &str,
    meta: &ObjectMeta,
    spec: &PodSpec,
) {
    let Some(template) = job.data.pointer_mut(pointer).and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(metadata) = object_entry(template, "metadata") {
        set_or_remove(metadata, "labels", to_value(&meta.labels));
        set_or_remove(metadata, "annotations", to_value(&meta.annotations));
    }
    if let Some(pod) = object_entry(template, "spec") {
        set_or_remove(pod, "nodeSelector", to_value(&spec.node_selector));
        set_or_remove(pod, "tolerations", to_value(&spec.tolerations));
        set_or_remove(pod, "schedulingGates", to_value(&spec.scheduling_gates));
    }
}

fn object_entry<'a>(
    object: &'a mut Map<String, Value>,
    key: &str,
) -> Option<&'a mut Map<String, Value>> {
    if !object.get(key).is_some_and(Value::is_object) {
        object.insert(key.to_owned(), Value::Object(Map::new()));
    }
    object.get_mut(key).and_then(Value::as_object_mut)
}

fn to_value<T: serde::Serialize>(field: &Option<T>) -> Option<Value> {
    field.as_ref().and_then(|v| serde_json::to_value(v).ok())
}

fn set_or_remove(object: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    match value {
        Some(value) => {
            object.insert(key.to_owned(), value);
        }
        None => {
            object.remove(key);
        }
    }
}

#[cfg(test)]
mod tests;
