//! Kueue's StatefulSet reconcilers, as pure rules. A managed StatefulSet is one pod group of
//! fixed size whose Workload is prebuilt from the StatefulSet: [`workload_for_statefulset`] (one
//! pod set `main` of `replicas` pods, the pod template's spec, the StatefulSet as an owner that
//! is not the controller, Kueue's name from the StatefulSet's UID). [`next_statefulset_step`]
//! is the next write: each pod the StatefulSet creates is labelled into the group
//! ([`group_pod`]: prebuilt Workload name, total count, fast admission since the StatefulSet
//! controller may create its pods one at a time, serving since the group never finishes, the
//! pod index label, role `main`), the pods follow the StatefulSet's queue, pods of the current
//! revision are released during a rolling update, and the Workload is created, kept owned and in
//! its queue, put on hold when the StatefulSet scales to zero (its quota released, never
//! requeued) and taken off hold when it scales up again.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use super::admission_gate::{copy_gates, follow_gates};
use super::distinct_env::distinct_env;
use super::names::owner_workload_name;
use super::pod_group::{annotation, label, pod_group_name};
use super::pod_set_info::gate_names;
use super::priority::PriorityLookup;
use super::scope::queue_name;
use super::statefulset::STATEFULSET_FRAMEWORK;
use super::topology_request::{TopologyAnnotationError, topology_request};
use crate::api::common::DEFAULT_POD_SET_NAME;
use crate::api::keys::{
    annotations, condition_types, finalizers, labels, quota_reserved_reasons, scheduling_gates,
};
use crate::api::rare_list::RareList;
use crate::api::workload::PodSet;
use crate::api::{ConditionEntry, HasConditions, ObjectKey, Workload, WorkloadSpec};
use crate::engine::features::{Feature, FeatureGates};

/// apiVersion of apps/v1 StatefulSet.
pub const STATEFULSET_API_VERSION: &str = "apps/v1";
/// Kind of apps/v1 StatefulSet.
pub const STATEFULSET_KIND: &str = "StatefulSet";
const STATEFULSET_GROUP: &str = "apps";
/// Kueue's `kueue.x-k8s.io/job-owner-gvk` value for a StatefulSet.
/// The StatefulSet kind as Kueue's `job-owner-gvk` annotation spells it.
pub const STATEFULSET_GVK: &str = "apps/v1, Kind=StatefulSet";
/// The label the StatefulSet controller gives each pod its ordinal in.
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";
/// The label naming the revision a pod was created from.
const CONTROLLER_REVISION_HASH: &str = "controller-revision-hash";
/// Kueue's message of the hold put on a scaled-to-zero StatefulSet's Workload.
pub const HOLD_MESSAGE: &str = "StatefulSet scaled to zero; workload on hold";
/// Kueue's message when the hold comes off again.
pub const HOLD_RELEASED_MESSAGE: &str = "Workload no longer on hold; waiting for quota reservation";

/// Why a StatefulSet has no Workload.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StatefulSetError {
    #[error(
        "StatefulSet {statefulset}: metadata.name, metadata.namespace and metadata.uid must be set"
    )]
    MissingIdentity { statefulset: String },
    #[error("StatefulSet {statefulset}: pod template {problem}")]
    Topology {
        statefulset: String,
        problem: TopologyAnnotationError,
    },
    #[error("StatefulSet {statefulset}: {missing} does not exist")]
    PriorityClassNotFound {
        statefulset: String,
        missing: String,
    },
}

/// The replicas a StatefulSet asks for (1 when unset, as the API defaults it).
pub fn replicas(statefulset: &StatefulSet) -> i32 {
    statefulset
        .spec
        .as_ref()
        .and_then(|s| s.replicas)
        .unwrap_or(1)
}

/// The names the StatefulSet's Workload may have, the one to create first: Kueue's name from
/// the StatefulSet's name and UID, then the name without the UID that Kueue's earlier releases
/// gave it.
pub fn statefulset_workload_names(statefulset: &StatefulSet) -> [String; 2] {
    let name = statefulset.metadata.name.as_deref().unwrap_or_default();
    let uid = statefulset.metadata.uid.as_deref().unwrap_or_default();
    let named = |uid: &str| owner_workload_name(STATEFULSET_KIND, STATEFULSET_GROUP, name, uid);
    [named(uid), named("")]
}

/// Whether kuota manages the StatefulSet: its webhook marked the pod template as suspended by
/// the `statefulset` integration (not by another framework that owns the StatefulSet).
pub fn statefulset_managed(statefulset: &StatefulSet) -> bool {
    statefulset
        .spec
        .as_ref()
        .and_then(|s| s.template.metadata.as_ref())
        .and_then(|m| m.annotations.as_ref())
        .and_then(|a| a.get(annotations::POD_SUSPENDING_PARENT))
        .is_some_and(|v| v == STATEFULSET_FRAMEWORK)
}

/// The owner reference the Workload carries to its StatefulSet (not as its controller).
fn owner(statefulset: &StatefulSet) -> OwnerReference {
    OwnerReference {
        api_version: STATEFULSET_API_VERSION.to_owned(),
        kind: STATEFULSET_KIND.to_owned(),
        name: statefulset.metadata.name.clone().unwrap_or_default(),
        uid: statefulset.metadata.uid.clone().unwrap_or_default(),
        controller: None,
        block_owner_deletion: None,
    }
}

/// The Workload Kueue prebuilds for a StatefulSet: named `statefulset-<name>-<hash>`, marked a
/// group Workload, one pod set `main` of `replicas` pods with the template's spec and its
/// topology request (ranked by the pod index label), the StatefulSet's queue, priority and
/// admission gates, the `job-uid` label and the job-owner annotations.
pub fn workload_for_statefulset(
    statefulset: &StatefulSet,
    priorities: &PriorityLookup,
    gates: &FeatureGates,
) -> Result<Workload, StatefulSetError> {
    let meta = &statefulset.metadata;
    let key = ObjectKey::of(statefulset).to_string();
    let (Some(name), Some(namespace), Some(uid)) = (&meta.name, &meta.namespace, &meta.uid) else {
        return Err(StatefulSetError::MissingIdentity { statefulset: key });
    };
    let template = statefulset
        .spec
        .as_ref()
        .map(|s| s.template.clone())
        .unwrap_or_default();
    let mut spec = template.spec.unwrap_or_default();
    distinct_env(&mut spec);
    let no_annotations = BTreeMap::new();
    let template_annotations = template
        .metadata
        .as_ref()
        .and_then(|m| m.annotations.as_ref())
        .unwrap_or(&no_annotations);
    let count = replicas(statefulset);
    // As Kueue, the pod set asks for a placement only under topology-aware scheduling.
    let topology = if gates.enabled(Feature::TopologyAwareScheduling) {
        let request =
            topology_request(template_annotations, count, POD_INDEX_LABEL).map_err(|problem| {
                StatefulSetError::Topology {
                    statefulset: key.clone(),
                    problem,
                }
            })?;
        Some(Box::new(request))
    } else {
        None
    };
    let pod_class = spec
        .priority_class_name
        .as_deref()
        .filter(|n| !n.is_empty());
    let priority = priorities
        .resolve(label_of(meta, labels::PRIORITY_CLASS), pod_class)
        .map_err(|missing| StatefulSetError::PriorityClassNotFound {
            statefulset: key.clone(),
            missing: missing.to_string(),
        })?;
    let pod_set = PodSet {
        name: DEFAULT_POD_SET_NAME.to_owned(),
        template: std::sync::Arc::new(PodTemplateSpec {
            metadata: None,
            spec: Some(spec),
        }),
        count,
        min_count: None,
        topology_request: topology,
    };
    let [workload_name, _] = statefulset_workload_names(statefulset);
    let mut workload = Workload::new(
        &workload_name,
        WorkloadSpec {
            pod_sets: vec![pod_set],
            queue_name: queue_name(meta).map(str::to_owned),
            priority_class_ref: priority.class.map(Box::new),
            priority: Some(priority.value),
            active: Some(true),
            maximum_execution_time_seconds: label_of(meta, labels::MAX_EXEC_TIME_SECONDS)
                .and_then(|v| v.parse().ok())
                .filter(|s: &i32| *s > 0),
            preemption_gates: RareList::new(),
        },
    );
    workload.metadata = ObjectMeta {
        namespace: Some(namespace.clone()),
        labels: Some(BTreeMap::from([(labels::JOB_UID.to_owned(), uid.clone())])),
        annotations: Some(BTreeMap::from([
            (annotations::IS_GROUP_WORKLOAD.to_owned(), "true".to_owned()),
            (
                annotations::JOB_OWNER_GVK.to_owned(),
                STATEFULSET_GVK.to_owned(),
            ),
            (annotations::JOB_OWNER_NAME.to_owned(), name.clone()),
        ])),
        owner_references: Some(vec![owner(statefulset)]),
        finalizers: Some(vec![finalizers::RESOURCE_IN_USE.to_owned()]),
        ..workload.metadata
    };
    if gates.enabled(Feature::AdmissionGatedBy) {
        copy_gates(meta, &mut workload);
    }
    Ok(workload)
}

fn label_of<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    meta.labels
        .as_ref()?
        .get(key)
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}

/// What the StatefulSet reconciler reads besides the objects.
#[derive(Clone, Copy, Debug)]
pub struct StatefulSetContext<'a> {
    pub priorities: &'a PriorityLookup,
    pub gates: &'a FeatureGates,
    /// `manageJobsWithoutQueueName`.
    pub manage_without_queue_name: bool,
}

/// The one write to make next for a StatefulSet.
#[derive(Clone, Debug, PartialEq)]
pub enum StatefulSetStep {
    /// Nothing to do until the StatefulSet, its pods or its Workload change.
    Idle,
    /// Write these pods' labels, annotations and scheduling gates as given.
    PatchPods(Vec<Pod>),
    /// Create this Workload; `CreatedWorkload` on the StatefulSet.
    CreateWorkload(Box<Workload>),
    /// No Workload can be built: the warning to record on the StatefulSet.
    CannotCreate(String),
    /// Write this Workload (owner reference, queue, admission gates).
    UpdateWorkload(Box<Workload>),
    /// Release the Workload's quota and put it on hold (`QuotaReserved=False`, `OnHold`).
    Hold(Box<Workload>),
    /// Take the Workload off hold (`QuotaReserved=False`, `PendingEvaluation`).
    ReleaseHold(Box<Workload>),
}

/// The next step for a managed `statefulset`, its `workload` (found under one of
/// [`statefulset_workload_names`]) and the pods it controls. Kueue's order: the pods first (the
/// pod reconciler's labels, the queue label kept in step, current-revision pods released during
/// a rollout), then the Workload (created; owned, queued and gated as the StatefulSet; on hold
/// at zero replicas; off hold above zero).
pub fn next_statefulset_step(
    statefulset: &StatefulSet,
    workload: Option<&Workload>,
    pods: &[Pod],
    context: StatefulSetContext<'_>,
) -> StatefulSetStep {
    let workload_name = match workload {
        Some(w) => w.metadata.name.clone().unwrap_or_default(),
        None => statefulset_workload_names(statefulset)[0].clone(),
    };
    let patched: Vec<Pod> = pods
        .iter()
        .filter_map(|pod| {
            let mut written = pod.clone();
            let labelled = group_pod(statefulset, &workload_name, &mut written, context);
            let synced = sync_queue(statefulset, &workload_name, &mut written);
            let released = ungate_in_rollout(statefulset, &workload_name, &mut written);
            (labelled || synced || released).then_some(written)
        })
        .collect();
    if !patched.is_empty() {
        return StatefulSetStep::PatchPods(patched);
    }
    let count = replicas(statefulset);
    let queue = queue_name(&statefulset.metadata);
    let Some(workload) = workload else {
        if count > 0 && (queue.is_some() || context.manage_without_queue_name) {
            return match workload_for_statefulset(statefulset, context.priorities, context.gates) {
                Ok(created) => StatefulSetStep::CreateWorkload(Box::new(created)),
                Err(error) => StatefulSetStep::CannotCreate(error.to_string()),
            };
        }
        return StatefulSetStep::Idle;
    };
    let mut updated = workload.clone();
    let uid = statefulset.metadata.uid.as_deref().unwrap_or_default();
    let owned = workload
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.uid == uid);
    if !owned && count > 0 {
        // Kueue owns the Workload again when it scales up after an owner reference was dropped.
        updated
            .metadata
            .owner_references
            .get_or_insert_default()
            .push(owner(statefulset));
        let annotations = updated.metadata.annotations.get_or_insert_default();
        annotations.insert(
            annotations::JOB_OWNER_GVK.to_owned(),
            STATEFULSET_GVK.to_owned(),
        );
        annotations.insert(
            annotations::JOB_OWNER_NAME.to_owned(),
            statefulset.metadata.name.clone().unwrap_or_default(),
        );
    }
    if count > 0 && updated.spec.queue_name.as_deref() != queue {
        updated.spec.queue_name = queue.map(str::to_owned);
    }
    if context.gates.enabled(Feature::AdmissionGatedBy)
        && let Some((followed, _)) = follow_gates(&statefulset.metadata, &updated)
    {
        updated = followed;
    }
    if updated != *workload {
        return StatefulSetStep::UpdateWorkload(Box::new(updated));
    }
    let finished = workload.condition_is_true(condition_types::FINISHED);
    let reserved = workload
        .status
        .as_ref()
        .is_some_and(|s| s.admission.is_some());
    let active = workload.spec.active != Some(false);
    if count == 0 && reserved && !finished && active {
        return StatefulSetStep::Hold(Box::new(workload.clone()));
    }
    if count > 0 && on_hold(workload) {
        return StatefulSetStep::ReleaseHold(Box::new(workload.clone()));
    }
    StatefulSetStep::Idle
}

/// Kueue's `IsOnHold`: `QuotaReserved=False` with reason `OnHold`.
pub fn on_hold(workload: &Workload) -> bool {
    workload
        .condition(condition_types::QUOTA_RESERVED)
        .is_some_and(|c| c.is_false() && c.reason == quota_reserved_reasons::ON_HOLD)
}

/// Kueue's StatefulSet pod reconciler: a running pod of the StatefulSet joins its group. A pod
/// already in the group only follows the StatefulSet's queue; a pod of a StatefulSet naming no
/// queue is left alone unless `manageJobsWithoutQueueName`. Returns whether `pod` changed.
pub fn group_pod(
    statefulset: &StatefulSet,
    workload_name: &str,
    pod: &mut Pod,
    context: StatefulSetContext<'_>,
) -> bool {
    let terminated = matches!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    );
    if terminated || pod.metadata.deletion_timestamp.is_some() {
        return false;
    }
    let queue = queue_name(&statefulset.metadata);
    if pod_group_name(pod) == Some(workload_name) {
        return false;
    }
    if queue.is_none() && !context.manage_without_queue_name {
        return false;
    }
    let meta = &mut pod.metadata;
    let pod_labels = meta.labels.get_or_insert_default();
    pod_labels.insert(labels::MANAGED.to_owned(), labels::MANAGED_VALUE.to_owned());
    if let Some(queue) = queue {
        pod_labels.insert(labels::QUEUE_NAME.to_owned(), queue.to_owned());
    }
    if let Some(class) = label_of(&statefulset.metadata, labels::PRIORITY_CLASS) {
        pod_labels.insert(labels::PRIORITY_CLASS.to_owned(), class.to_owned());
    }
    let pod_annotations = meta.annotations.get_or_insert_default();
    let mut set = |key: &str, value: &str| {
        pod_annotations.insert(key.to_owned(), value.to_owned());
    };
    set(annotations::PREBUILT_WORKLOAD_NAME, workload_name);
    set(annotations::POD_GROUP_NAME, workload_name);
    set(
        annotations::POD_GROUP_TOTAL_COUNT,
        &replicas(statefulset).to_string(),
    );
    set(annotations::POD_GROUP_FAST_ADMISSION, "true");
    set(annotations::POD_GROUP_SERVING, "true");
    set(annotations::POD_GROUP_POD_INDEX_LABEL, POD_INDEX_LABEL);
    set(annotations::ROLE_HASH, DEFAULT_POD_SET_NAME);
    true
}

/// Kueue keeps the queue label of the group's pods that of the StatefulSet while it has
/// replicas. Returns whether `pod` changed.
fn sync_queue(statefulset: &StatefulSet, workload_name: &str, pod: &mut Pod) -> bool {
    let Some(queue) = queue_name(&statefulset.metadata) else {
        return false;
    };
    if replicas(statefulset) == 0
        || pod_group_name(pod) != Some(workload_name)
        || label(pod, labels::QUEUE_NAME) == Some(queue)
    {
        return false;
    }
    pod.metadata
        .labels
        .get_or_insert_default()
        .insert(labels::QUEUE_NAME.to_owned(), queue.to_owned());
    true
}

/// Kueue's `UngatePod`: while a rolling update is under way, a group pod of the current
/// (older) revision is released from the admission and topology gates, so the pods the update
/// has not reached yet keep running. Returns whether `pod` changed.
fn ungate_in_rollout(statefulset: &StatefulSet, workload_name: &str, pod: &mut Pod) -> bool {
    let status = statefulset.status.as_ref();
    let current = status.and_then(|s| s.current_revision.as_deref());
    let update = status.and_then(|s| s.update_revision.as_deref());
    let rolling = current != update && current == label(pod, CONTROLLER_REVISION_HASH);
    if !rolling || pod_group_name(pod) != Some(workload_name) {
        return false;
    }
    let Some(spec) = pod.spec.as_mut() else {
        return false;
    };
    let before = gate_names(spec);
    let kept: Vec<String> = before
        .iter()
        .filter(|g| *g != scheduling_gates::ADMISSION && *g != scheduling_gates::TOPOLOGY)
        .cloned()
        .collect();
    if kept.len() == before.len() {
        return false;
    }
    spec.scheduling_gates = (!kept.is_empty()).then(|| {
        kept.into_iter()
            .map(|name| k8s_openapi::api::core::v1::PodSchedulingGate { name })
            .collect()
    });
    true
}

/// Whether `pod` is controlled by `statefulset`.
pub fn controlled_by(pod: &Pod, statefulset: &StatefulSet) -> bool {
    let uid = statefulset.metadata.uid.as_deref().unwrap_or_default();
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.controller == Some(true) && o.kind == STATEFULSET_KIND && o.uid == uid)
}

/// Whether a pod was suspended by the `statefulset` integration.
pub fn suspended_by_statefulset(pod: &Pod) -> bool {
    annotation(pod, annotations::POD_SUSPENDING_PARENT) == Some(STATEFULSET_FRAMEWORK)
}

#[cfg(test)]
mod tests;
