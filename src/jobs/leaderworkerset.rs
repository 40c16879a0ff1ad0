//! Kueue's `leaderworkerset.x-k8s.io/leaderworkerset` integration, its webhook rules and what
//! they read of a LeaderWorkerSet (v1, read through the API's JSON). A LeaderWorkerSet runs one
//! pod group per replica (a leader and `size - 1` workers); defaulting marks its pod templates so
//! the Pod webhook gates every pod its StatefulSets create, and validation keeps the queue, the
//! priority class, the templates and the group size from changing in the ways Kueue refuses.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::DynamicObject;
use serde_json::Value;

use super::pod_group::{FieldError, FieldErrorKind};
use super::pod_parent::{ParentDefaulting, immutable_pod_spec, label, validate_labels};
use super::scope::queue_name;
use super::topology_request::{ignored_level_annotations, topology_request};
use crate::api::keys::{annotations, labels};

/// The framework's name in `integrations.frameworks`, and the value of the pods'
/// `kueue.x-k8s.io/pod-suspending-parent` annotation.
pub const LEADERWORKERSET_FRAMEWORK: &str = "leaderworkerset.x-k8s.io/leaderworkerset";
/// The pod set of a group's leader.
pub const LEADER_POD_SET: &str = "leader";
/// The pod set of a group's workers when the LeaderWorkerSet has a leader template.
pub const WORKER_POD_SET: &str = "worker";
/// The pod label the LeaderWorkerSet controller ranks a group's pods by (the leader is 0).
pub const WORKER_INDEX_LABEL: &str = "leaderworkerset.sigs.k8s.io/worker-index";
/// Kueue's sanity bound on `spec.replicas`: one Workload is created per replica.
const MAX_REPLICAS: i64 = 1_000_000;

const REPLICAS_PATH: &str = "spec.replicas";
const SIZE_PATH: &str = "spec.leaderWorkerTemplate.size";
const LEADER_TEMPLATE_PATH: &str = "spec.leaderWorkerTemplate.leaderTemplate";
const WORKER_TEMPLATE_PATH: &str = "spec.leaderWorkerTemplate.workerTemplate";
const LEADER_POINTER: &str = "/spec/leaderWorkerTemplate/leaderTemplate";
const WORKER_POINTER: &str = "/spec/leaderWorkerTemplate/workerTemplate";

fn int_at(lws: &DynamicObject, pointer: &str) -> Option<i64> {
    lws.data.pointer(pointer).and_then(Value::as_i64)
}

/// `spec.replicas`, 1 when unset as the API defaults it.
pub fn lws_replicas(lws: &DynamicObject) -> i64 {
    int_at(lws, "/spec/replicas").unwrap_or(1)
}

/// `spec.leaderWorkerTemplate.size`, the pods of one group, 1 when unset as the API defaults it.
pub fn lws_size(lws: &DynamicObject) -> i64 {
    int_at(lws, "/spec/leaderWorkerTemplate/size").unwrap_or(1)
}

/// `status.readyReplicas`, the groups ready.
fn ready_replicas(lws: &DynamicObject) -> i64 {
    int_at(lws, "/status/readyReplicas").unwrap_or(0)
}

/// Whether the LeaderWorkerSet has a leader template of its own.
pub fn has_leader_template(lws: &DynamicObject) -> bool {
    lws.data
        .pointer(LEADER_POINTER)
        .is_some_and(|v| !v.is_null())
}

/// One of the LeaderWorkerSet's pod templates: where it is and which pod set it becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct TemplateAt {
    pub pointer: &'static str,
    /// The field path as Kueue's messages name it.
    pub path: &'static str,
    pub pod_set: &'static str,
}

/// The templates in pod-set order: the leader's (pod set `leader`) when there is one, then the
/// workers' (`worker`, or `main` for a LeaderWorkerSet without a leader template).
pub(super) fn templates(lws: &DynamicObject) -> Vec<TemplateAt> {
    let worker = |pod_set| TemplateAt {
        pointer: WORKER_POINTER,
        path: WORKER_TEMPLATE_PATH,
        pod_set,
    };
    if has_leader_template(lws) {
        vec![
            TemplateAt {
                pointer: LEADER_POINTER,
                path: LEADER_TEMPLATE_PATH,
                pod_set: LEADER_POD_SET,
            },
            worker(WORKER_POD_SET),
        ]
    } else {
        vec![worker(crate::api::common::DEFAULT_POD_SET_NAME)]
    }
}

/// The pods a pod set of one group counts: 1 leader, the rest of `size` workers.
pub(super) fn pod_set_count(lws: &DynamicObject, template: TemplateAt) -> i64 {
    if template.pod_set == LEADER_POD_SET {
        1
    } else if has_leader_template(lws) {
        lws_size(lws) - 1
    } else {
        lws_size(lws)
    }
}

/// A pod template read from the LeaderWorkerSet, or why it cannot be.
pub(super) fn read_template(
    lws: &DynamicObject,
    template: TemplateAt,
) -> Result<PodTemplateSpec, String> {
    let value = lws
        .data
        .pointer(template.pointer)
        .cloned()
        .unwrap_or(Value::Null);
    if value.is_null() {
        return Ok(PodTemplateSpec::default());
    }
    serde_json::from_value(value).map_err(|error| format!("{}: {error}", template.path))
}

fn template_annotations(template: &PodTemplateSpec) -> BTreeMap<String, String> {
    template
        .metadata
        .as_ref()
        .and_then(|m| m.annotations.clone())
        .unwrap_or_default()
}

/// What the LeaderWorkerSet webhook knows besides the object.
#[derive(Clone, Copy, Debug)]
pub struct LwsDefaulting<'a> {
    pub parent: ParentDefaulting<'a>,
    /// Gate `TopologyAwareScheduling`.
    pub topology_aware_scheduling: bool,
}

/// The LeaderWorkerSet as Kueue's webhook defaults it, or `None` when nothing changes. One
/// naming no queue takes its namespace's `default` LocalQueue; a managed one has each pod
/// template labelled with its queue and `kueue.x-k8s.io/priority-class` and annotated
/// `pod-suspending-parent: leaderworkerset.x-k8s.io/leaderworkerset` (so the Pod webhook gates
/// every pod) and `pod-group-serving: true` (a group never finishes); under TAS the workers of
/// a LeaderWorkerSet with a leader are ranked from 1 (`pod-index-offset`), unless they share a
/// pod set group with the leader.
pub fn default_leaderworkerset(
    lws: &DynamicObject,
    facts: LwsDefaulting<'_>,
) -> Option<DynamicObject> {
    let mut defaulted = lws.clone();
    if !facts.parent.default_queue(&mut defaulted.metadata) {
        return (defaulted != *lws).then_some(defaulted);
    }
    let queue = queue_name(&defaulted.metadata).map(str::to_owned);
    let class =
        label(defaulted.metadata.labels.as_ref(), labels::PRIORITY_CLASS).map(str::to_owned);
    let with_leader = has_leader_template(&defaulted);
    for template in templates(&defaulted) {
        let Some(map) = defaulted
            .data
            .pointer_mut(template.pointer)
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        // The API server has checked the template against the CRD's schema.
        let Ok(mut meta) = map.get("metadata").cloned().map_or(
            Ok(ObjectMeta::default()),
            serde_json::from_value::<ObjectMeta>,
        ) else {
            continue;
        };
        let template_labels = meta.labels.get_or_insert_default();
        if let Some(queue) = &queue {
            template_labels.insert(labels::QUEUE_NAME.to_owned(), queue.clone());
        }
        if let Some(class) = &class {
            template_labels.insert(labels::PRIORITY_CLASS.to_owned(), class.clone());
        }
        let template_annotations = meta.annotations.get_or_insert_default();
        template_annotations.insert(
            annotations::POD_SUSPENDING_PARENT.to_owned(),
            LEADERWORKERSET_FRAMEWORK.to_owned(),
        );
        template_annotations.insert(annotations::POD_GROUP_SERVING.to_owned(), "true".to_owned());
        let offset = facts.topology_aware_scheduling
            && with_leader
            && template.pod_set == WORKER_POD_SET
            && !template_annotations.contains_key(annotations::PODSET_GROUP_NAME);
        if offset {
            template_annotations.insert(annotations::POD_INDEX_OFFSET.to_owned(), "1".to_owned());
        }
        if let Ok(written) = serde_json::to_value(&meta) {
            map.insert("metadata".to_owned(), written);
        }
    }
    (defaulted != *lws).then_some(defaulted)
}

/// What the LeaderWorkerSet validation knows besides the objects.
#[derive(Clone, Copy, Debug, Default)]
pub struct LwsValidation {
    /// The LeaderWorkerSet is in kuota's scope (its pods are gated).
    pub managed: bool,
    /// Gate `TopologyAwareScheduling`: the templates' topology annotations are checked.
    pub topology_aware_scheduling: bool,
    /// Gate `LWSImmutableGroupSize`.
    pub immutable_group_size: bool,
}

fn invalid(field: impl Into<String>, value: impl Into<String>, detail: &str) -> FieldError {
    FieldError {
        field: field.into(),
        kind: FieldErrorKind::Invalid,
        value: Some(value.into()),
        detail: detail.to_owned(),
    }
}

/// Kueue's LeaderWorkerSet validation. On creation and update: the queue name must be a
/// LocalQueue's name, `spec.replicas` within 0 to 1,000,000, and under TAS each template's
/// topology annotations valid for its pod set. On an update also: while a group is ready the
/// queue may not change, and it may never be dropped; a `kueue.x-k8s.io/priority-class` may not
/// be added while a group is ready, nor ever removed; and a managed LeaderWorkerSet keeps its
/// leader template, the parts of its templates' pod specs that decide admission, and (gate
/// `LWSImmutableGroupSize`) its group size.
pub fn validate_leaderworkerset(
    old: Option<&DynamicObject>,
    new: &DynamicObject,
    facts: LwsValidation,
) -> Vec<FieldError> {
    // Kueue counts a LeaderWorkerSet as suspended while none of its groups is ready.
    let mut errors = validate_labels(
        old.map(|old| (&old.metadata, ready_replicas(old) == 0)),
        &new.metadata,
    );
    let replicas = lws_replicas(new);
    if replicas < 0 {
        errors.push(invalid(
            REPLICAS_PATH,
            replicas.to_string(),
            &format!("invalid LeaderWorkerSet replicas: must be >= 0, got {replicas}"),
        ));
    } else if replicas > MAX_REPLICAS {
        errors.push(invalid(
            REPLICAS_PATH,
            replicas.to_string(),
            &format!("invalid LeaderWorkerSet replicas: must be <= {MAX_REPLICAS}, got {replicas}"),
        ));
    }
    if facts.topology_aware_scheduling {
        errors.extend(topology_errors(new));
    }
    let Some(old) = old else {
        return errors;
    };
    if facts.managed {
        errors.extend(immutable_templates(old, new));
        let (old_size, new_size) = (lws_size(old), lws_size(new));
        if facts.immutable_group_size && old_size != new_size {
            errors.push(invalid(
                SIZE_PATH,
                new_size.to_string(),
                "field is immutable",
            ));
        }
    }
    errors
}

/// Kueue's TAS checks of each template: one level annotation at most, each annotation valid for
/// the pod set's count, and a pod set group shared by exactly the leader and the workers.
fn topology_errors(lws: &DynamicObject) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut groups: BTreeMap<String, Vec<TemplateAt>> = BTreeMap::new();
    for template in templates(lws) {
        let Ok(read) = read_template(lws, template) else {
            continue;
        };
        let found = template_annotations(&read);
        let field = format!("{}.metadata.annotations", template.path);
        if !ignored_level_annotations(&found).is_empty() {
            errors.push(invalid(
                &field,
                "",
                &format!(
                    "must not contain more than one topology annotation: [{:?}, {:?}, {:?}]",
                    annotations::PODSET_REQUIRED_TOPOLOGY,
                    annotations::PODSET_PREFERRED_TOPOLOGY,
                    annotations::PODSET_UNCONSTRAINED_TOPOLOGY
                ),
            ));
        }
        let count = i32::try_from(pod_set_count(lws, template)).unwrap_or(i32::MAX);
        match topology_request(&found, count, WORKER_INDEX_LABEL) {
            Err(problem) => errors.push(invalid(&field, "", &problem.to_string())),
            Ok(request) => {
                if let Some(group) = request.pod_set_group_name {
                    groups.entry(group).or_default().push(template);
                }
            }
        }
    }
    for (group, members) in groups {
        let total = members.len();
        if total != 2 {
            for member in members {
                errors.push(invalid(
                    format!(
                        "{}.metadata.annotations[{}]",
                        member.path,
                        annotations::PODSET_GROUP_NAME
                    ),
                    group.clone(),
                    &format!(
                        "can only define groups of exactly 2 pod sets, got: {total} pod set(s)"
                    ),
                ));
            }
        }
    }
    errors
}

/// Kueue's `ValidateImmutablePodGroupPodSpec` for both templates: a leader template may not come
/// or go, and the parts of a pod spec that decide admission (the role hash's shape) may not
/// change.
fn immutable_templates(old: &DynamicObject, new: &DynamicObject) -> Vec<FieldError> {
    if has_leader_template(old) != has_leader_template(new) {
        return vec![invalid(
            LEADER_TEMPLATE_PATH,
            if has_leader_template(new) {
                "set"
            } else {
                "unset"
            },
            "field is immutable",
        )];
    }
    let spec = |lws: &DynamicObject, template: TemplateAt| {
        read_template(lws, template).ok().and_then(|read| read.spec)
    };
    templates(new)
        .into_iter()
        .filter_map(|template| {
            immutable_pod_spec(
                spec(old, template).as_ref(),
                spec(new, template).as_ref(),
                &format!("{}.spec", template.path),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests;
