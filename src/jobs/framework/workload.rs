//! The Workload the framework creates for a job of any kind (Kueue's `ConstructWorkload`), and
//! whether a job still matches its Workload (Kueue's `EquivalentToWorkload`).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::DynamicObject;
use serde::Deserialize;

use crate::api::keys::labels;
use crate::api::name_syntax::check_dns1123_subdomain;
use crate::api::rare_list::RareList;
use crate::api::workload::PodSet;
use crate::api::{Workload, WorkloadSpec};

use super::super::copied_labels::{add_labels, copied_labels};
use super::super::distinct_env::distinct_env;
use super::super::names::{Owner, owned_workload_metadata, owner_workload_name};
use super::super::priority::{MissingClass, PriorityLookup};
use super::super::scope::queue_name;
use super::super::topology_request::{TopologyAnnotationError, topology_request};
use super::kind::{JobKind, KindError, KindPodSet};

/// Labels kuota writes on pod templates when it starts a job. They describe an admission, not
/// the request, so the Workload's copy of a template leaves them out.
const ADMISSION_LABELS: [&str; 3] = [
    labels::POD_SET,
    labels::LOCAL_QUEUE_NAME,
    labels::CLUSTER_QUEUE_NAME,
];

/// What building a Workload reads besides the job.
#[derive(Clone, Copy, Debug)]
pub struct WorkloadContext<'a> {
    pub priorities: &'a PriorityLookup,
    /// `labelKeysToCopy` of Kueue's configuration.
    pub label_keys_to_copy: &'a [String],
    /// The object the job references for its pod sets ([`JobKind::reference`]), if it exists.
    pub referenced: Option<&'a DynamicObject>,
}

/// Why a job has no Workload. `kind` and `job` (`namespace/name`) name the object.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameworkError {
    /// A metadata field the API server sets is empty: the job has not been created yet.
    #[error("{kind} {job}: metadata.{field} is empty; the API server sets it at creation")]
    MissingMetadata {
        kind: &'static str,
        job: String,
        field: &'static str,
    },
    /// A label kuota reads has a value it cannot use.
    #[error("{kind} {job}: label {key}={value:?}: {reason}")]
    InvalidLabel {
        kind: &'static str,
        job: String,
        key: &'static str,
        value: String,
        reason: String,
    },
    /// A pod set's template is absent at its pointer.
    #[error("{kind} {job}: pod set {pod_set:?}: no pod template at {pointer}")]
    TemplateMissing {
        kind: &'static str,
        job: String,
        pod_set: String,
        pointer: String,
    },
    /// A pod set's template is not a PodTemplateSpec.
    #[error("{kind} {job}: pod set {pod_set:?}: {pointer} is not a pod template: {reason}")]
    TemplateInvalid {
        kind: &'static str,
        job: String,
        pod_set: String,
        pointer: String,
        reason: String,
    },
    /// A pod template's topology annotations do not form a valid request.
    #[error("{kind} {job}: pod set {pod_set:?}: pod template {problem}")]
    Topology {
        kind: &'static str,
        job: String,
        pod_set: String,
        problem: Box<TopologyAnnotationError>,
    },
    /// The priority-class label names a WorkloadPriorityClass that does not exist.
    #[error(
        "{kind} {job}: label {}={name:?}: WorkloadPriorityClass {name:?} does not exist",
        labels::PRIORITY_CLASS
    )]
    WorkloadPriorityClassNotFound {
        kind: &'static str,
        job: String,
        name: String,
    },
    /// A pod template names a PriorityClass that does not exist.
    #[error("{kind} {job}: priorityClassName={name:?}: PriorityClass {name:?} does not exist")]
    PriorityClassNotFound {
        kind: &'static str,
        job: String,
        name: String,
    },
    /// The object the job builds its pod sets from does not exist (yet).
    #[error("{kind} {job}: {field}: {referenced} does not exist; the job waits for it")]
    ReferenceMissing {
        kind: &'static str,
        job: String,
        field: &'static str,
        referenced: String,
    },
    /// The kind's own rules could not read the object.
    #[error(transparent)]
    Kind(#[from] KindError),
}

/// The object `job`'s pod sets are read from: the job itself, or its kind's composition of the
/// job and the object it references, which must exist.
pub fn pod_set_source<'a>(
    kind: &dyn JobKind,
    job: &'a DynamicObject,
    referenced: Option<&DynamicObject>,
) -> Result<Cow<'a, DynamicObject>, FrameworkError> {
    let Some(reference) = kind.reference(job)? else {
        return Ok(Cow::Borrowed(job));
    };
    let referenced = referenced.ok_or_else(|| FrameworkError::ReferenceMissing {
        kind: kind.id().kind,
        job: job_key(job),
        field: reference.field,
        referenced: reference.to_string(),
    })?;
    Ok(match kind.compose(job, referenced)? {
        Some(composed) => Cow::Owned(composed),
        None => Cow::Borrowed(job),
    })
}

/// The Workload for `job`, before any admission: named as Kueue names it, owned by the job, with
/// one pod set per pod set of the kind, its priority, queue name and copied labels.
pub fn workload_for(
    kind: &dyn JobKind,
    job: &DynamicObject,
    ctx: WorkloadContext<'_>,
) -> Result<Workload, FrameworkError> {
    let id = kind.id();
    let identity = Identity::of(kind, job)?;
    let queue = queue_name(&job.metadata);
    if let Some(queue) = queue {
        check_dns1123_subdomain(queue).map_err(|reason| FrameworkError::InvalidLabel {
            kind: id.kind,
            job: identity.key.clone(),
            key: labels::QUEUE_NAME,
            value: queue.to_owned(),
            reason: format!("not a LocalQueue name: {reason}"),
        })?;
    }
    let source = pod_set_source(kind, job, ctx.referenced)?;
    let pod_sets = workload_pod_sets(kind, &source)?;
    // Kueue takes the first pod template's priorityClassName that is set.
    let pod_priority_class = pod_sets.iter().find_map(|p| {
        p.template
            .spec
            .as_ref()
            .and_then(|s| s.priority_class_name.as_deref())
            .filter(|n| !n.is_empty())
    });
    let workload_priority_class = job
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(labels::PRIORITY_CLASS))
        .map(String::as_str);
    let priority = ctx
        .priorities
        .resolve(workload_priority_class, pod_priority_class)
        .map_err(|missing| match missing {
            MissingClass::WorkloadPriorityClass(name) => {
                FrameworkError::WorkloadPriorityClassNotFound {
                    kind: id.kind,
                    job: identity.key.clone(),
                    name,
                }
            }
            MissingClass::PriorityClass(name) => FrameworkError::PriorityClassNotFound {
                kind: id.kind,
                job: identity.key.clone(),
                name,
            },
        })?;
    let mut workload = Workload::new(
        &owner_workload_name(id.kind, id.group, identity.name, identity.uid),
        WorkloadSpec {
            pod_sets,
            queue_name: queue.map(str::to_owned),
            priority_class_ref: priority.class.map(Box::new),
            priority: Some(priority.value),
            active: Some(true),
            maximum_execution_time_seconds: None,
            preemption_gates: RareList::new(),
        },
    );
    workload.metadata = identity.workload_metadata(kind, workload.metadata);
    add_labels(
        &mut workload,
        copied_labels(job.metadata.labels.as_ref(), ctx.label_keys_to_copy),
    );
    Ok(workload)
}

/// The Workload's pod sets, read from the job (or the object [`pod_set_source`] composed) at
/// each pod set's pointer.
pub fn workload_pod_sets(
    kind: &dyn JobKind,
    job: &DynamicObject,
) -> Result<Vec<PodSet>, FrameworkError> {
    kind.pod_sets(job)?
        .iter()
        .map(|pod_set| workload_pod_set(kind, job, pod_set))
        .collect()
}

/// One pod set: its template without the admission's labels and with one environment variable
/// per name, its counts, and its topology request with the kind's rank labels.
fn workload_pod_set(
    kind: &dyn JobKind,
    job: &DynamicObject,
    pod_set: &KindPodSet,
) -> Result<PodSet, FrameworkError> {
    let mut template = template_at(kind, job, pod_set)?;
    kind.adjust_workload_template(job, pod_set, &mut template)?;
    if let Some(spec) = template.spec.as_mut() {
        distinct_env(spec);
    }
    if let Some(template_labels) = template.metadata.as_mut().and_then(|m| m.labels.as_mut()) {
        for label in ADMISSION_LABELS {
            template_labels.remove(label);
        }
    }
    let no_annotations = BTreeMap::new();
    let annotations = template
        .metadata
        .as_ref()
        .and_then(|m| m.annotations.as_ref())
        .unwrap_or(&no_annotations);
    let mut topology = topology_request(
        annotations,
        pod_set.count,
        pod_set.pod_index_label.as_deref().unwrap_or_default(),
    )
    .map_err(|problem| FrameworkError::Topology {
        kind: kind.id().kind,
        job: job_key(job),
        pod_set: pod_set.name.clone(),
        problem: Box::new(problem),
    })?;
    topology.pod_index_label = pod_set.pod_index_label.as_deref().map(str::to_owned);
    if let Some(sub_group) = &pod_set.sub_group {
        topology.sub_group_index_label = Some(sub_group.index_label.to_string());
        topology.sub_group_count = Some(sub_group.count);
    }
    Ok(PodSet {
        name: pod_set.name.clone(),
        template: Arc::new(template),
        count: pod_set.count,
        min_count: pod_set.min_count,
        topology_request: Some(Box::new(topology)),
    })
}

/// The pod template of `pod_set`, read from the job at its pointer, or the kind's default when
/// the job has none there.
pub(super) fn template_at(
    kind: &dyn JobKind,
    job: &DynamicObject,
    pod_set: &KindPodSet,
) -> Result<PodTemplateSpec, FrameworkError> {
    let default;
    let value = match job.data.pointer(&pod_set.template) {
        Some(value) => value,
        None => {
            default = kind.default_template(job, pod_set).ok_or_else(|| {
                FrameworkError::TemplateMissing {
                    kind: kind.id().kind,
                    job: job_key(job),
                    pod_set: pod_set.name.clone(),
                    pointer: pod_set.template.clone(),
                }
            })?;
            &default
        }
    };
    PodTemplateSpec::deserialize(value).map_err(|e| FrameworkError::TemplateInvalid {
        kind: kind.id().kind,
        job: job_key(job),
        pod_set: pod_set.name.clone(),
        pointer: pod_set.template.clone(),
        reason: e.to_string(),
    })
}

/// `namespace/name`, how errors name a job.
pub(super) fn job_key(job: &DynamicObject) -> String {
    format!(
        "{}/{}",
        job.metadata.namespace.as_deref().unwrap_or_default(),
        job.metadata.name.as_deref().unwrap_or_default()
    )
}

/// Name, namespace and UID of a job, all present.
struct Identity<'a> {
    name: &'a str,
    namespace: &'a str,
    uid: &'a str,
    key: String,
}

impl<'a> Identity<'a> {
    fn of(kind: &dyn JobKind, job: &'a DynamicObject) -> Result<Self, FrameworkError> {
        let meta = &job.metadata;
        let missing = |field| FrameworkError::MissingMetadata {
            kind: kind.id().kind,
            job: job_key(job),
            field,
        };
        let present = |f: &'a Option<String>| f.as_deref().filter(|s| !s.is_empty());
        Ok(Identity {
            name: present(&meta.name).ok_or_else(|| missing("name"))?,
            namespace: present(&meta.namespace).ok_or_else(|| missing("namespace"))?,
            uid: present(&meta.uid).ok_or_else(|| missing("uid"))?,
            key: job_key(job),
        })
    }

    /// The Workload's metadata, the job its controller (as the batch Job's Workload has it).
    fn workload_metadata(&self, kind: &dyn JobKind, base: ObjectMeta) -> ObjectMeta {
        let id = kind.id();
        let owner = Owner {
            namespace: self.namespace,
            api_version: &id.api_version(),
            kind: id.kind,
            name: self.name,
            uid: self.uid,
        };
        owned_workload_metadata(owner, base)
    }
}

#[cfg(test)]
mod tests;
