//! The `v1beta1` schema and the conversion agree: every field a conversion reads or writes in a
//! version is a field of that version's schema.

use serde_json::{Value, json};

use super::convert::Kind;
use super::crd::crds;
use super::version::Version;

fn schema(kind: Kind, version: Version) -> Value {
    let crd = crds()
        .expect("CRDs")
        .into_iter()
        .find(|c| c.spec.names.kind == kind.name())
        .expect("a CRD per kind");
    let served = crd
        .spec
        .versions
        .into_iter()
        .find(|v| v.name == version.name())
        .expect("both versions served");
    serde_json::to_value(served.schema.and_then(|s| s.open_api_v3_schema)).expect("JSON")
}

/// The schema of the object at a JSON pointer, list indices entering `items`.
fn at<'a>(root: &'a Value, pointer: &str) -> Option<&'a Value> {
    pointer
        .split('/')
        .filter(|s| !s.is_empty())
        .try_fold(root, |node, step| {
            if step.bytes().all(|b| b.is_ascii_digit()) {
                node.get("items")
            } else {
                node.get("properties")?.get(step)
            }
        })
}

#[test]
fn every_converted_field_is_in_its_versions_schema() {
    let sample = json!({
        "spec": { "podSets": [{ "name": "main" }] },
        "status": { "admission": { "podSetAssignments": [{ "name": "main" }] } },
    });
    for kind in Kind::ALL {
        for version in [Version::V1beta1, Version::V1beta2] {
            let root = schema(kind, version);
            for group in kind.groups(&sample) {
                let members = match version {
                    Version::V1beta1 => group.v1beta1,
                    Version::V1beta2 => group.v1beta2,
                };
                let parent = at(&root, &group.parent)
                    .unwrap_or_else(|| panic!("{kind:?} {version:?}: no {}", group.parent));
                for member in members {
                    assert!(
                        parent.pointer(&format!("/properties/{member}")).is_some(),
                        "{kind:?} {version:?}: no {}/{member}",
                        group.parent
                    );
                }
            }
        }
    }
}

#[test]
fn v1beta1_lacks_what_only_v1beta2_has() {
    let workload = schema(Kind::Workload, Version::V1beta1);
    for pointer in [
        "/spec/priorityClassRef",
        "/spec/preemptionGates",
        "/status/accumulatedPastExecutionTimeSeconds",
        "/status/admission/podSetAssignments/0/topologyAssignment/slices",
    ] {
        assert!(at(&workload, pointer).is_none(), "{pointer}");
    }
    let cluster_queue = schema(Kind::ClusterQueue, Version::V1beta1);
    assert!(at(&cluster_queue, "/spec/cohortName").is_none());
    let borrow = at(&cluster_queue, "/spec/flavorFungibility/whenCanBorrow").expect("policy");
    assert!(
        borrow["enum"]
            .as_array()
            .expect("enum")
            .contains(&json!("Borrow"))
    );
    let rules = cluster_queue.pointer("/properties/spec/x-kubernetes-validations");
    let text = rules.map(Value::to_string).unwrap_or_default();
    assert!(
        text.contains("self.cohort ") && !text.contains("cohortName"),
        "{text}"
    );
}
