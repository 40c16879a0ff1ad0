use serde_json::{Value, json};

use super::*;
use crate::jobs::fixtures::{condition, merge, pod};

const UID: &str = "5a1e2d4e-0000-4000-8000-0000000000aa";

/// A StatefulSet `db` in `ns` of `replicas` replicas in queue `lq`, marked by the webhook.
fn statefulset(replicas: i32, patch: Value) -> StatefulSet {
    let mut object = json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "ns", "uid": UID,
                     "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {
            "replicas": replicas,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"},
                             "annotations": {"kueue.x-k8s.io/pod-suspending-parent": "statefulset"}},
                "spec": {"containers": [{"name": "c", "image": "nginx",
                                         "resources": {"requests": {"cpu": "1"}}}]},
            },
        },
    });
    merge(&mut object, patch);
    serde_json::from_value(object).expect("a StatefulSet")
}

fn context_parts() -> (PriorityLookup, FeatureGates) {
    (PriorityLookup::new(), FeatureGates::default())
}

fn step(sts: &StatefulSet, workload: Option<&Workload>, pods: &[Pod]) -> StatefulSetStep {
    let (priorities, gates) = context_parts();
    next_statefulset_step(
        sts,
        workload,
        pods,
        StatefulSetContext {
            priorities: &priorities,
            gates: &gates,
            manage_without_queue_name: false,
        },
    )
}

fn built(sts: &StatefulSet) -> Workload {
    let (priorities, gates) = context_parts();
    workload_for_statefulset(sts, &priorities, &gates).expect("a Workload")
}

/// A pod the StatefulSet controller created and the Pod webhook gated.
fn created_pod(name: &str) -> Pod {
    pod(
        name,
        json!({"metadata": {
            "labels": {"app": "db", "apps.kubernetes.io/pod-index": "0",
                       "controller-revision-hash": "db-1"},
            "annotations": {"kueue.x-k8s.io/pod-suspending-parent": "statefulset",
                            "kueue.x-k8s.io/role-hash": "0a1b2c3d"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db",
                                 "uid": UID, "controller": true}],
        },
        "spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}]}}),
    )
}

#[test]
fn the_workload_is_one_pod_set_of_the_replicas_owned_by_the_statefulset() {
    let sts = statefulset(3, json!({}));
    let workload = built(&sts);
    let [name, legacy] = statefulset_workload_names(&sts);
    assert_eq!(workload.metadata.name.as_deref(), Some(name.as_str()));
    assert!(name.starts_with("statefulset-db-") && name != legacy);
    assert_eq!(workload.spec.queue_name.as_deref(), Some("lq"));
    let [pod_set] = workload.spec.pod_sets.as_slice() else {
        panic!("one pod set: {:?}", workload.spec.pod_sets);
    };
    assert_eq!((pod_set.name.as_str(), pod_set.count), ("main", 3));
    assert_eq!(
        pod_set
            .topology_request
            .as_ref()
            .and_then(|t| t.pod_index_label.as_deref()),
        Some(POD_INDEX_LABEL)
    );
    let owners = workload
        .metadata
        .owner_references
        .clone()
        .unwrap_or_default();
    assert_eq!(owners.len(), 1);
    assert_eq!(
        (owners[0].kind.as_str(), owners[0].uid.as_str()),
        ("StatefulSet", UID)
    );
    assert_eq!(
        owners[0].controller, None,
        "the pods' group is no controller"
    );
    let annotations = workload.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(annotations[annotations::IS_GROUP_WORKLOAD], "true");
    assert_eq!(annotations[annotations::JOB_OWNER_NAME], "db");
}

#[test]
fn a_missing_priority_class_is_named_in_the_error() {
    let sts = statefulset(
        1,
        json!({"metadata": {"labels": {"kueue.x-k8s.io/priority-class": "high"}}}),
    );
    let (priorities, gates) = context_parts();
    let error = workload_for_statefulset(&sts, &priorities, &gates).expect_err("no class");
    assert_eq!(
        error.to_string(),
        "StatefulSet ns/db: WorkloadPriorityClass \"high\" does not exist"
    );
}

#[test]
fn a_new_pod_is_labelled_into_the_group_first() {
    let sts = statefulset(3, json!({}));
    let StatefulSetStep::PatchPods(pods) = step(&sts, None, &[created_pod("db-0")]) else {
        panic!("the pod is labelled first");
    };
    let [labelled] = pods.as_slice() else {
        panic!("one pod: {pods:?}");
    };
    let [name, _] = statefulset_workload_names(&sts);
    let a = labelled.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(a[annotations::POD_GROUP_NAME], name);
    assert_eq!(a[annotations::PREBUILT_WORKLOAD_NAME], name);
    assert_eq!(a[annotations::POD_GROUP_TOTAL_COUNT], "3");
    assert_eq!(a[annotations::POD_GROUP_FAST_ADMISSION], "true");
    assert_eq!(a[annotations::POD_GROUP_SERVING], "true");
    assert_eq!(a[annotations::POD_GROUP_POD_INDEX_LABEL], POD_INDEX_LABEL);
    assert_eq!(a[annotations::ROLE_HASH], "main");
    let l = labelled.metadata.labels.clone().unwrap_or_default();
    assert_eq!(l[labels::MANAGED], "true");
    assert_eq!(l[labels::QUEUE_NAME], "lq");
    assert!(
        gate_names(labelled.spec.as_ref().expect("a spec"))
            .contains(&"kueue.x-k8s.io/admission".to_owned()),
        "labelling keeps the pod gated"
    );
}

#[test]
fn a_statefulset_without_a_queue_leaves_its_pods_and_makes_no_workload() {
    let sts = statefulset(
        2,
        json!({"metadata": {"labels": {"kueue.x-k8s.io/queue-name": null}}}),
    );
    assert_eq!(
        step(&sts, None, &[created_pod("db-0")]),
        StatefulSetStep::Idle
    );
}

#[test]
fn labelled_pods_lead_to_the_workload_being_created() {
    let sts = statefulset(2, json!({}));
    let mut pod = created_pod("db-0");
    let [name, _] = statefulset_workload_names(&sts);
    let (priorities, gates) = context_parts();
    let context = StatefulSetContext {
        priorities: &priorities,
        gates: &gates,
        manage_without_queue_name: false,
    };
    assert!(group_pod(&sts, &name, &mut pod, context));
    assert_eq!(
        step(&sts, None, &[pod]),
        StatefulSetStep::CreateWorkload(Box::new(built(&sts)))
    );
    assert_eq!(
        step(&statefulset(0, json!({})), None, &[]),
        StatefulSetStep::Idle
    );
}

fn admitted(workload: &Workload) -> Workload {
    let mut value = serde_json::to_value(workload).expect("JSON");
    merge(
        &mut value,
        json!({"status": {
            "admission": {"clusterQueue": "cq", "podSetAssignments": [{"name": "main"}]},
            "conditions": [
                condition("QuotaReserved", true, "QuotaReserved", "2026-01-01T00:00:00Z"),
                condition("Admitted", true, "Admitted", "2026-01-01T00:00:00Z"),
            ],
        }}),
    );
    serde_json::from_value(value).expect("a Workload")
}

#[test]
fn scaling_to_zero_puts_an_admitted_workload_on_hold_and_scaling_up_takes_it_off() {
    let workload = admitted(&built(&statefulset(2, json!({}))));
    let zero = statefulset(0, json!({}));
    assert_eq!(
        step(&zero, Some(&workload), &[]),
        StatefulSetStep::Hold(Box::new(workload.clone()))
    );
    let mut held = serde_json::to_value(built(&statefulset(2, json!({})))).expect("JSON");
    merge(
        &mut held,
        json!({"status": {"conditions": [
            condition("QuotaReserved", false, "OnHold", "2026-01-01T00:00:00Z")]}}),
    );
    let held: Workload = serde_json::from_value(held).expect("a Workload");
    assert!(on_hold(&held));
    assert_eq!(step(&zero, Some(&held), &[]), StatefulSetStep::Idle);
    assert_eq!(
        step(&statefulset(2, json!({})), Some(&held), &[]),
        StatefulSetStep::ReleaseHold(Box::new(held.clone()))
    );
}

#[test]
fn a_workload_follows_the_queue_and_is_owned_again() {
    let workload = built(&statefulset(2, json!({})));
    let moved = statefulset(
        2,
        json!({"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "other"}}}),
    );
    let StatefulSetStep::UpdateWorkload(updated) = step(&moved, Some(&workload), &[]) else {
        panic!("the queue is followed");
    };
    assert_eq!(updated.spec.queue_name.as_deref(), Some("other"));
    let mut orphan = workload.clone();
    orphan.metadata.owner_references = None;
    let StatefulSetStep::UpdateWorkload(owned) =
        step(&statefulset(2, json!({})), Some(&orphan), &[])
    else {
        panic!("the owner reference comes back");
    };
    assert_eq!(
        owned.metadata.owner_references,
        workload.metadata.owner_references
    );
    assert_eq!(
        step(&statefulset(0, json!({})), Some(&orphan), &[]),
        StatefulSetStep::Idle
    );
}

#[test]
fn pods_of_the_current_revision_are_released_during_a_rollout() {
    let sts = statefulset(
        2,
        json!({"status": {"replicas": 2, "currentRevision": "db-1", "updateRevision": "db-2"}}),
    );
    let workload = built(&sts);
    let mut pod = created_pod("db-0");
    let [name, _] = statefulset_workload_names(&sts);
    let (priorities, gates) = context_parts();
    let context = StatefulSetContext {
        priorities: &priorities,
        gates: &gates,
        manage_without_queue_name: false,
    };
    group_pod(&sts, &name, &mut pod, context);
    let StatefulSetStep::PatchPods(pods) = step(&sts, Some(&workload), &[pod]) else {
        panic!("the pod of the current revision is released");
    };
    assert_eq!(
        pods[0]
            .spec
            .as_ref()
            .and_then(|s| s.scheduling_gates.clone()),
        None
    );
}

/// As Kueue, a topology annotation is read only under topology-aware scheduling: with the gate
/// off, one that would be refused does not keep the StatefulSet from its Workload.
#[test]
fn topology_annotations_are_read_only_under_topology_aware_scheduling() {
    let sts = statefulset(
        2,
        json!({"spec": {"template": {"metadata": {"annotations": {
            "kueue.x-k8s.io/podset-required-topology": "not a label key!"}}}}}),
    );
    let priorities = PriorityLookup::new();
    let tas = FeatureGates::default();
    assert!(workload_for_statefulset(&sts, &priorities, &tas).is_err());
    let off = FeatureGates::default().with(Feature::TopologyAwareScheduling, false);
    let workload = workload_for_statefulset(&sts, &priorities, &off).expect("a Workload");
    assert_eq!(workload.spec.pod_sets[0].topology_request, None);
}
