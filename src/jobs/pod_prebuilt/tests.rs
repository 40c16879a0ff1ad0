use serde_json::json;

use super::*;
use crate::api::keys::labels;
use crate::jobs::fixtures::{merge, pod, workload};

/// A pod of a fast-admission serving group of 3 under the prebuilt Workload `wl`.
fn member(name: &str) -> Pod {
    pod(
        name,
        json!({"metadata": {
            "labels": {(labels::MANAGED): "true", (labels::QUEUE_NAME): "lq"},
            "annotations": {
                (annotations::POD_GROUP_NAME): "wl",
                (annotations::PREBUILT_WORKLOAD_NAME): "wl",
                (annotations::POD_GROUP_TOTAL_COUNT): "3",
                (annotations::POD_GROUP_FAST_ADMISSION): "true",
                (annotations::POD_GROUP_SERVING): "true",
                (annotations::ROLE_HASH): "main",
            },
        }}),
    )
}

fn prebuilt(count: i32) -> Workload {
    let mut patch = json!({"metadata": {"name": "wl", "ownerReferences": null,
        "annotations": {(annotations::IS_GROUP_WORKLOAD): "true"}}});
    merge(
        &mut patch,
        json!({"spec": {"podSets": [{"name": "main", "count": count,
            "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}]}}),
    );
    workload(patch)
}

#[test]
fn every_pod_of_the_group_becomes_an_owner() {
    let pods = [member("db-0"), member("db-1")];
    assert!(names_prebuilt(&pods));
    let PodStep::AdoptPods { workload, added } = prebuilt_members(&pods, &prebuilt(3)) else {
        panic!("the pods are adopted");
    };
    assert_eq!(added, 2);
    let owners: Vec<_> = workload
        .metadata
        .owner_references
        .iter()
        .flatten()
        .map(|o| (o.kind.as_str(), o.name.as_str(), o.controller))
        .collect();
    assert!(owners.contains(&("Pod", "db-0", None)) && owners.contains(&("Pod", "db-1", None)));
    assert_eq!(prebuilt_members(&pods, &workload), PodStep::Idle);
}

/// A StatefulSet recreates a pod under its name with a new UID: the new pod takes its
/// predecessor's place among the owners instead of adding to them.
#[test]
fn a_pod_recreated_under_its_name_replaces_its_predecessors_owner_reference() {
    let pods = [member("db-0"), member("db-1")];
    let PodStep::AdoptPods { workload, .. } = prebuilt_members(&pods, &prebuilt(3)) else {
        panic!("the pods are adopted");
    };
    let mut recreated = member("db-0");
    recreated.metadata.uid = Some("uid-db-0-again".to_owned());
    let pods = [recreated, member("db-1")];
    let PodStep::AdoptPods { workload, added } = prebuilt_members(&pods, &workload) else {
        panic!("the recreated pod is adopted");
    };
    assert_eq!(added, 1);
    let owners: Vec<(&str, &str)> = workload
        .metadata
        .owner_references
        .iter()
        .flatten()
        .map(|o| (o.name.as_str(), o.uid.as_str()))
        .collect();
    assert_eq!(owners.len(), 2, "{owners:?}");
    assert!(owners.contains(&("db-0", "uid-db-0-again")), "{owners:?}");
    assert_eq!(prebuilt_members(&pods, &workload), PodStep::Idle);
}

#[test]
fn a_workload_counting_fewer_pods_than_the_group_is_out_of_sync() {
    let pods = [member("db-0")];
    let PodStep::AdoptPods { workload, .. } = prebuilt_members(&pods, &prebuilt(2)) else {
        panic!("the pod is adopted first");
    };
    let PodStep::FinishWorkload {
        reason, message, ..
    } = prebuilt_members(&pods, &workload)
    else {
        panic!("a Workload of 2 does not run a group of 3");
    };
    assert_eq!(reason, finished_reasons::OUT_OF_SYNC);
    assert_eq!(message, OUT_OF_SYNC_MESSAGE);
}

#[test]
fn a_group_without_a_prebuilt_name_builds_its_own() {
    let mut plain = member("p");
    plain
        .metadata
        .annotations
        .as_mut()
        .expect("annotations")
        .remove(annotations::PREBUILT_WORKLOAD_NAME);
    assert!(!names_prebuilt(&[plain]));
}
