//! Tests of the webhooks: each rule accepted and refused through the endpoint that checks it, the
//! wire format, and the HTTPS server.

mod conversion_tests;
mod defaulting_tests;
mod endpoint_tests;
mod queue_tests;
mod review_tests;
mod server_tests;
mod workload_tests;
mod workload_update_tests;

use serde_json::{Value, json};

use super::review::{self, AdmissionRequest, PatchOp, Verdict};
use super::{Endpoint, KueueMutating, KueueValidating, Webhooks};
use crate::engine::features::{Feature, FeatureGates};

/// An AdmissionReview body for one request.
fn review_body(operation: &str, object: &Value, old: Option<&Value>) -> Value {
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "kind": {"group": "kueue.x-k8s.io", "version": "v1beta2", "kind": object["kind"]},
            "resource": {"group": "kueue.x-k8s.io", "version": "v1beta2", "resource": "x"},
            "name": object["metadata"]["name"],
            "operation": operation,
            "userInfo": {"username": "admin"},
            "object": object,
            "oldObject": old,
            "dryRun": false,
        }
    })
}

fn request(operation: &str, object: &Value, old: Option<&Value>) -> AdmissionRequest {
    let body = review_body(operation, object, old).to_string();
    review::parse(body.as_bytes()).expect("a well-formed review")
}

fn gates(settings: &[(Feature, bool)]) -> Webhooks {
    let mut gates = FeatureGates::default();
    for (feature, on) in settings {
        gates.set(*feature, *on);
    }
    Webhooks {
        gates,
        ..Webhooks::default()
    }
}

fn validate_with(
    webhooks: &Webhooks,
    kind: KueueValidating,
    object: &Value,
    old: Option<&Value>,
) -> Verdict {
    let operation = if old.is_some() { "UPDATE" } else { "CREATE" };
    Endpoint::Validate(kind).decide(webhooks, &request(operation, object, old))
}

fn validate(kind: KueueValidating, object: &Value, old: Option<&Value>) -> Verdict {
    validate_with(&Webhooks::default(), kind, object, old)
}

fn mutate_with(webhooks: &Webhooks, kind: KueueMutating, object: &Value) -> Verdict {
    Endpoint::Mutate(kind).decide(webhooks, &request("CREATE", object, None))
}

/// The denial message; fails the test when the verdict is not a denial.
#[track_caller]
fn denial(verdict: Verdict) -> String {
    match verdict {
        Verdict::Deny(message) => message,
        other => panic!("expected a denial, got {other:?}"),
    }
}

/// Asserts a denial whose message holds every fragment.
#[track_caller]
fn assert_denied(verdict: Verdict, fragments: &[&str]) {
    let message = denial(verdict);
    for fragment in fragments {
        assert!(
            message.contains(fragment),
            "{fragment:?} not in {message:?}"
        );
    }
}

#[track_caller]
fn assert_allowed(verdict: Verdict) {
    assert_eq!(verdict, Verdict::Allow);
}

/// A ClusterQueue with one flavor `default` covering cpu, with `spec` fields merged in.
fn cluster_queue(name: &str, extra: Value) -> Value {
    let mut object = json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [{
                "coveredResources": ["cpu"],
                "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": "4"}]}],
            }],
        },
    });
    merge(&mut object["spec"], extra);
    object
}

/// A Workload `ns/w` with one pod set `main` of two pods requesting one cpu each, with fields merged
/// into the object.
fn workload(extra: Value) -> Value {
    let mut object = json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {
            "queueName": "lq",
            "podSets": [{
                "name": "main",
                "count": 2,
                "template": {"spec": {"containers": [
                    {"name": "c", "resources": {"requests": {"cpu": "1"}}}
                ]}},
            }],
        },
    });
    merge(&mut object, extra);
    object
}

/// A status holding quota in `cq` for `main` with `count` pods using `cpu` in total.
fn reserved_status(count: i32, cpu: &str) -> Value {
    json!({
        "conditions": [{
            "type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
            "message": "Quota reserved in ClusterQueue cq",
            "lastTransitionTime": "2025-01-01T00:00:00Z",
        }],
        "admission": {"clusterQueue": "cq", "podSetAssignments": [{
            "name": "main", "count": count, "flavors": {"cpu": "default"},
            "resourceUsage": {"cpu": cpu},
        }]},
    })
}

/// Merges `extra` into `target`: objects key by key, anything else replaced.
fn merge(target: &mut Value, extra: Value) {
    match (target, extra) {
        (Value::Object(target), Value::Object(extra)) => {
            for (key, value) in extra {
                merge(target.entry(key).or_insert(Value::Null), value);
            }
        }
        (target, extra) => *target = extra,
    }
}

/// Applies the `add`/`remove` operations `diff` produces to `doc`.
pub(crate) fn apply_patch(mut doc: Value, ops: &[PatchOp]) -> Value {
    for op in ops {
        let (parent, last) = op.path.rsplit_once('/').expect("a pointer below the root");
        let key = last.replace("~1", "/").replace("~0", "~");
        let target = doc
            .pointer_mut(parent)
            .and_then(Value::as_object_mut)
            .unwrap_or_else(|| panic!("no object at {parent}"));
        match (op.op, &op.value) {
            ("add", Some(value)) => {
                target.insert(key, value.clone());
            }
            ("remove", None) => {
                target.remove(&key);
            }
            other => panic!("unexpected operation {other:?}"),
        }
    }
    doc
}
