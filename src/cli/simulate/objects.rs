//! Typed decoding of manifest documents into the API objects `kuota simulate` understands, with
//! errors that name the file, the document, the object and the field.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{LimitRange, Namespace, Node, Pod};
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use thiserror::Error;

use super::documents::{Document, Origin};
use crate::api::{
    AdmissionCheck, ClusterQueue, Cohort, LocalQueue, ResourceFlavor, Topology, Workload,
    WorkloadPriorityClass,
};

/// An object together with where it was read.
#[derive(Clone, Debug)]
pub struct Located<T> {
    pub origin: Origin,
    /// Position among all objects of the input, so kinds read into separate lists keep their order.
    pub sequence: usize,
    pub object: T,
}

/// Every object of the input, by kind, each list in order of appearance.
#[derive(Clone, Debug, Default)]
pub struct Objects {
    pub cluster_queues: Vec<Located<ClusterQueue>>,
    pub local_queues: Vec<Located<LocalQueue>>,
    pub cohorts: Vec<Located<Cohort>>,
    pub resource_flavors: Vec<Located<ResourceFlavor>>,
    pub topologies: Vec<Located<Topology>>,
    pub workloads: Vec<Located<Workload>>,
    pub workload_priority_classes: Vec<Located<WorkloadPriorityClass>>,
    pub admission_checks: Vec<Located<AdmissionCheck>>,
    pub namespaces: Vec<Located<Namespace>>,
    pub nodes: Vec<Located<Node>>,
    pub pods: Vec<Located<Pod>>,
    pub priority_classes: Vec<Located<PriorityClass>>,
    pub jobs: Vec<Located<Job>>,
    pub limit_ranges: Vec<Located<LimitRange>>,
    pub runtime_classes: Vec<Located<RuntimeClass>>,
    /// How many objects were named from their `metadata.generateName`.
    generated_names: usize,
    /// How many objects were decoded so far.
    decoded: usize,
}

/// Namespaced objects without a namespace go to `default`, as `kubectl apply` puts them there.
fn default_namespace(value: &mut Value) {
    let namespaced = matches!(
        value.get("kind").and_then(Value::as_str),
        Some("LocalQueue" | "Workload" | "Pod" | "Job" | "LimitRange")
    );
    if let Some(metadata) = value.get_mut("metadata").and_then(Value::as_object_mut)
        && namespaced
        && !metadata.contains_key("namespace")
    {
        metadata.insert("namespace".into(), Value::String("default".into()));
    }
}

/// Gives an object that has only `metadata.generateName` a name, as the API server would, but
/// deterministically: the prefix and a sequence number.
fn name_generated(value: &mut Value, generated: &mut usize) {
    let Some(metadata) = value.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    if metadata.contains_key("name") {
        return;
    }
    if let Some(prefix) = metadata.get("generateName").and_then(Value::as_str) {
        *generated += 1;
        let name = format!("{prefix}{:05}", *generated);
        metadata.insert("name".into(), Value::String(name));
    }
}

/// A document that is not an object kuota simulate can use.
#[derive(Debug, Error)]
#[error("{origin}: {object}: {problem}")]
pub struct DecodeError {
    pub origin: Origin,
    /// `Kind namespace/name`, or what is known of it.
    pub object: String,
    pub problem: Problem,
}

/// What is wrong with a document.
#[derive(Debug, Error)]
pub enum Problem {
    #[error("not an object with apiVersion and kind")]
    NotAnObject,
    #[error(
        "kind {kind} of {api_version} is not supported; supported: {KUEUE} {SUPPORTED_KUEUE}; {SUPPORTED_OTHERS}"
    )]
    Unsupported { api_version: String, kind: String },
    #[error("field metadata.name: required")]
    MissingName,
    #[error("field {field}: {reason}")]
    Field { field: String, reason: String },
    #[error("field {field}: unknown field")]
    UnknownField { field: String },
}

const SUPPORTED_KUEUE: &str = "ClusterQueue, LocalQueue, Cohort, ResourceFlavor, Topology, Workload, \
     WorkloadPriorityClass, AdmissionCheck";
const SUPPORTED_OTHERS: &str = "v1 Namespace, Node, Pod, LimitRange; scheduling.k8s.io/v1 PriorityClass; \
     node.k8s.io/v1 RuntimeClass; batch/v1 Job";

const KUEUE: &str = crate::api::keys::API_VERSION;

/// Decodes every document, stopping at the first that is not usable.
pub fn decode_all(documents: Vec<Document>) -> Result<Objects, DecodeError> {
    let mut objects = Objects::default();
    for document in documents {
        decode_into(&mut objects, document)?;
    }
    Ok(objects)
}

fn decode_into(objects: &mut Objects, document: Document) -> Result<(), DecodeError> {
    let Document { origin, mut value } = document;
    name_generated(&mut value, &mut objects.generated_names);
    default_namespace(&mut value);
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
    let (Some(api_version), Some(kind)) = (text("apiVersion"), text("kind")) else {
        return Err(DecodeError {
            origin,
            object: "document".into(),
            problem: Problem::NotAnObject,
        });
    };
    let metadata = |key: &str| {
        value
            .get("metadata")
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
    };
    let object = match (metadata("namespace"), metadata("name")) {
        (Some(namespace), Some(name)) => format!("{kind} {namespace}/{name}"),
        (None, Some(name)) => format!("{kind} {name}"),
        (_, None) => kind.clone(),
    };
    let fail = |problem| DecodeError {
        origin: origin.clone(),
        object: object.clone(),
        problem,
    };
    if metadata("name").is_none() {
        return Err(fail(Problem::MissingName));
    }
    macro_rules! push {
        ($list:ident) => {{
            let object = decode_typed(value).map_err(fail)?;
            objects.decoded += 1;
            let sequence = objects.decoded;
            objects.$list.push(Located {
                origin,
                sequence,
                object,
            });
        }};
    }
    match (api_version.as_str(), kind.as_str()) {
        (KUEUE, "ClusterQueue") => push!(cluster_queues),
        (KUEUE, "LocalQueue") => push!(local_queues),
        (KUEUE, "Cohort") => push!(cohorts),
        (KUEUE, "ResourceFlavor") => push!(resource_flavors),
        (KUEUE, "Topology") => push!(topologies),
        (KUEUE, "Workload") => push!(workloads),
        (KUEUE, "WorkloadPriorityClass") => push!(workload_priority_classes),
        (KUEUE, "AdmissionCheck") => push!(admission_checks),
        ("v1", "Namespace") => push!(namespaces),
        ("v1", "Node") => push!(nodes),
        ("v1", "Pod") => push!(pods),
        ("scheduling.k8s.io/v1", "PriorityClass") => push!(priority_classes),
        ("batch/v1", "Job") => push!(jobs),
        ("v1", "LimitRange") => push!(limit_ranges),
        ("node.k8s.io/v1", "RuntimeClass") => push!(runtime_classes),
        _ => return Err(fail(Problem::Unsupported { api_version, kind })),
    }
    Ok(())
}

/// Decodes one object strictly: a wrong type names its field, and a field the type does not know is
/// an error rather than silently dropped. Quantities written as bare YAML numbers (`cpu: 4`) are read
/// as the strings the API server would store.
fn decode_typed<T: DeserializeOwned + Serialize>(mut value: Value) -> Result<T, Problem> {
    let original = value.clone();
    let typed = loop {
        match serde_path_to_error::deserialize::<_, T>(&value) {
            Ok(typed) => break typed,
            Err(error) => {
                let field = error.path().to_string();
                let number = locate_mut(&mut value, error.path()).filter(|v| v.is_number());
                match number {
                    Some(number) => *number = Value::String(number.to_string()),
                    None => {
                        return Err(Problem::Field {
                            field,
                            reason: error.into_inner().to_string(),
                        });
                    }
                }
            }
        }
    };
    let written = serde_json::to_value(&typed).map_err(|e| Problem::Field {
        field: ".".into(),
        reason: e.to_string(),
    })?;
    match first_unknown_field(&original, &written, String::new()) {
        Some(field) => Err(Problem::UnknownField { field }),
        None => Ok(typed),
    }
}

fn locate_mut<'a>(value: &'a mut Value, path: &serde_path_to_error::Path) -> Option<&'a mut Value> {
    use serde_path_to_error::Segment;
    let mut current = value;
    for segment in path.iter() {
        current = match segment {
            Segment::Map { key } => current.get_mut(key.as_str())?,
            Segment::Seq { index } => current.get_mut(*index)?,
            Segment::Enum { .. } | Segment::Unknown => return None,
        };
    }
    Some(current)
}

/// The first path present in `input` but absent from `written` (what the typed object serialises
/// to). Empty values (`null`, `[]`, `{}`) count as absent on both sides.
fn first_unknown_field(input: &Value, written: &Value, path: String) -> Option<String> {
    match (input, written) {
        (Value::Object(input), Value::Object(written)) => input.iter().find_map(|(key, value)| {
            let child = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            match written.get(key) {
                Some(written) => first_unknown_field(value, written, child),
                None if is_empty(value) => None,
                None => Some(child),
            }
        }),
        (Value::Array(input), Value::Array(written)) => input
            .iter()
            .zip(written)
            .enumerate()
            .find_map(|(i, (value, written))| {
                first_unknown_field(value, written, format!("{path}[{i}]"))
            }),
        _ => None,
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        Value::Object(fields) => fields.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
