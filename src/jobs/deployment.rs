//! Kueue's `deployment` integration. A Deployment is never a Workload itself: its webhook marks
//! the pod template so that every pod the Deployment's ReplicaSets create is taken over by the
//! pod integration as a single-pod Workload, and keeps the queue and priority class from changing
//! under pods that already run.

use k8s_openapi::api::apps::v1::Deployment;

use super::pod_group::FieldError;
use super::pod_parent::{ParentDefaulting, label, validate_labels};
use super::scope::queue_name;
use crate::api::keys::{annotations, labels};

/// The framework's name in `integrations.frameworks`, and the value of the pods'
/// `kueue.x-k8s.io/pod-suspending-parent` annotation.
pub const DEPLOYMENT_FRAMEWORK: &str = "deployment";

/// The Deployment as Kueue's webhook defaults it (on creation and on every update), or `None`
/// when nothing changes. A Deployment naming no queue takes its namespace's `default`
/// LocalQueue; a managed one has its pod template marked: the `pod-suspending-parent`
/// annotation (so the Pod webhook gates every pod, whatever its namespace), the managed label,
/// and the Deployment's queue and `kueue.x-k8s.io/priority-class` labels.
pub fn default_deployment(
    deployment: &Deployment,
    facts: ParentDefaulting<'_>,
) -> Option<Deployment> {
    let mut defaulted = deployment.clone();
    let meta = &mut defaulted.metadata;
    if facts.default_queue(meta) {
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

/// Kueue's Deployment validation: its label rules ([`validate_labels`]), a Deployment counting
/// as suspended while none of its replicas is ready.
pub fn validate_deployment(old: Option<&Deployment>, new: &Deployment) -> Vec<FieldError> {
    let suspended = |old: &Deployment| {
        old.status
            .as_ref()
            .and_then(|s| s.ready_replicas)
            .unwrap_or(0)
            == 0
    };
    validate_labels(
        old.map(|old| (&old.metadata, suspended(old))),
        &new.metadata,
    )
}

#[cfg(test)]
mod tests;
