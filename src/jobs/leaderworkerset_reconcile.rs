//! Kueue's LeaderWorkerSet reconciler, as pure rules. Each group of a managed LeaderWorkerSet
//! (one per replica) is a pod group under a Workload prebuilt for it ([`workload_for_lws_group`]:
//! pod sets `leader` (1) and `worker` (`size - 1`), or `main` (`size`) without a leader
//! template; named from the LeaderWorkerSet's name, group index and UID; the LeaderWorkerSet an
//! owner that is not the controller). [`next_lws_step`] is the next write, in Kueue's order:
//! the Workloads of missing groups created, those of existing groups kept in the
//! LeaderWorkerSet's queue, admission gates and priority class, those of removed groups
//! deleted; then each pod labelled into its group ([`group_lws_pod`]) so the pod integration
//! admits and releases the group as one.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::DynamicObject;

use super::admission_gate::{copy_gates, follow_gates};
use super::distinct_env::distinct_env;
use super::framework::KindId;
use super::leaderworkerset::{
    LEADER_POD_SET, LEADERWORKERSET_FRAMEWORK, TemplateAt, WORKER_INDEX_LABEL, has_leader_template,
    lws_replicas, lws_size, pod_set_count, read_template, templates,
};
use super::names::owner_workload_name;
use super::pod_group::{annotation, label};
use super::pod_set_info::gate_names;
use super::priority::{PriorityLookup, follow_priority_label};
use super::scope::queue_name;
use super::topology_request::{TopologyAnnotationError, topology_request};
use crate::api::common::DEFAULT_POD_SET_NAME;
use crate::api::keys::{annotations, finalizers, labels, scheduling_gates};
use crate::api::rare_list::RareList;
use crate::api::workload::PodSet;
use crate::api::{ObjectKey, Workload, WorkloadSpec};
use crate::engine::features::{Feature, FeatureGates};

/// How the API serves LeaderWorkerSets.
pub static LEADERWORKERSET: KindId = KindId {
    group: "leaderworkerset.x-k8s.io",
    version: "v1",
    kind: "LeaderWorkerSet",
    plural: "leaderworkersets",
    framework: LEADERWORKERSET_FRAMEWORK,
};
/// Kueue's `kueue.x-k8s.io/job-owner-gvk` value for a LeaderWorkerSet.
const LWS_GVK: &str = "leaderworkerset.x-k8s.io/v1, Kind=LeaderWorkerSet";
/// The label naming the LeaderWorkerSet of a pod (and of its StatefulSets).
pub const LWS_NAME_LABEL: &str = "leaderworkerset.sigs.k8s.io/name";
/// The label holding the index of a pod's group, set when the pod is created.
const GROUP_INDEX_LABEL: &str = "leaderworkerset.sigs.k8s.io/group-index";
/// The annotation a worker pod names its leader in; a leader has none.
const LEADER_NAME_ANNOTATION: &str = "leaderworkerset.sigs.k8s.io/leader-name";
/// The LeaderWorkerSet controller's own keys, left out of the Workload's pod templates.
const LWS_DOMAIN: &str = "leaderworkerset.sigs.k8s.io";
/// Kueue's annotation with the group index a Workload was made for.
const COMPONENT_WORKLOAD_INDEX: &str = "kueue.x-k8s.io/component-workload-index";

/// Why a group of a LeaderWorkerSet has no Workload.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LwsError {
    #[error(
        "LeaderWorkerSet {lws}: metadata.name, metadata.namespace and metadata.uid must be set"
    )]
    MissingIdentity { lws: String },
    #[error("LeaderWorkerSet {lws}: {problem}")]
    Template { lws: String, problem: String },
    #[error("LeaderWorkerSet {lws}: {path}.metadata: {problem}")]
    Topology {
        lws: String,
        path: &'static str,
        problem: TopologyAnnotationError,
    },
    #[error("LeaderWorkerSet {lws}: {missing} does not exist")]
    PriorityClassNotFound { lws: String, missing: String },
}

fn key(lws: &DynamicObject) -> String {
    ObjectKey::of(lws).to_string()
}

/// Kueue's name of the Workload of group `index`: `leaderworkerset-<name>-<index>-<hash>`, the
/// hash over the LeaderWorkerSet's kind, group, `<name>-<index>` and UID.
pub fn lws_group_workload_name(lws: &DynamicObject, index: &str) -> String {
    let name = lws.metadata.name.as_deref().unwrap_or_default();
    let uid = lws.metadata.uid.as_deref().unwrap_or_default();
    owner_workload_name(
        LEADERWORKERSET.kind,
        LEADERWORKERSET.group,
        &format!("{name}-{index}"),
        uid,
    )
}

/// Whether kuota manages the LeaderWorkerSet: its webhook marked the worker template as
/// suspended by the LeaderWorkerSet integration.
pub fn lws_managed(lws: &DynamicObject) -> bool {
    lws.data
        .pointer("/spec/leaderWorkerTemplate/workerTemplate/metadata/annotations")
        .and_then(|a| a.get(annotations::POD_SUSPENDING_PARENT))
        .and_then(serde_json::Value::as_str)
        == Some(LEADERWORKERSET_FRAMEWORK)
}

/// Whether a pod was suspended by the LeaderWorkerSet integration.
pub fn suspended_by_lws(pod: &Pod) -> bool {
    annotation(pod, annotations::POD_SUSPENDING_PARENT) == Some(LEADERWORKERSET_FRAMEWORK)
}

/// The name of the LeaderWorkerSet a pod belongs to, from its label.
pub fn lws_of_pod(pod: &Pod) -> Option<&str> {
    label(pod, LWS_NAME_LABEL).filter(|n| !n.is_empty())
}

/// Keys of the LeaderWorkerSet controller dropped, but its name label.
fn without_lws_keys(map: Option<BTreeMap<String, String>>) -> Option<BTreeMap<String, String>> {
    map.map(|all| {
        all.into_iter()
            .filter(|(k, _)| !k.starts_with(LWS_DOMAIN) || k == LWS_NAME_LABEL)
            .collect()
    })
}

/// One group's pod set made from `template`: the template with the LeaderWorkerSet's own keys
/// dropped and duplicate environment variables removed, and under TAS its topology request (the
/// workers ranked by their worker index; the single leader by none).
fn pod_set(
    lws: &DynamicObject,
    template: TemplateAt,
    gates: &FeatureGates,
) -> Result<PodSet, LwsError> {
    let read = read_template(lws, template).map_err(|problem| LwsError::Template {
        lws: key(lws),
        problem,
    })?;
    let count = i32::try_from(pod_set_count(lws, template)).unwrap_or(i32::MAX);
    let meta = read.metadata.unwrap_or_default();
    let topology = if gates.enabled(Feature::TopologyAwareScheduling) {
        let found = meta.annotations.clone().unwrap_or_default();
        let mut request =
            topology_request(&found, count, WORKER_INDEX_LABEL).map_err(|problem| {
                LwsError::Topology {
                    lws: key(lws),
                    path: template.path,
                    problem,
                }
            })?;
        if template.pod_set == LEADER_POD_SET {
            request.pod_index_label = None;
        }
        Some(Box::new(request))
    } else {
        None
    };
    let mut spec = read.spec.unwrap_or_default();
    distinct_env(&mut spec);
    Ok(PodSet {
        name: template.pod_set.to_owned(),
        template: Arc::new(PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: without_lws_keys(meta.labels),
                annotations: without_lws_keys(meta.annotations),
                ..ObjectMeta::default()
            }),
            spec: Some(spec),
        }),
        count,
        min_count: None,
        topology_request: topology,
    })
}

/// What the LeaderWorkerSet reconciler reads besides the objects.
#[derive(Clone, Copy, Debug)]
pub struct LwsContext<'a> {
    pub priorities: &'a PriorityLookup,
    pub gates: &'a FeatureGates,
    /// `integrations.labelKeysToCopy`: LeaderWorkerSet labels copied onto its Workloads.
    pub label_keys_to_copy: &'a [String],
}

/// The Workload Kueue prebuilds for group `index` of a LeaderWorkerSet: a group Workload with
/// the pod sets of one group, the LeaderWorkerSet's queue, priority, maximum execution time,
/// admission gates and copied labels, the `job-uid` label, the job-owner and group-index
/// annotations, and the LeaderWorkerSet as an owner that is not the controller.
pub fn workload_for_lws_group(
    lws: &DynamicObject,
    index: i64,
    context: LwsContext<'_>,
) -> Result<Workload, LwsError> {
    let meta = &lws.metadata;
    let (Some(name), Some(namespace), Some(uid)) = (&meta.name, &meta.namespace, &meta.uid) else {
        return Err(LwsError::MissingIdentity { lws: key(lws) });
    };
    let pod_sets = templates(lws)
        .into_iter()
        .map(|template| pod_set(lws, template, context.gates))
        .collect::<Result<Vec<_>, _>>()?;
    let pod_class = pod_sets.iter().find_map(|ps| {
        ps.template
            .spec
            .as_ref()?
            .priority_class_name
            .as_deref()
            .filter(|n| !n.is_empty())
    });
    let lws_labels = meta.labels.clone().unwrap_or_default();
    let class = lws_labels
        .get(labels::PRIORITY_CLASS)
        .map(String::as_str)
        .filter(|c| !c.is_empty());
    let priority = context
        .priorities
        .resolve(class, pod_class)
        .map_err(|missing| LwsError::PriorityClassNotFound {
            lws: key(lws),
            missing: missing.to_string(),
        })?;
    let mut workload = Workload::new(
        &lws_group_workload_name(lws, &index.to_string()),
        WorkloadSpec {
            pod_sets,
            queue_name: queue_name(meta).map(str::to_owned),
            priority_class_ref: priority.class.map(Box::new),
            priority: Some(priority.value),
            active: Some(true),
            maximum_execution_time_seconds: lws_labels
                .get(labels::MAX_EXEC_TIME_SECONDS)
                .and_then(|v| v.parse().ok())
                .filter(|s: &i32| *s > 0),
            preemption_gates: RareList::new(),
        },
    );
    let mut workload_labels: BTreeMap<String, String> = lws_labels
        .into_iter()
        .filter(|(k, _)| context.label_keys_to_copy.contains(k))
        .collect();
    workload_labels.insert(labels::JOB_UID.to_owned(), uid.clone());
    workload.metadata = ObjectMeta {
        namespace: Some(namespace.clone()),
        labels: Some(workload_labels),
        annotations: Some(BTreeMap::from([
            (annotations::IS_GROUP_WORKLOAD.to_owned(), "true".to_owned()),
            (annotations::JOB_OWNER_GVK.to_owned(), LWS_GVK.to_owned()),
            (annotations::JOB_OWNER_NAME.to_owned(), name.clone()),
            (COMPONENT_WORKLOAD_INDEX.to_owned(), index.to_string()),
        ])),
        owner_references: Some(vec![OwnerReference {
            api_version: LEADERWORKERSET.api_version(),
            kind: LEADERWORKERSET.kind.to_owned(),
            name: name.clone(),
            uid: uid.clone(),
            controller: None,
            block_owner_deletion: None,
        }]),
        finalizers: Some(vec![finalizers::RESOURCE_IN_USE.to_owned()]),
        ..workload.metadata
    };
    if context.gates.enabled(Feature::AdmissionGatedBy) {
        copy_gates(meta, &mut workload);
    }
    Ok(workload)
}

/// The groups a LeaderWorkerSet runs: `spec.replicas`, or during a rolling update with surge the
/// more groups its status counts, as Kueue keeps their Workloads until the surge is over.
fn groups(lws: &DynamicObject) -> i64 {
    let replicas = lws_replicas(lws).max(0);
    let status = |field: &str| {
        lws.data
            .pointer(&format!("/status/{field}"))
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(0)
    };
    let surge = lws
        .data
        .pointer("/spec/rolloutStrategy/rollingUpdateConfiguration/maxSurge")
        .is_some_and(|s| s.as_i64().is_some_and(|n| n > 0) || s.as_str().is_some_and(surge_set));
    if surge && status("replicas") > replicas && status("updatedReplicas") < replicas {
        status("replicas")
    } else {
        replicas
    }
}

/// Whether a `maxSurge` given as a string (`"2"`, `"25%"`) asks for any surge. Kueue reads the
/// string with Go's `Atoi`, so a percentage never counts there and the surge groups' pods wait
/// gated without Workloads; kuota counts any positive percentage, so they get theirs.
fn surge_set(value: &str) -> bool {
    value
        .trim_end_matches('%')
        .parse::<i64>()
        .is_ok_and(|n| n > 0)
}

/// The one write to make next for a LeaderWorkerSet.
#[derive(Clone, Debug, PartialEq)]
pub enum LwsStep {
    /// Nothing to do until the LeaderWorkerSet, its pods or its Workloads change.
    Idle,
    /// Create these Workloads; `CreatedWorkload` on the LeaderWorkerSet for each.
    CreateWorkloads(Vec<Workload>),
    /// No Workload can be built: the warning to record on the LeaderWorkerSet.
    CannotCreate(String),
    /// Write these Workloads (queue, admission gates, priority).
    UpdateWorkloads(Vec<Workload>),
    /// Delete the Workloads of groups the LeaderWorkerSet no longer has.
    DeleteWorkloads(Vec<Workload>),
    /// Write these pods' labels and annotations as given.
    PatchPods(Vec<Pod>),
}

/// The next step for a managed `lws`, the Workloads it owns and its pods, in Kueue's order: the
/// Workloads first (created for missing groups, kept in step, deleted for removed groups), then
/// the pods labelled into their groups.
pub fn next_lws_step(
    lws: &DynamicObject,
    owned: &[&Workload],
    pods: &[Pod],
    context: LwsContext<'_>,
) -> LwsStep {
    let wanted: BTreeMap<String, i64> = (0..groups(lws))
        .map(|index| (lws_group_workload_name(lws, &index.to_string()), index))
        .collect();
    let existing: BTreeSet<&str> = owned
        .iter()
        .filter_map(|w| w.metadata.name.as_deref())
        .collect();
    let missing: Vec<i64> = wanted
        .iter()
        .filter(|(name, _)| !existing.contains(name.as_str()))
        .map(|(_, index)| *index)
        .collect();
    if !missing.is_empty() {
        return match missing
            .into_iter()
            .map(|index| workload_for_lws_group(lws, index, context))
            .collect::<Result<Vec<_>, _>>()
        {
            Ok(created) => LwsStep::CreateWorkloads(created),
            Err(error) => LwsStep::CannotCreate(error.to_string()),
        };
    }
    let updated: Vec<Workload> = owned
        .iter()
        .filter(|w| wanted.contains_key(w.metadata.name.as_deref().unwrap_or_default()))
        .filter_map(|w| kept_in_step(lws, w, context))
        .collect();
    if !updated.is_empty() {
        return LwsStep::UpdateWorkloads(updated);
    }
    let removed: Vec<Workload> = owned
        .iter()
        .filter(|w| !wanted.contains_key(w.metadata.name.as_deref().unwrap_or_default()))
        .filter(|w| w.metadata.deletion_timestamp.is_none())
        .map(|w| (*w).clone())
        .collect();
    if !removed.is_empty() {
        return LwsStep::DeleteWorkloads(removed);
    }
    let patched: Vec<Pod> = pods
        .iter()
        .filter_map(|pod| {
            let mut written = pod.clone();
            group_lws_pod(lws, &mut written).then_some(written)
        })
        .collect();
    if patched.is_empty() {
        LwsStep::Idle
    } else {
        LwsStep::PatchPods(patched)
    }
}

/// The Workload of an existing group as Kueue keeps it: in the LeaderWorkerSet's queue, with
/// its admission gates (gate `AdmissionGatedBy`) and the priority of its priority-class label.
fn kept_in_step(
    lws: &DynamicObject,
    workload: &Workload,
    context: LwsContext<'_>,
) -> Option<Workload> {
    let mut updated = workload.clone();
    let queue = queue_name(&lws.metadata);
    if updated.spec.queue_name.as_deref() != queue {
        updated.spec.queue_name = queue.map(str::to_owned);
    }
    if context.gates.enabled(Feature::AdmissionGatedBy)
        && let Some((followed, _)) = follow_gates(&lws.metadata, &updated)
    {
        updated = followed;
    }
    // A priority class that does not exist yet leaves the priority as it is; the Workload follows
    // once the class is created.
    if let Ok(Some(followed)) = follow_priority_label(&lws.metadata, &updated, context.priorities) {
        updated = followed;
    }
    (updated != *workload).then_some(updated)
}

/// Kueue's LeaderWorkerSet pod reconciler: a pod of a group joins it once the LeaderWorkerSet
/// controller gave it its group index: the managed label, the queue label while it is gated,
/// the group's prebuilt Workload as its group and Workload, the group size as the total count,
/// and its role (`leader` or `worker`, `main` without a leader template). A pod already in its
/// group only follows the LeaderWorkerSet's queue while gated. Returns whether `pod` changed.
pub fn group_lws_pod(lws: &DynamicObject, pod: &mut Pod) -> bool {
    let terminated = matches!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    );
    if terminated || pod.metadata.deletion_timestamp.is_some() {
        return false;
    }
    let queue = queue_name(&lws.metadata).map(str::to_owned);
    let gated = pod.spec.as_ref().is_some_and(|s| {
        gate_names(s)
            .iter()
            .any(|g| g == scheduling_gates::ADMISSION)
    });
    if label(pod, labels::MANAGED).is_some() {
        let Some(queue) = queue.filter(|q| gated && label(pod, labels::QUEUE_NAME) != Some(q))
        else {
            return false;
        };
        pod.metadata
            .labels
            .get_or_insert_default()
            .insert(labels::QUEUE_NAME.to_owned(), queue);
        return true;
    }
    let Some(index) = label(pod, GROUP_INDEX_LABEL).map(str::to_owned) else {
        return false;
    };
    let workload_name = lws_group_workload_name(lws, &index);
    let role = if !has_leader_template(lws) {
        DEFAULT_POD_SET_NAME
    } else if annotation(pod, LEADER_NAME_ANNOTATION).is_none() {
        LEADER_POD_SET
    } else {
        super::leaderworkerset::WORKER_POD_SET
    };
    let pod_labels = pod.metadata.labels.get_or_insert_default();
    pod_labels.insert(labels::MANAGED.to_owned(), labels::MANAGED_VALUE.to_owned());
    if let Some(queue) = queue.filter(|_| gated) {
        pod_labels.insert(labels::QUEUE_NAME.to_owned(), queue);
    }
    let pod_annotations = pod.metadata.annotations.get_or_insert_default();
    let mut set = |key: &str, value: String| {
        pod_annotations.insert(key.to_owned(), value);
    };
    set(annotations::POD_GROUP_NAME, workload_name.clone());
    set(annotations::PREBUILT_WORKLOAD_NAME, workload_name);
    set(
        annotations::POD_GROUP_TOTAL_COUNT,
        lws_size(lws).to_string(),
    );
    set(annotations::ROLE_HASH, role.to_owned());
    true
}

#[cfg(test)]
mod tests;
