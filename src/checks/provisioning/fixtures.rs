//! Objects the provisioning rules' tests start from, written as the API server would return
//! them: a Workload of two pod sets holding quota with an entry for check `prov`, its config,
//! and requests in any state.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::{Value, json};

use crate::api::provisioning_request_config::ProvisioningRequestConfigSpec;
use crate::api::{ProvisioningRequest, Workload};

pub const NAMESPACE: &str = "team-a";
pub const WORKLOAD: &str = "job-train-5d2c1";
pub const WORKLOAD_UID: &str = "0b6f7a1e-0000-4000-8000-000000000001";
pub const CHECK: &str = "prov";

/// `2026-03-01T10:00:00Z` plus `seconds`.
pub fn at(seconds: i64) -> Time {
    let base: Time = serde_json::from_value(json!("2026-03-01T10:00:00Z")).unwrap();
    Time(base.0 + k8s_openapi::jiff::SignedDuration::from_secs(seconds))
}

/// A container asking for `cpu` and, when given, a GPU limit.
fn container(name: &str, cpu: &str, gpu: Option<&str>) -> Value {
    let mut resources = json!({"requests": {"cpu": cpu}});
    if let Some(gpu) = gpu {
        resources["limits"] = json!({"nvidia.com/gpu": gpu});
    }
    json!({"name": name, "image": "trainer:1", "resources": resources})
}

/// The Workload as JSON: pod sets `driver` (1 pod, cpu only) and `workers` (4 pods with a GPU),
/// QuotaReserved on flavor `gpu-a` at 120 s, check `prov` Pending since then.
pub fn workload_json() -> Value {
    json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": WORKLOAD, "namespace": NAMESPACE, "uid": WORKLOAD_UID,
            "resourceVersion": "41",
        },
        "spec": {
            "queueName": "lq",
            "podSets": [
                {"name": "driver", "count": 1, "template": {"spec": {
                    "containers": [container("driver", "1", None)]}}},
                {"name": "workers", "count": 4, "template": {
                    "metadata": {"labels": {"app": "train"}},
                    "spec": {"containers": [container("worker", "2", Some("1"))]}}},
            ],
        },
        "status": {
            "conditions": [{
                "type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
                "message": "Quota reserved in ClusterQueue cq",
                "lastTransitionTime": "2026-03-01T10:02:00Z",
            }],
            "admission": {"clusterQueue": "cq", "podSetAssignments": [
                {"name": "driver", "count": 1, "flavors": {"cpu": "gpu-a"}},
                {"name": "workers", "count": 4,
                 "flavors": {"cpu": "gpu-a", "nvidia.com/gpu": "gpu-a"}},
            ]},
            "admissionChecks": [
                {"name": CHECK, "state": "Pending", "message": "",
                 "lastTransitionTime": "2026-03-01T10:02:00Z"},
                {"name": "other", "state": "Ready", "message": "approved",
                 "lastTransitionTime": "2026-03-01T10:02:30Z"},
            ],
        },
    })
}

pub fn workload() -> Workload {
    serde_json::from_value(workload_json()).unwrap()
}

/// The Workload with `patch` merged over it (JSON merge patch: `null` removes).
pub fn workload_with(patch: Value) -> Workload {
    let mut value = workload_json();
    merge(&mut value, patch);
    serde_json::from_value(value).unwrap()
}

/// The Workload with this check entry in place of `prov`'s.
pub fn workload_with_entry(entry: Value) -> Workload {
    let mut value = workload_json();
    value["status"]["admissionChecks"][0] = entry;
    serde_json::from_value(value).unwrap()
}

/// The Workload with a condition added.
pub fn workload_with_condition(type_: &str, status: &str) -> Workload {
    let mut value = workload_json();
    value["status"]["conditions"].as_array_mut().unwrap().push(
        json!({"type": type_, "status": status, "reason": "R", "message": "",
                     "lastTransitionTime": "2026-03-01T10:03:00Z"}),
    );
    serde_json::from_value(value).unwrap()
}

/// Class `queued-provisioning.gke.io`, one parameter, default retries.
pub fn config() -> ProvisioningRequestConfigSpec {
    serde_json::from_value(json!({
        "provisioningClassName": "queued-provisioning.gke.io",
        "parameters": {"maxRunDurationSeconds": "3600"},
    }))
    .unwrap()
}

/// `config()` with `patch` merged over it.
pub fn config_with(patch: Value) -> ProvisioningRequestConfigSpec {
    let mut value = serde_json::to_value(config()).unwrap();
    merge(&mut value, patch);
    serde_json::from_value(value).unwrap()
}

/// Attempt `attempt` of the Workload's request for `prov`, with these conditions (type,
/// status, message).
pub fn request(attempt: i32, conditions: &[(&str, &str, &str)]) -> ProvisioningRequest {
    let name = format!("{WORKLOAD}-{CHECK}-{attempt}");
    let conditions: Vec<Value> = conditions
        .iter()
        .map(|(type_, status, message)| {
            json!({"type": type_, "status": status, "reason": "R", "message": message,
                   "lastTransitionTime": "2026-03-01T10:04:00Z"})
        })
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "autoscaling.x-k8s.io/v1",
        "kind": "ProvisioningRequest",
        "metadata": {
            "name": name, "namespace": NAMESPACE, "uid": format!("uid-{attempt}"),
            "ownerReferences": [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
                                 "name": WORKLOAD, "uid": WORKLOAD_UID, "controller": true}],
        },
        "spec": {
            "provisioningClassName": "queued-provisioning.gke.io",
            "parameters": {"maxRunDurationSeconds": "3600"},
            "podSets": [
                {"podTemplateRef": {"name": format!("ppt-{name}-driver")}, "count": 1},
                {"podTemplateRef": {"name": format!("ppt-{name}-workers")}, "count": 4},
            ],
        },
        "status": {"conditions": conditions,
                   "provisioningClassDetails": {"nodepool": "pool-7"}},
    }))
    .unwrap()
}

fn merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => {
            for (key, value) in patch {
                if value.is_null() {
                    target.remove(&key);
                } else {
                    merge(target.entry(key).or_insert(Value::Null), value);
                }
            }
        }
        (target, patch) => *target = patch,
    }
}
