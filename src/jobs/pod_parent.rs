//! What Kueue's Deployment and StatefulSet integrations share: a parent whose pods the pod
//! integration takes over. Its webhook gives it the namespace's `default` LocalQueue, and its
//! validation keeps the queue and the priority class from changing under pods that already run
//! (Kueue counts such a parent as suspended while none of its replicas is ready).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::pod_group::{DEFAULT_LOCAL_QUEUE, FieldError, FieldErrorKind, role_hash};
use super::scope::JobScope;
use crate::api::keys::labels;
use crate::api::name_syntax::check_dns1123_subdomain;

/// What a parent's webhook knows besides the parent.
#[derive(Clone, Copy, Debug)]
pub struct ParentDefaulting<'a> {
    pub scope: &'a JobScope,
    /// The labels of the parent's namespace.
    pub namespace_labels: &'a BTreeMap<String, String>,
    /// The namespace holds a LocalQueue named `default`.
    pub default_local_queue_exists: bool,
}

impl ParentDefaulting<'_> {
    /// Gives `meta` the `default` LocalQueue when Kueue's rule gives it one; whether the parent
    /// is then in scope.
    pub(super) fn default_queue(&self, meta: &mut ObjectMeta) -> bool {
        if self.scope.takes_default_queue(
            meta,
            self.namespace_labels,
            self.default_local_queue_exists,
        ) {
            meta.labels.get_or_insert_default().insert(
                labels::QUEUE_NAME.to_owned(),
                DEFAULT_LOCAL_QUEUE.to_owned(),
            );
        }
        self.scope.manages(meta, self.namespace_labels)
    }
}

/// A label's value, when set and not empty.
pub(super) fn label<'a>(
    labels: Option<&'a BTreeMap<String, String>>,
    key: &str,
) -> Option<&'a str> {
    labels?
        .get(key)
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}

fn label_path(key: &str) -> String {
    format!("metadata.labels[{key}]")
}

/// Kueue's label rules for a parent: the queue name must be a LocalQueue's name; on an update
/// (`old` with whether it was suspended) the queue may not change while a replica is ready and
/// may never be dropped, and a `kueue.x-k8s.io/priority-class` may not be added while a replica
/// is ready, nor ever removed.
pub(super) fn validate_labels(
    old: Option<(&ObjectMeta, bool)>,
    new: &ObjectMeta,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let new_labels = new.labels.as_ref();
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
    let Some((old, suspended)) = old else {
        return errors;
    };
    let old_labels = old.labels.as_ref();
    let old_queue = label(old_labels, labels::QUEUE_NAME).unwrap_or_default();
    let new_queue = label(new_labels, labels::QUEUE_NAME).unwrap_or_default();
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
    errors
}

/// Kueue's `ValidateImmutablePodGroupPodSpec` for a parent run as pod groups: the parts of a pod
/// template's spec that decide admission (what the role hash covers: requests, ports, node
/// selection, tolerations, priority, ...) may not change under its Workload, whose quota was
/// reserved for them. `path` names the template's spec.
pub(super) fn immutable_pod_spec(
    old: Option<&PodSpec>,
    new: Option<&PodSpec>,
    path: &str,
) -> Option<FieldError> {
    let shape = |spec: Option<&PodSpec>| {
        role_hash(&Pod {
            spec: spec.cloned(),
            ..Pod::default()
        })
    };
    (shape(old) != shape(new)).then(|| FieldError {
        field: path.to_owned(),
        kind: FieldErrorKind::Invalid,
        value: Some(String::new()),
        detail: "field is immutable".to_owned(),
    })
}
