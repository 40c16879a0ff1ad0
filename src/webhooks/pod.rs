//! Kueue's Pod webhooks (`/mutate--v1-pod`, `/validate--v1-pod`) for the `pod` integration,
//! built on the integration's rules in `jobs` ([`default_pod`], [`validate_pod`],
//! [`validate_pod_update`]).
//!
//! Defaulting (CREATE) takes over a pod that names a queue, or any pod with
//! `manageJobsWithoutQueueName`, in a namespace `managedJobsNamespaceSelector` selects, unless its
//! controlling owner is a job kind another integration manages; a pod a parent integration
//! suspends (`kueue.x-k8s.io/pod-suspending-parent`) is taken over whatever its namespace. The
//! changes come back as a JSONPatch. Validation (CREATE, UPDATE) refuses, with Kueue's field
//! errors naming the label or annotation, a malformed queue name, managed label, group name or
//! total count, topology annotations Kueue cannot use, and on UPDATE the changes Kueue forbids.

use k8s_openapi::api::core::v1::Pod;

use super::namespaces::NamespaceView;
use super::review::{AdmissionRequest, Operation, Verdict};
use super::settings::{PodSettings, Webhooks};
use crate::api::json_patch as patch;
use crate::api::keys::{annotations, labels, scheduling_gates};
use crate::api::name_syntax::check_dns1123_subdomain;
use crate::engine::features::Feature;
use crate::jobs::{
    FieldError, FieldErrorKind, PodDefaulting, default_pod, topology_request, validate_pod,
    validate_pod_update,
};

const FRAMEWORK: &str = "pod";
/// Kueue's message when a pod leaves the namespace's default LocalQueue.
const EMPTY_QUEUE_WITH_DEFAULT: &str =
    "queue-name must not be empty in namespace with default queue";

/// The pod webhooks act while `pod` is enabled, listed or implied by a framework that runs its
/// jobs as plain pods; otherwise they allow everything unchanged, as Kueue's no-op webhooks do.
fn enabled(webhooks: &Webhooks) -> bool {
    webhooks.frameworks.contains(FRAMEWORK)
}

fn label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

/// Whether kuota may take the pod over at all; the queue decides afterwards.
/// A parent (a Deployment) suspends the pod: it carries `pod-suspending-parent`.
fn by_parent(pod: &Pod) -> bool {
    pod.metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(annotations::POD_SUSPENDING_PARENT))
}

fn in_scope(pod: &Pod, namespace: &str, settings: &PodSettings) -> bool {
    if by_parent(pod) {
        return true;
    }
    settings.plain_pods
        && settings
            .scope
            .selects_namespace(&settings.namespaces.labels(namespace))
        && !settings.scope.has_managed_parent(&pod.metadata)
}

/// Kueue's Pod defaulting on CREATE: the admission gate, the managed label and finalizer (not
/// on a parent-suspended pod), the topology gate and index label under TAS, the role hash, and
/// the namespace's `default` LocalQueue for a pod that names none, and the `default`
/// WorkloadPriorityClass for one naming no class.
pub fn default(webhooks: &Webhooks, request: &AdmissionRequest) -> Verdict {
    if request.operation != Operation::Create || !enabled(webhooks) {
        return Verdict::Allow;
    }
    let pod: Pod = match request.decode("Pod", false) {
        Ok(pod) => pod,
        Err(invalid) => return invalid,
    };
    let settings = &webhooks.pods;
    let namespace = request.namespace_of(&pod.metadata);
    if !in_scope(&pod, namespace, settings) {
        return Verdict::Allow;
    }
    let defaulting = PodDefaulting {
        manage_without_queue_name: settings.scope.manage_without_queue_name,
        default_local_queue_exists: settings.namespaces.has_default_local_queue(namespace),
        topology_aware_scheduling: webhooks.gates.enabled(Feature::TopologyAwareScheduling),
    };
    let Some(mut defaulted) = default_pod(&pod, defaulting) else {
        return Verdict::Allow;
    };
    // A pod its parent suspends takes its class from the parent's template.
    if !by_parent(&pod) {
        webhooks.default_priority_class(&mut defaulted.metadata);
    }
    match (serde_json::to_value(&pod), serde_json::to_value(&defaulted)) {
        (Ok(old), Ok(new)) => Verdict::Patch(patch::diff(&old, &new)),
        (Err(error), _) | (_, Err(error)) => {
            Verdict::Invalid(format!("the Pod cannot be written back as JSON: {error}"))
        }
    }
}

/// Kueue's Pod validation on CREATE and UPDATE; every broken rule in one denial.
pub fn validate(webhooks: &Webhooks, request: &AdmissionRequest) -> Verdict {
    if !enabled(webhooks) {
        return Verdict::Allow;
    }
    let (pod, old) = match request.written::<Pod>("Pod") {
        Some(Ok(objects)) => objects,
        Some(Err(invalid)) => return invalid,
        None => return Verdict::Allow,
    };
    let mut errors: Vec<String> = queue_name_errors(&pod).map(|e| e.to_string()).collect();
    if let Some(old) = old {
        let namespace = request.namespace_of(&pod.metadata);
        let queues = &webhooks.pods.namespaces;
        errors.extend(queue_update_errors(&old, &pod, namespace, queues).map(|e| e.to_string()));
        errors.extend(
            validate_pod_update(&old, &pod)
                .iter()
                .map(ToString::to_string),
        );
    } else {
        errors.extend(validate_pod(&pod).iter().map(ToString::to_string));
    }
    errors.extend(topology_error(&pod));
    Verdict::from_field_errors(errors)
}

fn queue_path() -> String {
    format!("metadata.labels[{}]", labels::QUEUE_NAME)
}

fn queue_name(pod: &Pod) -> &str {
    label(pod, labels::QUEUE_NAME).unwrap_or_default()
}

/// Kueue's `ValidateQueueName`: a queue-name label, when present, names a LocalQueue.
fn queue_name_errors(pod: &Pod) -> impl Iterator<Item = FieldError> {
    let value = label(pod, labels::QUEUE_NAME);
    value
        .and_then(|queue| check_dns1123_subdomain(queue).err())
        .map(|detail| FieldError {
            field: queue_path(),
            kind: FieldErrorKind::Invalid,
            value: value.map(str::to_owned),
            detail,
        })
        .into_iter()
}

/// A pod counts as suspended, for Kueue's job rules, while it holds the admission gate or has
/// ended.
fn suspended(pod: &Pod) -> bool {
    let gated = pod
        .spec
        .as_ref()
        .and_then(|s| s.scheduling_gates.as_ref())
        .is_some_and(|gates| gates.iter().any(|g| g.name == scheduling_gates::ADMISSION));
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    gated || matches!(phase, Some("Succeeded" | "Failed"))
}

/// Kueue's `validateUpdateForQueueName`: the queue may change only while the pod is suspended
/// (gated by kuota, or ended), and may not be dropped in a namespace with a `default`
/// LocalQueue (the pod would be sent back to it).
fn queue_update_errors(
    old: &Pod,
    new: &Pod,
    namespace: &str,
    queues: &NamespaceView,
) -> impl Iterator<Item = FieldError> {
    let (old_queue, new_queue) = (queue_name(old), queue_name(new));
    let immutable = (!suspended(new) && old_queue != new_queue).then(|| FieldError {
        field: queue_path(),
        kind: FieldErrorKind::Invalid,
        value: Some(new_queue.to_owned()),
        detail: "field is immutable".to_owned(),
    });
    let dropped = (new_queue.is_empty()
        && !old_queue.is_empty()
        && queues.has_default_local_queue(namespace))
    .then(|| FieldError {
        field: queue_path(),
        kind: FieldErrorKind::Invalid,
        value: Some(String::new()),
        detail: EMPTY_QUEUE_WITH_DEFAULT.to_owned(),
    });
    immutable.into_iter().chain(dropped)
}

/// Kueue's `ValidateTASPodSetRequest` on the pod's own annotations. A pod alone does not know
/// its pod set's size, so slice sizes are not held to one.
fn topology_error(pod: &Pod) -> Option<String> {
    let empty = Default::default();
    let annotations = pod.metadata.annotations.as_ref().unwrap_or(&empty);
    topology_request(annotations, i32::MAX, labels::POD_GROUP_POD_INDEX)
        .err()
        .map(|problem| format!("metadata.annotations: {problem}"))
}

#[cfg(test)]
mod tests;
