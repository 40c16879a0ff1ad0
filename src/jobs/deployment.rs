//! Kueue's `deployment` integration. A Deployment is never a Workload itself: its webhook marks
//! the pod template so that every pod the Deployment's ReplicaSets create is taken over by the
//! pod integration as a single-pod Workload, and keeps the queue and priority class from changing
//! under pods that already run.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;

use super::pod_group::{DEFAULT_LOCAL_QUEUE, FieldError, FieldErrorKind};
use super::scope::{JobScope, queue_name};
use crate::api::keys::{annotations, labels};
use crate::api::name_syntax::check_dns1123_subdomain;

/// The framework's name in `integrations.frameworks`, and the value of the pods'
/// `kueue.x-k8s.io/pod-suspending-parent` annotation.
pub const DEPLOYMENT_FRAMEWORK: &str = "deployment";

/// What the Deployment webhook knows besides the Deployment.
#[derive(Clone, Copy, Debug)]
pub struct DeploymentDefaulting<'a> {
    pub scope: &'a JobScope,
    /// The labels of the Deployment's namespace.
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

/// The Deployment as Kueue's webhook defaults it (on creation and on every update), or `None`
/// when nothing changes. A Deployment naming no queue takes its namespace's `default`
/// LocalQueue; a managed one has its pod template marked: the `pod-suspending-parent`
/// annotation (so the Pod webhook gates every pod, whatever its namespace), the managed label,
/// and the Deployment's queue and `kueue.x-k8s.io/priority-class` labels.
pub fn default_deployment(
    deployment: &Deployment,
    facts: DeploymentDefaulting<'_>,
) -> Option<Deployment> {
    let mut defaulted = deployment.clone();
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
        let queue = queue_name(meta).map(str::to_owned);
        let class = label(meta.labels.as_ref(), labels::PRIORITY_CLASS).map(str::to_owned);
        let template = &mut defaulted.spec.get_or_insert_default().template;
        let template_meta = template.metadata.get_or_insert_default();
        template_meta.annotations.get_or_insert_default().insert(
            annotations::POD_SUSPENDING_PARENT.to_owned(),
            DEPLOYMENT_FRAMEWORK.to_owned(),
        );
        let template_labels = template_meta.labels.get_or_insert_default();
        template_labels.insert(labels::MANAGED.to_owned(), labels::MANAGED_VALUE.to_owned());
        if let Some(queue) = queue {
            template_labels.insert(labels::QUEUE_NAME.to_owned(), queue);
        }
        if let Some(class) = class {
            template_labels.insert(labels::PRIORITY_CLASS.to_owned(), class);
        }
    }
    (defaulted != *deployment).then_some(defaulted)
}

fn label_path(key: &str) -> String {
    format!("metadata.labels[{key}]")
}

/// Kueue's Deployment validation: on creation the queue name must be a LocalQueue's name; on an
/// update also, while any replica is ready, the queue may not change, and it may never be
/// dropped; a `kueue.x-k8s.io/priority-class` may not be added while a replica is ready, nor
/// ever removed.
pub fn validate_deployment(old: Option<&Deployment>, new: &Deployment) -> Vec<FieldError> {
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
    // Kueue counts a Deployment as suspended while none of its replicas is ready.
    let suspended = old
        .status
        .as_ref()
        .and_then(|s| s.ready_replicas)
        .unwrap_or(0)
        == 0;
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

#[cfg(test)]
mod tests;
