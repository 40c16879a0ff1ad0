//! Every generated schema obeys Kubernetes' structural-schema rules and the apiextensions/v1
//! restrictions, so a kube-apiserver accepts the CRDs as they are.
//!
//! Rules checked (Kubernetes "Specifying a structural schema" and apiextensions v1 validation):
//! every node has a `type` unless it is int-or-string or preserves unknown fields; no logical
//! junctors (`anyOf`/`oneOf`/`allOf`/`not`) except the int-or-string shape; no `$ref`,
//! `definitions`, `patternProperties`, `uniqueItems: true` or `additionalProperties: false`;
//! `properties` and `additionalProperties` are exclusive; `nullable` needs a type; root `metadata`
//! restricts at most `name`/`generateName`; list and map extensions sit on the right types and
//! list-map keys are required or defaulted scalars; every CEL rule has a rule and a one-line message;
//! defaults fit their node's type and enum.

use serde_json::{Map, Value};

const ALLOWED_KEYS: &[&str] = &[
    "type",
    "format",
    "description",
    "default",
    "nullable",
    "enum",
    "maximum",
    "minimum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "multipleOf",
    "maxProperties",
    "minProperties",
    "required",
    "items",
    "properties",
    "additionalProperties",
    "anyOf",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
];

const TYPES: &[&str] = &["object", "array", "string", "integer", "number", "boolean"];

fn flag(node: &Map<String, Value>, key: &str) -> bool {
    node.get(key) == Some(&Value::Bool(true))
}

fn type_of(node: &Map<String, Value>) -> Option<&str> {
    node.get("type").and_then(Value::as_str)
}

/// The only junctor a structural schema allows: int-or-string spelled out as integer|string.
fn is_int_or_string_any_of(node: &Map<String, Value>) -> bool {
    let Some(Value::Array(branches)) = node.get("anyOf") else {
        return false;
    };
    let types: Vec<Option<&str>> = branches
        .iter()
        .map(|b| b.get("type").and_then(Value::as_str))
        .collect();
    flag(node, "x-kubernetes-int-or-string")
        && types == [Some("integer"), Some("string")]
        && branches
            .iter()
            .all(|b| b.as_object().is_some_and(|o| o.len() == 1))
}

fn value_fits(value: &Value, node: &Map<String, Value>) -> bool {
    if flag(node, "x-kubernetes-int-or-string") {
        return value.is_string() || value.is_i64() || value.is_u64();
    }
    if let Some(Value::Array(allowed)) = node.get("enum")
        && !allowed.contains(value)
    {
        return false;
    }
    match type_of(node) {
        Some("object") => value.is_object(),
        Some("array") => value.is_array(),
        Some("string") => value.is_string(),
        Some("integer") => value.is_i64() || value.is_u64(),
        Some("number") => value.is_number(),
        Some("boolean") => value.is_boolean(),
        _ => true,
    }
}

fn check(schema: &Value, path: &str, violations: &mut Vec<String>) {
    let Some(node) = schema.as_object() else {
        violations.push(format!("{path}: schema is not an object"));
        return;
    };
    let mut bad = |why: String| violations.push(format!("{path}: {why}"));
    for key in node.keys() {
        if !ALLOWED_KEYS.contains(&key.as_str()) {
            bad(format!("keyword `{key}` is not allowed"));
        }
    }
    let exempt = flag(node, "x-kubernetes-int-or-string")
        || flag(node, "x-kubernetes-preserve-unknown-fields");
    match type_of(node) {
        Some(t) if !TYPES.contains(&t) => bad(format!("unknown type `{t}`")),
        None if !exempt => bad("no type".to_owned()),
        _ => {}
    }
    if flag(node, "x-kubernetes-int-or-string") && node.contains_key("type") {
        bad("int-or-string node must not set a type".to_owned());
    }
    if node.contains_key("anyOf") && !is_int_or_string_any_of(node) {
        bad("anyOf outside the int-or-string shape".to_owned());
    }
    if node.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        bad("x-kubernetes-preserve-unknown-fields must be true when set".to_owned());
    }
    if node.contains_key("nullable") && type_of(node).is_none() && !exempt {
        bad("nullable without a type".to_owned());
    }
    if node.contains_key("properties") && node.contains_key("additionalProperties") {
        bad("properties and additionalProperties together".to_owned());
    }
    if node.get("additionalProperties") == Some(&Value::Bool(false)) {
        bad("additionalProperties: false".to_owned());
    }
    if let Some(items) = node.get("items")
        && !items.is_object()
    {
        bad("items must be one schema".to_owned());
    }
    if let Some(default) = node.get("default")
        && !value_fits(default, node)
    {
        bad(format!("default {default} does not fit the node"));
    }
    if let Some(Value::Array(required)) = node.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if node.get("properties").and_then(|p| p.get(name)).is_none() {
                bad(format!("required `{name}` is not a property"));
            }
        }
    }
    check_extensions(node, &mut bad);
    if let Some(Value::Object(properties)) = node.get("properties") {
        for (name, child) in properties {
            check(child, &format!("{path}.{name}"), violations);
        }
    }
    if let Some(items) = node.get("items") {
        check(items, &format!("{path}[]"), violations);
    }
    if let Some(extra @ Value::Object(_)) = node.get("additionalProperties") {
        check(extra, &format!("{path}{{}}"), violations);
    }
}

fn check_extensions(node: &Map<String, Value>, bad: &mut impl FnMut(String)) {
    let list_type = node.get("x-kubernetes-list-type").and_then(Value::as_str);
    if let Some(list_type) = list_type {
        if type_of(node) != Some("array") {
            bad("x-kubernetes-list-type on a non-array".to_owned());
        }
        if !["atomic", "set", "map"].contains(&list_type) {
            bad(format!("unknown list type `{list_type}`"));
        }
    }
    let items = node.get("items").and_then(Value::as_object);
    match (list_type, node.get("x-kubernetes-list-map-keys")) {
        (Some("map"), Some(Value::Array(keys))) if !keys.is_empty() => {
            let Some(items) = items.filter(|i| type_of(i) == Some("object")) else {
                bad("list-map items must be objects".to_owned());
                return;
            };
            let required: Vec<&str> = items
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for key in keys.iter().filter_map(Value::as_str) {
                let Some(property) = items.get("properties").and_then(|p| p.get(key)) else {
                    bad(format!(
                        "list-map key `{key}` is not a property of the items"
                    ));
                    continue;
                };
                let scalar = matches!(
                    property.get("type").and_then(Value::as_str),
                    Some("string" | "integer" | "number" | "boolean")
                );
                if !scalar {
                    bad(format!("list-map key `{key}` is not a scalar"));
                }
                if !required.contains(&key) && property.get("default").is_none() {
                    bad(format!(
                        "list-map key `{key}` is neither required nor defaulted"
                    ));
                }
            }
        }
        (Some("map"), _) => bad("list-type map without list-map keys".to_owned()),
        (_, Some(_)) => bad("list-map keys without list-type map".to_owned()),
        _ => {}
    }
    if list_type == Some("set")
        && items.is_some_and(|i| matches!(type_of(i), Some("object" | "array")))
    {
        bad("list-type set of non-scalars".to_owned());
    }
    if let Some(map_type) = node.get("x-kubernetes-map-type").and_then(Value::as_str) {
        if type_of(node) != Some("object") {
            bad("x-kubernetes-map-type on a non-object".to_owned());
        }
        if !["atomic", "granular"].contains(&map_type) {
            bad(format!("unknown map type `{map_type}`"));
        }
    }
    if let Some(rules) = node.get("x-kubernetes-validations") {
        for rule in rules.as_array().into_iter().flatten() {
            let text = rule.get("rule").and_then(Value::as_str).unwrap_or_default();
            if text.trim().is_empty() {
                bad("CEL validation without a rule".to_owned());
            }
            let message = rule
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if message.is_empty() || message.contains('\n') {
                bad(format!("CEL rule `{text}` needs a one-line message"));
            }
        }
    }
}

fn check_root(root: &Value, kind: &str) -> Vec<String> {
    let mut violations = Vec::new();
    if root.get("type").and_then(Value::as_str) != Some("object") {
        violations.push(format!("{kind}: root is not an object"));
    }
    if let Some(metadata) = root.get("properties").and_then(|p| p.get("metadata")) {
        let allowed = |k: &String| ["type", "properties"].contains(&k.as_str());
        let restricted = metadata
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| p.keys().any(|k| k != "name" && k != "generateName"));
        if metadata.as_object().is_some_and(|m| !m.keys().all(allowed)) || restricted {
            violations.push(format!(
                "{kind}: metadata may only restrict name and generateName"
            ));
        }
    }
    check(root, kind, &mut violations);
    violations
}

fn schemas() -> Vec<(String, Value)> {
    kuota::v1beta1::crds()
        .unwrap()
        .into_iter()
        .flat_map(|c| {
            let kind = c.spec.names.kind.clone();
            c.spec.versions.into_iter().map(move |v| {
                let schema = v.schema.and_then(|s| s.open_api_v3_schema).expect("schema");
                (kind.clone(), serde_json::to_value(schema).unwrap())
            })
        })
        .collect()
}

#[test]
fn every_schema_is_structural() {
    let violations: Vec<String> = schemas()
        .iter()
        .flat_map(|(kind, root)| check_root(root, kind))
        .collect();
    assert!(
        violations.is_empty(),
        "non-structural schema nodes:\n{}",
        violations.join("\n")
    );
}

#[test]
fn quantities_are_int_or_string() {
    let (_, workload) = schemas()
        .into_iter()
        .find(|(k, _)| k == "Workload")
        .unwrap();
    let usage = workload
        .pointer("/properties/status/properties/admission/properties/podSetAssignments/items/properties/resourceUsage/additionalProperties")
        .unwrap();
    assert_eq!(
        usage.get("x-kubernetes-int-or-string"),
        Some(&Value::Bool(true))
    );
    let (_, cq) = schemas()
        .into_iter()
        .find(|(k, _)| k == "ClusterQueue")
        .unwrap();
    let quota = cq
        .pointer("/properties/spec/properties/resourceGroups/items/properties/flavors/items/properties/resources/items/properties")
        .unwrap();
    for field in ["nominalQuota", "borrowingLimit", "lendingLimit"] {
        assert_eq!(
            quota[field].get("x-kubernetes-int-or-string"),
            Some(&Value::Bool(true)),
            "{field}"
        );
        assert!(quota[field].get("type").is_none(), "{field}");
    }
}

#[test]
fn checker_catches_non_structural_nodes() {
    let bad = serde_json::json!({
        "type": "object",
        "properties": {
            "metadata": {"type": "object", "properties": {"labels": {"type": "object"}}},
            "untyped": {"description": "x"},
            "union": {"anyOf": [{"type": "string"}, {"type": "object"}]},
            "reference": {"$ref": "#/definitions/x", "type": "object"},
            "both": {"type": "object", "properties": {}, "additionalProperties": {"type": "string"}},
            "list": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}}}
            },
            "badDefault": {"type": "string", "enum": ["A"], "default": "B"},
        }
    });
    let violations = check_root(&bad, "Bad");
    for expected in [
        "metadata may only restrict",
        "Bad.untyped: no type",
        "Bad.union: anyOf outside",
        "Bad.reference: keyword `$ref`",
        "Bad.both: properties and additionalProperties",
        "neither required nor defaulted",
        "Bad.badDefault: default",
    ] {
        assert!(
            violations.iter().any(|v| v.contains(expected)),
            "expected a violation containing {expected:?}, got {violations:#?}"
        );
    }
}
