//! Plain pods under Kueue's `pod` integration, as the Pod webhook sees them: which group a pod
//! belongs to, the rules on the group labels and annotations, the defaults the webhook writes
//! (the `kueue.x-k8s.io/admission` gate, the managed label and finalizer, the topology gate, the
//! group index label, the role hash), and the role hash itself.

use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::api::core::v1::{Container, Pod, PodSchedulingGate, PodSpec};
use serde_json::{Value, json};

use crate::api::keys::{annotations, finalizers, labels, scheduling_gates};

use crate::api::name_syntax::check_dns1123_subdomain;

/// The LocalQueue the webhook names when a namespace has one called so and the pod names none.
pub const DEFAULT_LOCAL_QUEUE: &str = "default";
/// Hex characters of a role hash.
const ROLE_HASH_LEN: usize = 8;

/// The pod group a pod belongs to: the `kueue.x-k8s.io/pod-group-name` annotation when set and
/// not empty (gate `WorkloadIdentifierAnnotations`, on), else the label of the same key.
pub fn pod_group_name(pod: &Pod) -> Option<&str> {
    let meta = &pod.metadata;
    let annotation = meta
        .annotations
        .as_ref()
        .and_then(|a| a.get(annotations::POD_GROUP_NAME))
        .filter(|v| !v.is_empty());
    annotation
        .or_else(|| meta.labels.as_ref()?.get(labels::POD_GROUP_NAME))
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}

/// The pods a pod's group expects, when its annotation holds a positive integer.
pub fn pod_group_total_count(pod: &Pod) -> Option<u32> {
    annotation(pod, annotations::POD_GROUP_TOTAL_COUNT)?
        .parse()
        .ok()
        .filter(|n| *n > 0)
}

/// How a Kubernetes field error says what is wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldErrorKind {
    Required,
    Invalid,
    Forbidden,
}

/// One broken rule, named as the API server names field errors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// The field path, e.g. `metadata.annotations[kueue.x-k8s.io/pod-group-total-count]`.
    pub field: String,
    pub kind: FieldErrorKind,
    /// The offending value (for `Invalid`).
    pub value: Option<String>,
    pub detail: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.kind, &self.value) {
            (FieldErrorKind::Required, _) => {
                write!(f, "{}: Required value: {}", self.field, self.detail)
            }
            (FieldErrorKind::Forbidden, _) => {
                write!(f, "{}: Forbidden: {}", self.field, self.detail)
            }
            (FieldErrorKind::Invalid, value) => write!(
                f,
                "{}: Invalid value: {:?}: {}",
                self.field,
                value.as_deref().unwrap_or_default(),
                self.detail
            ),
        }
    }
}

fn label_path(key: &str) -> String {
    format!("metadata.labels[{key}]")
}

fn annotation_path(key: &str) -> String {
    format!("metadata.annotations[{key}]")
}

/// The Pod webhook's rules on the managed label and the group metadata, for a create or an
/// update. Every broken rule is returned.
pub fn validate_pod(pod: &Pod) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(value) = label(pod, labels::MANAGED).filter(|v| *v != labels::MANAGED_VALUE) {
        errors.push(FieldError {
            field: label_path(labels::MANAGED),
            kind: FieldErrorKind::Forbidden,
            value: Some(value.to_owned()),
            detail: format!(
                "managed label value can only be '{}'",
                labels::MANAGED_VALUE
            ),
        });
    }
    let by_annotation = annotation(pod, annotations::POD_GROUP_NAME).is_some_and(|v| !v.is_empty());
    let (name_path, name_kind) = if by_annotation {
        (annotation_path(annotations::POD_GROUP_NAME), "annotation")
    } else {
        (label_path(labels::POD_GROUP_NAME), "label")
    };
    let both = format!(
        "both the '{}' annotation and the '{}' {name_kind} should be set",
        annotations::POD_GROUP_TOTAL_COUNT,
        labels::POD_GROUP_NAME
    );
    let total = annotation(pod, annotations::POD_GROUP_TOTAL_COUNT);
    match (pod_group_name(pod), total) {
        (None, None) => {}
        (None, Some(_)) => errors.push(FieldError {
            field: name_path,
            kind: FieldErrorKind::Required,
            value: None,
            detail: both,
        }),
        (Some(name), total) => {
            if let Err(reason) = check_dns1123_subdomain(name) {
                errors.push(FieldError {
                    field: name_path,
                    kind: FieldErrorKind::Invalid,
                    value: Some(name.to_owned()),
                    detail: reason,
                });
            }
            match total {
                None => errors.push(FieldError {
                    field: annotation_path(annotations::POD_GROUP_TOTAL_COUNT),
                    kind: FieldErrorKind::Required,
                    value: None,
                    detail: both,
                }),
                Some(value) if pod_group_total_count(pod).is_none() => errors.push(FieldError {
                    field: annotation_path(annotations::POD_GROUP_TOTAL_COUNT),
                    kind: FieldErrorKind::Invalid,
                    value: Some(value.to_owned()),
                    detail: "group total count must be a positive integer".to_owned(),
                }),
                Some(_) => {}
            }
        }
    }
    errors
}

/// The Pod webhook's rules on an update: [`validate_pod`] on the new pod, a group name that
/// may not change once set, and an unretriable group that may not become retriable.
pub fn validate_pod_update(old: &Pod, new: &Pod) -> Vec<FieldError> {
    let mut errors = validate_pod(new);
    if let Some(old_name) = pod_group_name(old)
        && pod_group_name(new) != Some(old_name)
    {
        let by_annotation =
            annotation(new, annotations::POD_GROUP_NAME).is_some_and(|v| !v.is_empty());
        errors.push(FieldError {
            field: if by_annotation {
                annotation_path(annotations::POD_GROUP_NAME)
            } else {
                label_path(labels::POD_GROUP_NAME)
            },
            kind: FieldErrorKind::Invalid,
            value: Some(pod_group_name(new).unwrap_or_default().to_owned()),
            detail: "field is immutable".to_owned(),
        });
    }
    let unretriable = |pod: &Pod| annotation(pod, annotations::RETRIABLE_IN_GROUP) == Some("false");
    if pod_group_name(new).is_some() && unretriable(old) && !unretriable(new) {
        errors.push(FieldError {
            field: annotation_path(annotations::RETRIABLE_IN_GROUP),
            kind: FieldErrorKind::Forbidden,
            value: None,
            detail: "unretriable pod group can't be converted to retriable".to_owned(),
        });
    }
    errors
}

/// What the Pod webhook knows besides the pod. The caller has already left out pods in
/// namespaces kuota does not manage and pods whose owner a managed job owns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PodDefaulting {
    /// `manageJobsWithoutQueueName`.
    pub manage_without_queue_name: bool,
    /// The pod's namespace has a LocalQueue named `default`.
    pub default_local_queue_exists: bool,
    /// Gate `TopologyAwareScheduling`.
    pub topology_aware_scheduling: bool,
}

/// The pod as the Pod webhook defaults it, or `None` when kuota does not take it over. A pod is
/// taken over when it names a queue (or `manageJobsWithoutQueueName` is on), or when a parent
/// integration suspends it (`kueue.x-k8s.io/pod-suspending-parent`). It then gets the
/// `kueue.x-k8s.io/admission` gate; the managed label and finalizer unless its parent manages
/// it; with TAS the topology gate and its group index label; and its role hash.
pub fn default_pod(pod: &Pod, settings: PodDefaulting) -> Option<Pod> {
    let mut pod = pod.clone();
    let by_parent = annotation(&pod, annotations::POD_SUSPENDING_PARENT).is_some();
    if !by_parent {
        let queue = label(&pod, labels::QUEUE_NAME).filter(|q| !q.is_empty());
        if queue.is_none() && settings.default_local_queue_exists {
            pod.metadata.labels.get_or_insert_default().insert(
                labels::QUEUE_NAME.to_owned(),
                DEFAULT_LOCAL_QUEUE.to_owned(),
            );
        }
        let managed = label(&pod, labels::QUEUE_NAME).is_some_and(|q| !q.is_empty())
            || settings.manage_without_queue_name;
        if !managed {
            return None;
        }
        pod.metadata
            .labels
            .get_or_insert_default()
            .insert(labels::MANAGED.to_owned(), labels::MANAGED_VALUE.to_owned());
        let finalizers = pod.metadata.finalizers.get_or_insert_default();
        if !finalizers.iter().any(|f| f == finalizers::MANAGED) {
            finalizers.push(finalizers::MANAGED.to_owned());
        }
    }
    let spec = pod.spec.get_or_insert_default();
    add_gate(spec, scheduling_gates::ADMISSION);
    if settings.topology_aware_scheduling {
        add_gate(spec, scheduling_gates::TOPOLOGY);
        if let Some(index_label) = annotation(&pod, annotations::POD_GROUP_POD_INDEX_LABEL) {
            // Copied as it is, even when the named label is missing: the controller then finds
            // no valid rank and places the group without ranks.
            let index = label(&pod, index_label).unwrap_or_default().to_owned();
            pod.metadata
                .labels
                .get_or_insert_default()
                .insert(labels::POD_GROUP_POD_INDEX.to_owned(), index);
        }
    }
    let hash = role_hash(&pod);
    pod.metadata
        .annotations
        .get_or_insert_default()
        .insert(annotations::ROLE_HASH.to_owned(), hash);
    Some(pod)
}

/// The pod's role: its `kueue.x-k8s.io/role-hash` annotation, else a hash of the parts of its
/// spec that decide admission (requests and ports of every container, nodeSelector, affinity,
/// tolerations, runtime class, priority, topology spread, overhead, resource claims, pod-level
/// requests), as Kueue hashes them. Pods of a group with equal roles form one pod set.
///
/// kuota hashes the same fields, but with SHA-1 over its own canonical JSON (keys sorted), so
/// a pod without the annotation gets a value Kueue would not compute; pods the webhook saw
/// carry the annotation, which both read first.
pub fn role_hash(pod: &Pod) -> String {
    if let Some(hash) = annotation(pod, annotations::ROLE_HASH) {
        return hash.to_owned();
    }
    let empty = PodSpec::default();
    let spec = pod.spec.as_ref().unwrap_or(&empty);
    let containers = |list: &[Container]| -> Value {
        list.iter()
            .map(|c| {
                json!({
                    "resources": {"requests": c.resources.as_ref().and_then(|r| r.requests.as_ref())},
                    "ports": c.ports,
                })
            })
            .collect()
    };
    let mut shape = json!({
        "initContainers": containers(spec.init_containers.as_deref().unwrap_or_default()),
        "containers": containers(&spec.containers),
        "nodeSelector": spec.node_selector,
        "affinity": spec.affinity,
        "tolerations": spec.tolerations,
        "runtimeClassName": spec.runtime_class_name,
        "priority": spec.priority,
        "topologySpreadConstraints": spec.topology_spread_constraints,
        "overhead": spec.overhead,
        "resourceClaims": spec.resource_claims,
    });
    if let (Some(resources), Value::Object(map)) = (spec.resources.as_ref(), &mut shape) {
        map.insert("resources".to_owned(), json!(resources.requests));
    }
    let mut text = String::new();
    canonical_json(&json!({"spec": shape}), &mut text);
    let digest = sha1_smol::Sha1::from(text.as_bytes()).digest().to_string();
    digest[..ROLE_HASH_LEN].to_owned()
}

/// Writes `value` as JSON with object keys sorted, whatever order the map keeps them in.
fn canonical_json(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, &Value> = map.iter().collect();
            out.push('{');
            for (i, (key, value)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical_json(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical_json(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn add_gate(spec: &mut PodSpec, name: &str) {
    let gates = spec.scheduling_gates.get_or_insert_default();
    if !gates.iter().any(|g| g.name == name) {
        gates.push(PodSchedulingGate {
            name: name.to_owned(),
        });
    }
}

pub(crate) fn label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

pub(crate) fn annotation<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata
        .annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
}

#[cfg(test)]
mod tests;
