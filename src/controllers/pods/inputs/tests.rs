use serde_json::json;

use super::*;

fn pod(name: &str, group: Option<&str>) -> Pod {
    let labels = match group {
        Some(g) => json!({(labels::MANAGED): "true", (labels::POD_GROUP_NAME): g}),
        None => json!({(labels::MANAGED): "true"}),
    };
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}"), "labels": labels},
    }))
    .unwrap()
}

/// Workload `name` in `ns` with `metadata` (annotations, owner references) besides.
fn workload(name: &str, mut metadata: serde_json::Value) -> Workload {
    metadata["name"] = json!(name);
    metadata["namespace"] = json!("ns");
    serde_json::from_value(json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": metadata,
        "spec": {"podSets": []},
    }))
    .unwrap()
}

fn unit(group: bool, name: &str) -> Unit {
    Unit {
        namespace: "ns".into(),
        group,
        name: name.into(),
    }
}

fn take(caches: &mut PodCaches, input: PodInput) -> BTreeSet<Unit> {
    let mut touched = Touched::default();
    caches.take_input(input, &mut touched);
    touched.units
}

#[test]
fn pods_form_units_and_workloads_find_theirs() {
    let mut caches = PodCaches::new(true);
    let group = unit(true, "train");
    let touched = take(
        &mut caches,
        PodInput::Pod(Change::Apply(Box::new(pod("a", Some("train"))))),
    );
    assert_eq!(touched, BTreeSet::from([group.clone()]));
    take(
        &mut caches,
        PodInput::Pod(Change::Apply(Box::new(pod("b", Some("train"))))),
    );
    take(
        &mut caches,
        PodInput::Pod(Change::Apply(Box::new(pod("web", None)))),
    );
    assert_eq!(caches.pods_of(&group).len(), 2);

    let made = workload(
        "train",
        json!({"annotations": {(annotations::IS_GROUP_WORKLOAD): "true"}}),
    );
    let touched = take(
        &mut caches,
        PodInput::Workload(Change::Apply(Box::new(std::sync::Arc::new(made)))),
    );
    assert_eq!(touched, BTreeSet::from([group.clone()]));
    let pods = caches.pods_of(&group);
    assert_eq!(caches.workloads_of(&group, &pods).len(), 1);

    let single = unit(false, "web");
    let owned = workload(
        "pod-web-1a2b3",
        json!({"ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "web",
            "uid": "uid-web", "controller": true}]}),
    );
    let touched = take(
        &mut caches,
        PodInput::Workload(Change::Apply(Box::new(std::sync::Arc::new(owned)))),
    );
    assert_eq!(touched, BTreeSet::from([single.clone()]));
    let pods = caches.pods_of(&single);
    assert_eq!(caches.workloads_of(&single, &pods).len(), 1);
    // A Workload of an earlier pod of the same name is not the new pod's.
    let mut recreated = pod("web", None);
    recreated.metadata.uid = Some("uid-web-2".into());
    assert!(caches.workloads_of(&single, &[recreated]).is_empty());
}

#[test]
fn a_foreign_namesake_blocks_a_group_but_is_never_let_go_of_as_its_own() {
    let mut caches = PodCaches::new(true);
    let group = unit(true, "train");
    take(
        &mut caches,
        PodInput::Pod(Change::Apply(Box::new(pod("a", Some("train"))))),
    );
    let foreign = workload(
        "train",
        json!({"ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "train",
            "uid": "uid-job", "controller": true}]}),
    );
    let touched = take(
        &mut caches,
        PodInput::Workload(Change::Apply(Box::new(std::sync::Arc::new(foreign)))),
    );
    assert_eq!(touched, BTreeSet::from([group.clone()]));
    let pods = caches.pods_of(&group);
    assert_eq!(caches.workloads_of(&group, &pods).len(), 1);

    take(
        &mut caches,
        PodInput::Pod(Change::Delete(Box::new(pod("a", Some("train"))))),
    );
    assert!(caches.pods_of(&group).is_empty());
    assert!(caches.workloads_of(&group, &[]).is_empty());
    assert!(!caches.units().contains(&group));
}

#[test]
fn a_write_answer_never_replaces_what_the_watch_brought_since() {
    let mut caches = PodCaches::new(true);
    let group = unit(true, "train");
    let versioned = |rv: &str, gated: bool| {
        let mut pod = pod("a", Some("train"));
        pod.metadata.resource_version = Some(rv.into());
        pod.metadata.annotations = Some(BTreeMap::from([("gated".into(), gated.to_string())]));
        pod
    };
    let written = |caches: &mut PodCaches, pod: Pod, read: &str| {
        let mut touched = Touched::default();
        caches.take_written(
            PodInput::Pod(Change::Apply(Box::new(pod))),
            Some(read),
            &mut touched,
        );
    };
    let gated_of = |caches: &PodCaches| caches.pods_of(&group)[0].annotations()["gated"].clone();
    take(
        &mut caches,
        PodInput::Pod(Change::Apply(Box::new(versioned("1", true)))),
    );
    // The answer to a write decided on version 1 lands first: it is taken.
    written(&mut caches, versioned("2", false), "1");
    assert_eq!(gated_of(&caches), "false");
    // The watch brought version 3 before the answer to another write decided on version 2.
    take(
        &mut caches,
        PodInput::Pod(Change::Apply(Box::new(versioned("3", true)))),
    );
    written(&mut caches, versioned("2", false), "2");
    assert_eq!(gated_of(&caches), "true");
}

#[test]
fn with_pod_only_implied_a_managed_pod_is_taken_only_from_a_parent_framework() {
    let mut caches = PodCaches::new(false);
    take(
        &mut caches,
        PodInput::Pod(Change::Apply(Box::new(pod("labelled-by-hand", None)))),
    );
    assert!(caches.pods_of(&unit(false, "labelled-by-hand")).is_empty());

    let mut replica = pod("web-5d4f8-x2k9q", None);
    replica.metadata.annotations = Some(BTreeMap::from([(
        annotations::POD_SUSPENDING_PARENT.to_owned(),
        "deployment".to_owned(),
    )]));
    take(
        &mut caches,
        PodInput::Pod(Change::Apply(Box::new(replica.clone()))),
    );
    assert_eq!(
        caches.pods_of(&unit(false, "web-5d4f8-x2k9q")),
        [replica.clone()]
    );

    // Losing the annotation counts as leaving, so no stale member stays behind.
    let mut unmarked = replica;
    unmarked.metadata.annotations = None;
    let touched = take(
        &mut caches,
        PodInput::Pod(Change::Apply(Box::new(unmarked))),
    );
    assert_eq!(touched, BTreeSet::from([unit(false, "web-5d4f8-x2k9q")]));
    assert!(caches.pods_of(&unit(false, "web-5d4f8-x2k9q")).is_empty());
}
