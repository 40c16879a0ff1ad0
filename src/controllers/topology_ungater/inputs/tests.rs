use std::sync::Arc;

use serde_json::json;

use super::*;

/// A Workload admitted on `hosts`, by topology when `tas`.
fn workload(version: &str, tas: bool) -> SharedWorkload {
    let mut assignment = json!({"name": "main", "count": 1, "flavors": {"cpu": "f"}});
    if tas {
        assignment["topologyAssignment"] = json!({"levels": ["kubernetes.io/hostname"],
            "slices": [{"domainCount": 1, "valuesPerLevel": [{"individual": {"roots": ["h1"]}}],
                        "podCounts": {"universal": 1}}]});
    }
    Arc::new(
        serde_json::from_value(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": "w", "namespace": "ml", "resourceVersion": version},
            "spec": {"podSets": [{"name": "main", "count": 1,
                "template": {"spec": {"containers": [{"name": "c"}]}}}]},
            "status": {"admission": {"clusterQueue": "cq", "podSetAssignments": [assignment]}},
        }))
        .expect("a Workload"),
    )
}

fn pod(name: &str, version: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "ml", "resourceVersion": version,
                     "labels": {"kueue.x-k8s.io/podset": "main"},
                     "annotations": {"kueue.x-k8s.io/workload": "w", "other": "dropped"}},
        "spec": {"containers": [{"name": "c", "image": "big"}],
                 "schedulingGates": [{"name": "kueue.x-k8s.io/topology"}]},
    }))
    .expect("a Pod")
}

fn key() -> ObjectKey {
    ObjectKey::new("ml", "w")
}

#[test]
fn only_workloads_placed_by_topology_are_held_and_one_that_stops_being_is_looked_at() {
    let mut caches = UngaterCaches::default();
    let mut touched = Touched::default();
    caches.take_input(
        UngaterInput::Workload(Change::Apply(Box::new(workload("1", false)))),
        &mut touched,
    );
    assert!(caches.workload_keys().is_empty());
    assert!(touched.workloads.is_empty(), "nothing to look at");

    caches.take_input(
        UngaterInput::Workload(Change::Apply(Box::new(workload("2", true)))),
        &mut touched,
    );
    assert_eq!(caches.workload_keys(), BTreeSet::from([key()]));

    let mut touched = Touched::default();
    caches.take_input(
        UngaterInput::Workload(Change::Apply(Box::new(workload("3", false)))),
        &mut touched,
    );
    assert!(caches.read_workload(&key()).is_none());
    assert_eq!(touched.workloads, BTreeSet::from([key()]));
}

#[test]
fn pods_are_held_slim_by_their_workload_and_an_older_write_answer_is_ignored() {
    let mut caches = UngaterCaches::default();
    let mut touched = Touched::default();
    caches.take_input(
        UngaterInput::Pod(Change::Reset(vec![slim_pod(pod("a", "5"))])),
        &mut touched,
    );
    assert!(touched.all, "a full list looks at everything");
    let held = caches.pods_of(&key());
    assert_eq!(held.len(), 1);
    let slim = held[0];
    assert!(!slim.annotations().contains_key("other"));
    assert!(slim.spec.as_ref().is_some_and(|s| s.containers.is_empty()));
    assert_eq!(
        caches.workload_of_pod(&ObjectKey::new("ml", "a")),
        Some(key())
    );

    // The release was decided on version 4, the watch already brought 5: not taken.
    let mut released = pod("a", "6");
    released.spec.as_mut().expect("a spec").scheduling_gates = None;
    caches.take_written(
        UngaterInput::Pod(Change::Apply(Box::new(slim_pod(released.clone())))),
        Some("4"),
        &mut touched,
    );
    let gates = |c: &UngaterCaches| {
        c.pods_of(&key())[0]
            .spec
            .clone()
            .and_then(|s| s.scheduling_gates)
    };
    assert!(gates(&caches).is_some());
    // Decided on the version held: taken.
    caches.take_written(
        UngaterInput::Pod(Change::Apply(Box::new(slim_pod(released)))),
        Some("5"),
        &mut touched,
    );
    assert!(gates(&caches).is_none());

    caches.take_input(
        UngaterInput::Pod(Change::Delete(Box::new(pod("a", "7")))),
        &mut touched,
    );
    assert!(caches.pods_of(&key()).is_empty());
}
