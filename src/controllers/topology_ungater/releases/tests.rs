//! A host failing while pods of the Workload still wait at the topology gate: as in Kueue, the
//! waiting pods are kept gated (their nodeSelector is set only when they are released) until the
//! host is replaced in the assignment, then released onto the replacement; only a pod already
//! sent to the dropped host goes.

use k8s_openapi::api::core::v1::{Node, Pod};
use serde_json::json;

use super::*;
use crate::api::Workload;
use crate::controllers::topology_ungater::inputs::{Touched, UngaterInput};
use crate::controllers::watches::Change;

fn key() -> ObjectKey {
    ObjectKey::new("ml", "job-train-1a2b3")
}

/// The Workload admitted on one pod a host of `hosts`.
fn workload(hosts: &[&str]) -> Workload {
    serde_json::from_value(json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "job-train-1a2b3", "namespace": "ml", "resourceVersion": "9"},
        "spec": {"queueName": "lq", "podSets": [{"name": "main", "count": hosts.len(),
            "template": {"spec": {"containers": [{"name": "c"}]}},
            "topologyRequest": {"required": "kubernetes.io/hostname"}}]},
        "status": {
            "conditions": [{"type": "Admitted", "status": "True", "reason": "Admitted",
                "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
            "admission": {"clusterQueue": "cq", "podSetAssignments": [{
                "name": "main", "count": hosts.len(), "flavors": {"cpu": "tas"},
                "topologyAssignment": {"levels": ["kubernetes.io/hostname"], "slices": [{
                    "domainCount": hosts.len(),
                    "valuesPerLevel": [{"individual": {"roots": hosts}}],
                    "podCounts": {"universal": 1},
                }]},
            }]},
        },
    }))
    .expect("a Workload")
}

/// A pending pod of the Workload, still gated or sent to `host`.
fn pod(name: &str, host: Option<&str>) -> Pod {
    let mut spec = json!({"containers": [{"name": "c"}]});
    match host {
        Some(host) => spec["nodeSelector"] = json!({"kubernetes.io/hostname": host}),
        None => spec["schedulingGates"] = json!([{"name": "kueue.x-k8s.io/topology"}]),
    }
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "ml", "resourceVersion": "3",
                     "creationTimestamp": "2026-01-01T00:00:01Z",
                     "labels": {"kueue.x-k8s.io/podset": "main"},
                     "annotations": {"kueue.x-k8s.io/workload": "job-train-1a2b3"}},
        "spec": spec,
        "status": {"phase": "Pending"},
    }))
    .expect("a Pod")
}

/// A node whose hostname label is its name.
fn node(name: &str, ready: bool) -> Node {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"conditions": [{"type": "Ready", "status": if ready { "True" } else { "Unknown" }}]},
    }))
    .expect("a Node")
}

/// h1 has stopped reporting; h2 and h3 are ready.
fn caches(workload: Workload, pods: Vec<Pod>) -> UngaterCaches {
    let mut caches = UngaterCaches::default();
    let mut touched = Touched::default();
    let nodes = vec![node("h1", false), node("h2", true), node("h3", true)];
    for input in [
        UngaterInput::Node(Change::Reset(nodes)),
        UngaterInput::Workload(Change::Reset(vec![std::sync::Arc::new(workload)])),
        UngaterInput::Pod(Change::Reset(pods)),
    ] {
        caches.take_input(input, &mut touched);
    }
    caches
}

/// The releases of the Workload's pods now, as (pod, host).
fn released(caches: &UngaterCaches) -> Vec<(String, Option<String>)> {
    releases(caches, &key(), &BTreeMap::new())
        .into_iter()
        .map(|r| {
            let host = r.node_selector.get("kubernetes.io/hostname").cloned();
            (r.pod_key.to_string(), host)
        })
        .collect()
}

#[test]
fn a_gated_pod_whose_host_is_not_ready_waits_for_its_replacement() {
    // The pod on h1 has stopped and its replacement a is created, gated, before h1 is replaced.
    let failing = caches(
        workload(&["h1", "h2"]),
        vec![pod("a", None), pod("c", Some("h2"))],
    );
    assert_eq!(released(&failing), []);
    assert!(stray_pods(&failing, &key()).is_empty());

    let mut touched = Touched::default();
    let mut back = failing;
    back.take_input(
        UngaterInput::Node(Change::Apply(Box::new(node("h1", true)))),
        &mut touched,
    );
    assert!(
        touched.all,
        "a host turning ready is looked at for every Workload"
    );
    assert_eq!(
        released(&back),
        [("ml/a".to_owned(), Some("h1".to_owned()))]
    );
}

#[test]
fn gated_pods_are_kept_through_a_replacement_and_released_onto_the_new_host() {
    // h1 failed and was replaced by h3; a is still gated, b was sent to h1, c runs on h2.
    let pods = vec![pod("a", None), pod("b", Some("h1")), pod("c", Some("h2"))];
    let replaced = caches(workload(&["h3", "h2"]), pods);

    let deleted: Vec<String> = stray_pods(&replaced, &key())
        .into_iter()
        .map(|(key, _)| key.to_string())
        .collect();
    assert_eq!(
        deleted,
        ["ml/b"],
        "only the pod sent to the dropped host goes"
    );

    assert_eq!(
        released(&replaced),
        [("ml/a".to_owned(), Some("h3".to_owned()))]
    );
}
