//! The CRDs served in both versions: `v1beta2` stored, `v1beta1` served beside it with a schema
//! made from `v1beta2`'s by the field differences [`super::convert`] maps. The kinds whose fields
//! differ convert through kuota's webhook (the others need only their `apiVersion` changed, which
//! the API server does itself); the CRD files leave `spec.conversion` out, and certificate
//! management writes [`conversion_webhook`] into them with the Service and CA of the release that
//! serves it, so reinstalling the files (Helm applies a chart's CRDs on every install) never
//! contends for those fields.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::{Map, Value, json};

use super::convert::Kind;
use super::version::Version;
use crate::api::crd::{self, CrdError};

/// The path of the conversion webhook, controller-runtime's as Kueue serves it.
pub const CONVERSION_PATH: &str = "/convert";

/// Names in `v1beta2`-only fields: a CEL rule naming one has no meaning in `v1beta1`.
const V1BETA2_ONLY_RULE_TERMS: &[&str] = &[
    "priorityClassRef",
    "preemptionGates",
    "podsetSliceRequiredTopologyConstraints",
    "self.slices",
    "concurrentAdmissionPolicy",
    "flavorsUsage",
    "accumulatedPastExecutionTimeSeconds",
];

/// Every CRD kuota serves, ordered by name, each serving `v1beta2` (stored) and `v1beta1`.
pub fn crds() -> Result<Vec<CustomResourceDefinition>, CrdError> {
    let served = crd::crds()?;
    let values = served.iter().map(to_value).collect::<Result<Vec<_>, _>>()?;
    let shared = Shared::from(&values);
    served
        .iter()
        .zip(values)
        .map(|(one, mut value)| {
            let name = one.metadata.name.clone().unwrap_or_default();
            let kind = Kind::from_name(&one.spec.names.kind);
            add_v1beta1(&mut value, kind, &shared);
            serde_json::from_value(value).map_err(|source| CrdError::Json { name, source })
        })
        .collect()
}

/// The names of the CRDs whose conversion webhook must trust kuota's CA.
pub fn conversion_crd_names() -> Vec<String> {
    Kind::ALL
        .into_iter()
        .filter(|k| k.converts_by_webhook())
        .map(|k| format!("{}.{}", k.plural(), super::version::GROUP))
        .collect()
}

fn to_value(one: &CustomResourceDefinition) -> Result<Value, CrdError> {
    serde_json::to_value(one).map_err(|source| CrdError::Json {
        name: one.metadata.name.clone().unwrap_or_default(),
        source,
    })
}

/// `spec.conversion` of a CRD converting through the webhook `service` in `namespace` serves.
pub fn conversion_webhook(service: &str, namespace: &str) -> Value {
    json!({
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": { "service": {
                "name": service, "namespace": namespace, "path": CONVERSION_PATH, "port": 443,
            } },
        },
    })
}

/// Schemas `v1beta1` shares with other kinds' `v1beta2` schemas.
struct Shared {
    admission_fair_sharing_status: Value,
    taints: Value,
}

impl Shared {
    fn from(crds: &[Value]) -> Self {
        let find = |kind: &str, pointer: &str| {
            crds.iter()
                .find(|c| c.pointer("/spec/names/kind") == Some(&json!(kind)))
                .and_then(|c| {
                    c.pointer(&format!("/spec/versions/0/schema/openAPIV3Schema{pointer}"))
                })
                .cloned()
                .unwrap_or_else(
                    || json!({ "type": "object", "x-kubernetes-preserve-unknown-fields": true }),
                )
        };
        Shared {
            admission_fair_sharing_status: find(
                "LocalQueue",
                "/properties/status/properties/fairSharing/properties/admissionFairSharingStatus",
            ),
            taints: find("ResourceFlavor", "/properties/spec/properties/nodeTaints"),
        }
    }
}

/// Adds the `v1beta1` version, served and not stored, after the `v1beta2` one.
fn add_v1beta1(crd: &mut Value, kind: Option<Kind>, shared: &Shared) {
    let Some(versions) = crd
        .pointer_mut("/spec/versions")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    let Some(mut v1beta1) = versions.first().cloned() else {
        return;
    };
    v1beta1["name"] = json!(Version::V1beta1.name());
    v1beta1["storage"] = json!(false);
    // As in Kueue's CRDs, only the stored version selects by field: the API server hoists
    // selectable fields every version shares to the CRD, where they need a shared schema.
    if let Some(fields) = v1beta1.as_object_mut() {
        fields.remove("selectableFields");
    }
    if let Some(root) = v1beta1.pointer_mut("/schema/openAPIV3Schema") {
        if let Some(kind) = kind {
            edit_schema(kind, root, shared);
        }
        drop_v1beta2_rules(root);
    }
    if let Some(columns) = v1beta1
        .get_mut("additionalPrinterColumns")
        .and_then(Value::as_array_mut)
    {
        for column in columns {
            if column["jsonPath"] == ".spec.cohortName" {
                column["jsonPath"] = json!(".spec.cohort");
            }
        }
    }
    versions.push(v1beta1);
}

/// The `properties` of the object schema at `path`, a `[]` step entering a list's items.
fn properties<'a>(root: &'a mut Value, path: &[&str]) -> Option<&'a mut Map<String, Value>> {
    let mut node = root;
    for step in path {
        node = if *step == "[]" {
            node.get_mut("items")?
        } else {
            node.get_mut("properties")?.get_mut(*step)?
        };
    }
    node.get_mut("properties")?.as_object_mut()
}

fn rename(root: &mut Value, path: &[&str], from: &str, to: &str) {
    if let Some(props) = properties(root, path)
        && let Some(schema) = props.remove(from)
    {
        props.insert(to.into(), schema);
    }
}

fn remove(root: &mut Value, path: &[&str], name: &str) {
    if let Some(props) = properties(root, path) {
        props.remove(name);
    }
}

fn add(root: &mut Value, path: &[&str], name: &str, schema: Value) {
    if let Some(props) = properties(root, path) {
        props.insert(name.into(), schema);
    }
}

fn add_enum_value(root: &mut Value, path: &[&str], name: &str, value: &str) {
    if let Some(values) = properties(root, path)
        .and_then(|p| p.get_mut(name))
        .and_then(|s| s.get_mut("enum"))
        .and_then(Value::as_array_mut)
    {
        values.push(json!(value));
    }
}

fn string_list() -> Value {
    json!({ "type": "array", "items": { "type": "string" }, "x-kubernetes-list-type": "atomic" })
}

/// The `v1beta1` fields of each kind, as in Kueue's `v1beta1` types.
fn edit_schema(kind: Kind, root: &mut Value, shared: &Shared) {
    match kind {
        Kind::ClusterQueue => {
            rename(root, &["spec"], "cohortName", "cohort");
            remove(root, &["spec"], "concurrentAdmissionPolicy");
            add(
                root,
                &["spec"],
                "admissionChecks",
                json!({ "type": "array", "items": { "type": "string" }, "x-kubernetes-list-type": "set" }),
            );
            add_enum_value(
                root,
                &["spec", "flavorFungibility"],
                "whenCanBorrow",
                "Borrow",
            );
            add_enum_value(
                root,
                &["spec", "flavorFungibility"],
                "whenCanPreempt",
                "Preempt",
            );
            let workload_ref = json!({
                "type": "object",
                "properties": { "name": { "type": "string" }, "namespace": { "type": "string" } },
                "required": ["name", "namespace"],
            });
            add(
                root,
                &["status"],
                "pendingWorkloadsStatus",
                json!({
                    "type": "object",
                    "properties": {
                        "clusterQueuePendingWorkload": {
                            "type": "array", "items": workload_ref, "x-kubernetes-list-type": "atomic",
                        },
                        "lastChangeTime": { "type": "string", "format": "date-time" },
                    },
                    "required": ["lastChangeTime"],
                }),
            );
            add_admission_fair_sharing(root, shared);
        }
        Kind::Cohort => add_admission_fair_sharing(root, shared),
        Kind::LocalQueue => {
            rename(root, &["status"], "flavorsUsage", "flavorUsage");
            let topology = json!({
                "type": "object",
                "properties": { "name": { "type": "string" }, "levels": string_list() },
                "required": ["levels", "name"],
            });
            // Kueue's v1beta1 bounds; a status list carries no CEL rules, so that the schema's
            // estimated rule cost stays within the API server's budget.
            let mut taints = shared.taints.clone();
            drop_rules(&mut taints);
            taints["maxItems"] = json!(8);
            let flavor = json!({
                "type": "object",
                "properties": {
                    "name": { "type": "string", "maxLength": 253 },
                    "resources": {
                        "type": "array", "maxItems": 16,
                        "items": { "type": "string" }, "x-kubernetes-list-type": "set",
                    },
                    "nodeLabels": {
                        "type": "object", "maxProperties": 8,
                        "additionalProperties": { "type": "string" },
                    },
                    "nodeTaints": taints,
                    "topology": topology,
                },
                "required": ["name"],
            });
            add(
                root,
                &["status"],
                "flavors",
                json!({
                    "type": "array", "items": flavor, "maxItems": 16,
                    "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                }),
            );
        }
        Kind::AdmissionCheck => add(
            root,
            &["spec"],
            "retryDelayMinutes",
            json!({ "type": "integer", "format": "int64" }),
        ),
        Kind::Workload => edit_workload_schema(root),
        Kind::ProvisioningRequestConfig
        | Kind::ResourceFlavor
        | Kind::Topology
        | Kind::WorkloadPriorityClass => {}
    }
}

fn add_admission_fair_sharing(root: &mut Value, shared: &Shared) {
    add(
        root,
        &["status", "fairSharing"],
        "admissionFairSharingStatus",
        shared.admission_fair_sharing_status.clone(),
    );
}

fn edit_workload_schema(root: &mut Value) {
    remove(root, &["spec"], "priorityClassRef");
    remove(root, &["spec"], "preemptionGates");
    remove(root, &["status"], "preemptionGates");
    remove(
        root,
        &["spec", "podSets", "[]", "topologyRequest"],
        "podsetSliceRequiredTopologyConstraints",
    );
    rename(
        root,
        &["status"],
        "accumulatedPastExecutionTimeSeconds",
        "accumulatedPastExexcutionTimeSeconds",
    );
    add(
        root,
        &["spec"],
        "priorityClassName",
        json!({ "type": "string", "maxLength": 253 }),
    );
    add(
        root,
        &["spec"],
        "priorityClassSource",
        json!({
            "type": "string",
            "enum": [
                super::workload::WORKLOAD_PRIORITY_CLASS_SOURCE,
                super::workload::POD_PRIORITY_CLASS_SOURCE,
                "",
            ],
        }),
    );
    if let Some(rules) = root
        .pointer_mut("/properties/spec/x-kubernetes-validations")
        .and_then(Value::as_array_mut)
    {
        rules.push(json!({
            "rule": "has(self.priorityClassName) ? has(self.priority) : true",
            "message": "priority should not be nil when priorityClassName is set",
        }));
    }
    let assignment = ["status", "admission", "podSetAssignments", "[]"];
    if let Some(props) = properties(root, &assignment)
        && let Some(schema) = props.get_mut("topologyAssignment")
    {
        let levels = schema
            .pointer("/properties/levels")
            .cloned()
            .unwrap_or_else(string_list);
        let domain = json!({
            "type": "object",
            "properties": {
                "values": string_list(),
                "count": { "type": "integer", "format": "int32", "minimum": 1 },
            },
            "required": ["count", "values"],
        });
        let mut v1beta1 = json!({
            "type": "object",
            "properties": {
                "levels": levels,
                "domains": { "type": "array", "items": domain, "x-kubernetes-list-type": "atomic" },
            },
            "required": ["domains", "levels"],
        });
        if let Some(nullable) = schema.get("nullable") {
            v1beta1["nullable"] = nullable.clone();
        }
        *schema = v1beta1;
    }
}

/// Drops every CEL rule under `node`.
fn drop_rules(node: &mut Value) {
    match node {
        Value::Object(map) => {
            map.remove("x-kubernetes-validations");
            map.values_mut().for_each(drop_rules);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_rules),
        _ => {}
    }
}

/// Drops the CEL rules that name `v1beta2`-only fields (`v1beta1`'s schema has nothing for them to
/// check) and renames `cohortName` in the others.
fn drop_v1beta2_rules(node: &mut Value) {
    match node {
        Value::Object(map) => {
            if let Some(Value::Array(rules)) = map.get_mut("x-kubernetes-validations") {
                rules.retain(|rule| {
                    let text = rule.get("rule").and_then(Value::as_str).unwrap_or_default();
                    !V1BETA2_ONLY_RULE_TERMS
                        .iter()
                        .any(|term| text.contains(term))
                });
                for rule in rules.iter_mut() {
                    for field in ["rule", "message"] {
                        if let Some(text) = rule.get(field).and_then(Value::as_str) {
                            let renamed = text.replace("cohortName", "cohort");
                            rule[field] = json!(renamed);
                        }
                    }
                }
                if rules.is_empty() {
                    map.remove("x-kubernetes-validations");
                }
            }
            for child in map.values_mut() {
                drop_v1beta2_rules(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(drop_v1beta2_rules),
        _ => {}
    }
}
