//! Schema rewrites that make derived CRD schemas structural, and the rules derive cannot state.
//!
//! kube's derive already folds most of schemars' `anyOf` output into plain typed nodes. What is left
//! to do here is to guarantee the structural shape whatever the embedded types emit, so that a
//! kube-apiserver accepts the CRDs, and to attach the object-level rules of each kind.

use serde_json::{Map, Value, json};

use super::keys::condition_types::{ADMITTED, QUOTA_RESERVED};

/// Descriptions that k8s-openapi repeats on every quantity and int-or-string node; they add
/// hundreds of kilobytes to the Workload CRD and say nothing about the field.
const BOILERPLATE_DESCRIPTIONS: [&str; 2] = [
    "Quantity is a fixed-point representation of a number.",
    "IntOrString is a type that can hold an int32 or a string.",
];

/// Rewrites a schema node and everything below it into Kubernetes' structural form.
pub(crate) fn normalise(schema: &mut Value) {
    let Some(node) = schema.as_object_mut() else {
        return;
    };
    merge_single_all_of(node);
    fold_int_or_string(node);
    fold_nullable_any_of(node);
    for key in ["properties", "patternProperties"] {
        if let Some(Value::Object(children)) = node.get_mut(key) {
            children.values_mut().for_each(normalise);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = node.get_mut(key) {
            normalise(child);
        }
    }
    infer_type(node);
    drop_boilerplate(node);
    node.remove("title");
}

/// `allOf: [X]` (how schemars attaches keywords to a referenced type) becomes X merged in place.
fn merge_single_all_of(node: &mut Map<String, Value>) {
    let single = match node.get("allOf") {
        Some(Value::Array(list)) if list.len() == 1 => list.first().cloned(),
        _ => None,
    };
    if let Some(Value::Object(inner)) = single {
        node.remove("allOf");
        for (key, value) in inner {
            node.entry(key).or_insert(value);
        }
    }
}

/// `anyOf`/`oneOf` of an integer and a string becomes `x-kubernetes-int-or-string`, the only
/// union a structural schema allows.
fn fold_int_or_string(node: &mut Map<String, Value>) {
    for key in ["anyOf", "oneOf"] {
        let is_int_or_string = match node.get(key) {
            Some(Value::Array(branches)) => {
                let types: Vec<&str> = branches
                    .iter()
                    .filter_map(|b| b.get("type").and_then(Value::as_str))
                    .collect();
                branches.len() == 2 && types.contains(&"integer") && types.contains(&"string")
            }
            _ => false,
        };
        if is_int_or_string {
            node.remove(key);
            node.remove("type");
            node.insert("x-kubernetes-int-or-string".to_owned(), Value::Bool(true));
        }
    }
}

/// `anyOf: [X, null]` (an optional value) becomes X with `nullable: true`.
fn fold_nullable_any_of(node: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = node.get("anyOf") else {
        return;
    };
    let is_null = |b: &Value| {
        b.get("type").and_then(Value::as_str) == Some("null")
            || b.get("enum") == Some(&json!([null]))
    };
    let non_null: Vec<Value> = branches.iter().filter(|b| !is_null(b)).cloned().collect();
    if non_null.len() != 1 || branches.len() != 2 {
        return;
    }
    node.remove("anyOf");
    if let Some(Value::Object(inner)) = non_null.into_iter().next() {
        for (key, value) in inner {
            node.entry(key).or_insert(value);
        }
    }
    node.insert("nullable".to_owned(), Value::Bool(true));
}

/// Gives untyped nodes the type their keywords imply; a node with no keywords at all (an arbitrary
/// JSON value) keeps whatever it is given.
fn infer_type(node: &mut Map<String, Value>) {
    let exempt = [
        "x-kubernetes-int-or-string",
        "x-kubernetes-preserve-unknown-fields",
    ]
    .iter()
    .any(|key| node.get(*key) == Some(&Value::Bool(true)));
    if exempt || node.contains_key("type") {
        return;
    }
    if node.contains_key("items") {
        node.insert("type".to_owned(), json!("array"));
    } else {
        node.insert("type".to_owned(), json!("object"));
        if !node.contains_key("properties") && !node.contains_key("additionalProperties") {
            node.insert(
                "x-kubernetes-preserve-unknown-fields".to_owned(),
                Value::Bool(true),
            );
        }
    }
}

fn drop_boilerplate(node: &mut Map<String, Value>) {
    let is_boilerplate = node
        .get("description")
        .and_then(Value::as_str)
        .is_some_and(|d| BOILERPLATE_DESCRIPTIONS.iter().any(|b| d.starts_with(b)));
    if is_boilerplate {
        node.remove("description");
    }
}

/// Adds what every root needs and the rules of one kind that concern the whole object.
pub(crate) fn apply_kind_rules(kind: &str, root: &mut Value) {
    let Some(node) = root.as_object_mut() else {
        return;
    };
    if let Some(Value::Object(properties)) = node.get_mut("properties") {
        properties.insert("apiVersion".to_owned(), json!({"type": "string"}));
        properties.insert("kind".to_owned(), json!({"type": "string"}));
        properties.insert("metadata".to_owned(), json!({"type": "object"}));
    }
    match kind {
        // Kueue accepts these kinds without a spec: every spec field is optional.
        "ClusterQueue" | "Cohort" | "ResourceFlavor" | "ProvisioningRequestConfig" => {
            if let Some(Value::Array(required)) = node.get_mut("required") {
                required.retain(|name| name != "spec");
                if required.is_empty() {
                    node.remove("required");
                }
            }
        }
        "Workload" => {
            node.insert("x-kubernetes-validations".to_owned(), workload_rules());
        }
        _ => {}
    }
}

/// A CEL condition: `object` (`self` or `oldSelf`) has condition `kind` with status True.
fn condition_true(object: &str, kind: &str) -> String {
    format!(
        "(has({object}.status) && has({object}.status.conditions) && \
         {object}.status.conditions.exists(c, c.type == '{kind}' && c.status == 'True'))"
    )
}

/// The Workload rules that relate spec to status.
fn workload_rules() -> Value {
    let reserved = condition_true("self", QUOTA_RESERVED);
    let reserved_before_and_after = format!(
        "{reserved} && {}",
        condition_true("oldSelf", QUOTA_RESERVED)
    );
    let admitted_before_and_after = format!(
        "{} && {}",
        condition_true("self", ADMITTED),
        condition_true("oldSelf", ADMITTED)
    );
    let same_optional = |field: &str| {
        format!(
            "has(self.spec.{field}) == has(oldSelf.spec.{field}) && \
             (!has(self.spec.{field}) || self.spec.{field} == oldSelf.spec.{field})"
        )
    };
    let class_ref = "self.spec.priorityClassRef";
    let old_class_ref = "oldSelf.spec.priorityClassRef";
    json!([
        {
            "rule": format!(
                "!({reserved} && has(self.status.admission)) || \
                 size(self.spec.podSets) == size(self.status.admission.podSetAssignments)"
            ),
            "message": "podSetAssignments must have the same number of podSets as the spec"
        },
        {
            "rule": format!(
                "!({reserved_before_and_after}) || \
                 (has(self.spec.priorityClassRef) == has(oldSelf.spec.priorityClassRef) && \
                 (!has(self.spec.priorityClassRef) || \
                 ({class_ref}.group == {old_class_ref}.group && {class_ref}.kind == {old_class_ref}.kind && \
                 ({class_ref}.kind != 'PriorityClass' || {class_ref}.name == {old_class_ref}.name))))"
            ),
            "message": "priorityClassRef is immutable while the workload has quota reserved, except the name of a WorkloadPriorityClass"
        },
        {
            "rule": format!("!({reserved_before_and_after}) || ({})", same_optional("queueName")),
            "message": "queueName is immutable while the workload has quota reserved"
        },
        {
            "rule": format!(
                "!({admitted_before_and_after}) || ({})",
                same_optional("maximumExecutionTimeSeconds")
            ),
            "message": "maximumExecutionTimeSeconds is immutable while the workload is admitted"
        }
    ])
}

#[cfg(test)]
mod tests;
