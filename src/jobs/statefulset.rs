//! Kueue's `statefulset` integration, its webhook rules. A StatefulSet is run as one pod group:
//! defaulting marks the pod template so the Pod webhook gates every pod it creates, and
//! validation keeps the queue, the priority class and the replica count from changing in the
//! ways Kueue refuses (a managed StatefulSet only scales to zero or up from zero).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::StatefulSet;

use super::pod_group::{DEFAULT_LOCAL_QUEUE, FieldError, FieldErrorKind};
use super::scope::{JobScope, queue_name};
use crate::api::keys::{annotations, labels};
use crate::api::name_syntax::check_dns1123_subdomain;

/// The framework's name in `integrations.frameworks`, and the value of the pods'
/// `kueue.x-k8s.io/pod-suspending-parent` annotation.
pub const STATEFULSET_FRAMEWORK: &str = "statefulset";

const REPLICAS_PATH: &str = "spec.replicas";

/// What the StatefulSet webhook knows besides the StatefulSet.
#[derive(Clone, Copy, Debug)]
pub struct StatefulSetDefaulting<'a> {
    pub scope: &'a JobScope,
    /// The labels of the StatefulSet's namespace.
    pub namespace_labels: &'a BTreeMap<String, String>,
    /// The namespace holds a LocalQueue named `default`.
    pub default_local_queue_exists: bool,
}

fn label<'a>(labels: Option<&'a BTreeMap<String, String>>, key: &str) -> Option<&'a str> {
    labels?
        .get(key)
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}

/// The StatefulSet as Kueue's webhook defaults it, or `None` when nothing changes. One naming no
/// queue takes its namespace's `default` LocalQueue; a managed one has its pod template
/// annotated `kueue.x-k8s.io/pod-suspending-parent: statefulset`, so the Pod webhook gates
/// every pod whatever its namespace.
pub fn default_statefulset(
    statefulset: &StatefulSet,
    facts: StatefulSetDefaulting<'_>,
) -> Option<StatefulSet> {
    let mut defaulted = statefulset.clone();
    let meta = &mut defaulted.metadata;
    if facts.scope.takes_default_queue(
        meta,
        facts.namespace_labels,
        facts.default_local_queue_exists,
    ) {
        meta.labels.get_or_insert_default().insert(
            labels::QUEUE_NAME.to_owned(),
            DEFAULT_LOCAL_QUEUE.to_owned(),
        );
    }
    if facts.scope.manages(meta, facts.namespace_labels) {
        let template = &mut defaulted.spec.get_or_insert_default().template;
        template
            .metadata
            .get_or_insert_default()
            .annotations
            .get_or_insert_default()
            .insert(
                annotations::POD_SUSPENDING_PARENT.to_owned(),
                STATEFULSET_FRAMEWORK.to_owned(),
            );
    }
    (defaulted != *statefulset).then_some(defaulted)
}

/// What the StatefulSet validation knows besides the objects.
#[derive(Clone, Copy, Debug, Default)]
pub struct StatefulSetUpdateFacts {
    /// The StatefulSet is in kuota's scope (its pods are gated).
    pub managed: bool,
    /// The Workload of an earlier scale-down to zero still exists and is not on hold, so it is
    /// being deleted.
    pub previous_workload_deleting: bool,
}

fn label_path(key: &str) -> String {
    format!("metadata.labels[{key}]")
}

fn replicas(statefulset: &StatefulSet) -> i32 {
    statefulset
        .spec
        .as_ref()
        .and_then(|s| s.replicas)
        .unwrap_or(1)
}

/// Kueue's StatefulSet validation. On creation the queue name must be a LocalQueue's name. On an
/// update also: while a replica is ready the queue may not change, and it may never be dropped;
/// a `kueue.x-k8s.io/priority-class` may not be added while a replica is ready, nor ever
/// removed; and a managed StatefulSet may only scale to zero or up from zero, the latter only
/// once the pods of the scale-down are gone and its Workload is no longer being deleted.
pub fn validate_statefulset(
    old: Option<&StatefulSet>,
    new: &StatefulSet,
    facts: StatefulSetUpdateFacts,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let new_labels = new.metadata.labels.as_ref();
    if let Some(queue) = new_labels.and_then(|l| l.get(labels::QUEUE_NAME))
        && let Err(detail) = check_dns1123_subdomain(queue)
    {
        errors.push(FieldError {
            field: label_path(labels::QUEUE_NAME),
            kind: FieldErrorKind::Invalid,
            value: Some(queue.clone()),
            detail,
        });
    }
    let Some(old) = old else {
        return errors;
    };
    let old_labels = old.metadata.labels.as_ref();
    // Kueue counts a StatefulSet as suspended while none of its replicas is ready.
    let suspended = old
        .status
        .as_ref()
        .and_then(|s| s.ready_replicas)
        .unwrap_or(0)
        == 0;
    let old_queue = label(old_labels, labels::QUEUE_NAME).unwrap_or_default();
    let new_queue = queue_name(&new.metadata).unwrap_or_default();
    if (!suspended || new_queue.is_empty()) && old_queue != new_queue {
        errors.push(FieldError {
            field: label_path(labels::QUEUE_NAME),
            kind: FieldErrorKind::Invalid,
            value: Some(new_queue.to_owned()),
            detail: "field is immutable".to_owned(),
        });
    }
    let old_class = label(old_labels, labels::PRIORITY_CLASS);
    let new_class = label(new_labels, labels::PRIORITY_CLASS);
    let class_error = |detail: &str| FieldError {
        field: label_path(labels::PRIORITY_CLASS),
        kind: FieldErrorKind::Invalid,
        value: Some(new_class.unwrap_or_default().to_owned()),
        detail: detail.to_owned(),
    };
    match (old_class, new_class) {
        (None, Some(_)) if !suspended => errors.push(class_error(
            "WorkloadPriorityClass cannot be added to a non-suspended workload",
        )),
        (Some(_), None) => errors.push(class_error(
            "WorkloadPriorityClass cannot be removed from a workload",
        )),
        _ => {}
    }
    if facts.managed {
        errors.extend(replica_change_error(old, new, facts));
    }
    errors
}

/// Kueue admits a StatefulSet as one group of fixed size, so only scaling to zero (its Workload
/// goes on hold) and scaling up from zero (re-admitted) are allowed.
fn replica_change_error(
    old: &StatefulSet,
    new: &StatefulSet,
    facts: StatefulSetUpdateFacts,
) -> Option<FieldError> {
    let (old_replicas, new_replicas) = (replicas(old), replicas(new));
    let forbidden = |detail: &str| FieldError {
        field: REPLICAS_PATH.to_owned(),
        kind: FieldErrorKind::Forbidden,
        value: None,
        detail: detail.to_owned(),
    };
    if old_replicas != 0 && new_replicas != 0 {
        return (old_replicas != new_replicas).then(|| FieldError {
            field: REPLICAS_PATH.to_owned(),
            kind: FieldErrorKind::Invalid,
            value: Some(new_replicas.to_string()),
            detail: "field is immutable".to_owned(),
        });
    }
    if old_replicas == 0 && new_replicas > 0 {
        let running = new.status.as_ref().map(|s| s.replicas).unwrap_or(0);
        if running > 0 {
            return Some(forbidden("scaling down is still in progress"));
        }
        if facts.previous_workload_deleting {
            return Some(forbidden(
                "workload from previous scale-down is still being deleted",
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests;
