//! Which pods are left on a host the assignment no longer names.

use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

use super::pods_off_assignment;
use crate::api::Workload;

fn workload(admitted: bool, hosts: &[&str]) -> Workload {
    let roots: Vec<String> = hosts.iter().map(|h| (*h).to_string()).collect();
    serde_json::from_value(json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"queueName": "q", "podSets": [{"name": "main", "count": hosts.len(),
            "template": {"spec": {"containers": [{"name": "c"}]}}}]},
        "status": {
            "conditions": [{"type": "Admitted", "status": if admitted { "True" } else { "False" },
                "reason": "Admitted", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
            "admission": {"clusterQueue": "cq", "podSetAssignments": [{
                "name": "main", "count": hosts.len(), "flavors": {"cpu": "tas"},
                "topologyAssignment": {"levels": ["kubernetes.io/hostname"], "slices": [{
                    "domainCount": hosts.len(),
                    "valuesPerLevel": [{"individual": {"roots": roots}}],
                    "podCounts": {"universal": 1},
                }]},
            }]},
        },
    }))
    .unwrap()
}

fn pod(name: &str, host: Option<&str>, extra: serde_json::Value) -> Pod {
    let mut pod = json!({
        "metadata": {"name": name, "namespace": "ns", "labels": {"kueue.x-k8s.io/podset": "main"}},
        "spec": {"containers": [{"name": "c"}]},
        "status": {"phase": "Running"},
    });
    if let Some(host) = host {
        pod["spec"]["nodeSelector"] = json!({"kubernetes.io/hostname": host});
    }
    json_merge(&mut pod, extra);
    serde_json::from_value(pod).unwrap()
}

fn json_merge(into: &mut serde_json::Value, from: serde_json::Value) {
    match (into, from) {
        (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
            for (k, v) in b {
                json_merge(a.entry(k).or_insert(serde_json::Value::Null), v);
            }
        }
        (slot, value) => *slot = value,
    }
}

#[test]
fn a_running_pod_on_a_replaced_host_is_deleted_the_others_stay() {
    let w = workload(true, &["h1", "h3"]);
    let pods = [
        pod("a", Some("h1"), json!({})),
        pod("b", Some("h2"), json!({})),
        pod("c", Some("h3"), json!({})),
    ];
    let refs: Vec<&Pod> = pods.iter().collect();
    assert_eq!(pods_off_assignment(&w, &refs), vec!["b"]);
}

#[test]
fn finished_deleting_gated_and_unplaced_pods_are_left_alone() {
    let w = workload(true, &["h1"]);
    let pods = [
        pod(
            "done",
            Some("h2"),
            json!({"status": {"phase": "Succeeded"}}),
        ),
        pod(
            "going",
            Some("h2"),
            json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}}),
        ),
        pod(
            "gated",
            Some("h2"),
            json!({"spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/topology"}]}}),
        ),
        pod("free", None, json!({})),
    ];
    let refs: Vec<&Pod> = pods.iter().collect();
    assert!(pods_off_assignment(&w, &refs).is_empty());
}

#[test]
fn pods_of_an_admission_before_the_last_eviction_are_left_to_the_stop() {
    let mut w = workload(true, &["h1"]);
    let evicted: crate::api::Condition =
        serde_json::from_value(json!({"type": "Evicted", "status": "False",
            "reason": "QuotaReserved", "message": "Previously: evicted",
            "lastTransitionTime": "2026-01-01T00:01:00Z"}))
        .unwrap();
    w.status.as_mut().unwrap().conditions.push(evicted);
    let pods = [
        pod(
            "old",
            Some("h2"),
            json!({"metadata": {"creationTimestamp": "2026-01-01T00:00:30Z"}}),
        ),
        pod(
            "new",
            Some("h2"),
            json!({"metadata": {"creationTimestamp": "2026-01-01T00:01:30Z"}}),
        ),
    ];
    let refs: Vec<&Pod> = pods.iter().collect();
    assert_eq!(pods_off_assignment(&w, &refs), vec!["new"]);
}

#[test]
fn nothing_is_deleted_for_a_workload_not_admitted() {
    let w = workload(false, &["h1"]);
    let pods = [pod("b", Some("h2"), json!({}))];
    let refs: Vec<&Pod> = pods.iter().collect();
    assert!(pods_off_assignment(&w, &refs).is_empty());
}
