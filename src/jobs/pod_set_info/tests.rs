use k8s_openapi::api::core::v1::{PodSchedulingGate, PodSpec, Toleration};
use serde_json::json;

use super::*;
use crate::jobs::fixtures::{CLUSTER_QUEUE, WORKLOAD_NAME, workload};

fn toleration(key: &str) -> Toleration {
    Toleration {
        key: Some(key.to_owned()),
        operator: Some("Exists".to_owned()),
        effect: Some("NoSchedule".to_owned()),
        ..Toleration::default()
    }
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn flavors() -> BTreeMap<String, FlavorInfo> {
    BTreeMap::from([
        (
            "on-demand".to_owned(),
            FlavorInfo {
                node_labels: map(&[("instance-type", "on-demand")]),
                tolerations: vec![toleration("spot")],
            },
        ),
        (
            "gpu".to_owned(),
            FlavorInfo {
                node_labels: map(&[("accelerator", "a100")]),
                tolerations: vec![toleration("gpu")],
            },
        ),
    ])
}

fn only(infos: Vec<PodSetInfo>) -> PodSetInfo {
    assert_eq!(infos.len(), 1);
    infos.into_iter().next().unwrap()
}

#[test]
fn an_admission_gives_flavor_selectors_tolerations_and_kueue_labels() {
    let info =
        only(pod_set_infos(&workload(json!({})), &flavors(), &FeatureGates::default()).unwrap());
    assert_eq!(info.name, "main");
    assert_eq!(info.count, 4);
    assert_eq!(info.node_selector, map(&[("instance-type", "on-demand")]));
    assert_eq!(info.tolerations, vec![toleration("spot")]);
    assert_eq!(
        info.labels,
        map(&[
            (labels::POD_SET, "main"),
            (labels::LOCAL_QUEUE_NAME, "user-queue"),
            (labels::CLUSTER_QUEUE_NAME, CLUSTER_QUEUE),
        ])
    );
    // The workload annotation is written whenever TAS is on, topology or not.
    assert_eq!(
        info.annotations,
        map(&[(annotations::WORKLOAD, WORKLOAD_NAME)])
    );
    assert!(info.scheduling_gates.is_empty());
}

#[test]
fn each_flavor_counts_once_and_every_assigned_flavor_counts() {
    let wl = workload(json!({"status": {"admission": {"podSetAssignments": [{
        "name": "main",
        "flavors": {"cpu": "on-demand", "memory": "on-demand", "nvidia.com/gpu": "gpu"},
        "resourceUsage": {"cpu": "4"},
        "count": 4
    }]}}}));
    let info = only(pod_set_infos(&wl, &flavors(), &FeatureGates::default()).unwrap());
    assert_eq!(
        info.node_selector,
        map(&[("instance-type", "on-demand"), ("accelerator", "a100")])
    );
    assert_eq!(info.tolerations.len(), 2);
    assert!(info.tolerations.contains(&toleration("spot")));
    assert!(info.tolerations.contains(&toleration("gpu")));
}

#[test]
fn a_partial_admission_gives_the_admitted_count_and_a_missing_count_the_pod_sets() {
    let partial = workload(json!({"status": {"admission": {"podSetAssignments": [{
        "name": "main", "flavors": {"cpu": "on-demand"}, "resourceUsage": {"cpu": "2"}, "count": 2
    }]}}}));
    assert_eq!(
        only(pod_set_infos(&partial, &flavors(), &FeatureGates::default()).unwrap()).count,
        2
    );
    let unset = workload(json!({"status": {"admission": {"podSetAssignments": [{
        "name": "main", "flavors": {"cpu": "on-demand"}, "resourceUsage": {"cpu": "4"}
    }]}}}));
    assert_eq!(
        only(pod_set_infos(&unset, &flavors(), &FeatureGates::default()).unwrap()).count,
        4
    );
}

fn tas_workload(request: serde_json::Value) -> Workload {
    workload(json!({
        "spec": {"podSets": [{
            "name": "main",
            "count": 4,
            "template": crate::jobs::fixtures::template(),
            "topologyRequest": request
        }]},
        "status": {"admission": {"podSetAssignments": [{
            "name": "main",
            "flavors": {"cpu": "on-demand"},
            "resourceUsage": {"cpu": "4"},
            "count": 4,
            "topologyAssignment": {
                "levels": ["kubernetes.io/hostname"],
                "slices": [{
                    "domainCount": 1,
                    "valuesPerLevel": [{"universal": "node-1"}],
                    "podCounts": {"universal": 4}
                }]
            }
        }]}}
    }))
}

#[test]
fn a_topology_assignment_adds_the_topology_gate() {
    let wl = tas_workload(json!({"required": "rack", "podIndexLabel": "idx"}));
    let info = only(pod_set_infos(&wl, &flavors(), &FeatureGates::default()).unwrap());
    assert_eq!(
        info.scheduling_gates,
        vec![scheduling_gates::TOPOLOGY.to_owned()]
    );
    assert!(
        !info
            .annotations
            .contains_key(annotations::PODSET_UNCONSTRAINED_TOPOLOGY)
    );
}

#[test]
fn implied_tas_marks_the_pods_unconstrained() {
    let wl = tas_workload(json!({"podIndexLabel": "idx"}));
    let info = only(pod_set_infos(&wl, &flavors(), &FeatureGates::default()).unwrap());
    assert_eq!(
        info.annotations
            .get(annotations::PODSET_UNCONSTRAINED_TOPOLOGY)
            .map(String::as_str),
        Some("true")
    );
    assert_eq!(
        info.scheduling_gates,
        vec![scheduling_gates::TOPOLOGY.to_owned()]
    );
}

#[test]
fn without_tas_there_is_no_gate_nor_workload_annotation() {
    let gates = FeatureGates::default().with(Feature::TopologyAwareScheduling, false);
    let wl = tas_workload(json!({"required": "rack"}));
    let info = only(pod_set_infos(&wl, &flavors(), &gates).unwrap());
    assert!(info.scheduling_gates.is_empty());
    assert!(info.annotations.is_empty());
}

#[test]
fn queue_labels_follow_their_gate_and_an_unfit_cluster_queue_name_is_left_out() {
    let gates = FeatureGates::default().with(Feature::AssignQueueLabelsForPods, false);
    let info = only(pod_set_infos(&workload(json!({})), &flavors(), &gates).unwrap());
    assert_eq!(info.labels, map(&[(labels::POD_SET, "main")]));

    let dotted = workload(json!({"status": {"admission": {"clusterQueue": "team.a"}}}));
    let info = only(pod_set_infos(&dotted, &flavors(), &FeatureGates::default()).unwrap());
    assert!(info.labels.contains_key(labels::LOCAL_QUEUE_NAME));
    assert!(!info.labels.contains_key(labels::CLUSTER_QUEUE_NAME));
}

#[test]
fn admission_check_updates_are_merged_and_their_conflicts_are_permanent() {
    let check = |labels: serde_json::Value| {
        workload(json!({"status": {"admissionChecks": [{
            "name": "prov",
            "state": "Ready",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
            "message": "",
            "podSetUpdates": [{
                "name": "main",
                "labels": labels,
                "nodeSelector": {"zone": "a"},
                "tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}]
            }]
        }]}}))
    };
    let info = only(
        pod_set_infos(
            &check(json!({"team": "a"})),
            &flavors(),
            &FeatureGates::default(),
        )
        .unwrap(),
    );
    assert_eq!(info.labels.get("team").map(String::as_str), Some("a"));
    assert_eq!(
        info.node_selector.get("zone").map(String::as_str),
        Some("a")
    );
    assert_eq!(info.tolerations, vec![toleration("spot")], "no duplicate");

    let error = pod_set_infos(
        &check(json!({(labels::POD_SET): "other"})),
        &flavors(),
        &FeatureGates::default(),
    )
    .unwrap_err();
    assert!(error.is_permanent());
    assert_eq!(
        error.to_string(),
        "in admission check \"prov\": invalid admission check PodSetUpdate: conflict for labels: \
         conflict for key=kueue.x-k8s.io/podset, value1=main, value2=other"
    );
}

#[test]
fn a_missing_flavor_is_retried_and_a_missing_admission_too() {
    let error = pod_set_infos(
        &workload(json!({})),
        &BTreeMap::new(),
        &FeatureGates::default(),
    )
    .unwrap_err();
    assert_eq!(
        error,
        PodSetInfoError::FlavorNotFound {
            pod_set: "main".to_owned(),
            flavor: "on-demand".to_owned()
        }
    );
    assert!(!error.is_permanent());
    let pending = workload(json!({"status": {"admission": null}}));
    let error = pod_set_infos(&pending, &flavors(), &FeatureGates::default()).unwrap_err();
    assert!(matches!(error, PodSetInfoError::NotAdmitted { .. }));
    assert!(!error.is_permanent());
}

#[test]
fn an_assignment_for_an_unknown_pod_set_is_permanent() {
    let wl = workload(json!({"status": {"admission": {"podSetAssignments": [{
        "name": "workers", "flavors": {"cpu": "on-demand"}, "resourceUsage": {"cpu": "4"}, "count": 4
    }]}}}));
    let error = pod_set_infos(&wl, &flavors(), &FeatureGates::default()).unwrap_err();
    assert!(matches!(error, PodSetInfoError::UnknownPodSet { .. }));
    assert!(error.is_permanent());
}

fn info() -> PodSetInfo {
    PodSetInfo {
        name: "main".to_owned(),
        count: 1,
        annotations: map(&[(annotations::WORKLOAD, "wl")]),
        labels: map(&[(labels::POD_SET, "main")]),
        node_selector: map(&[("instance-type", "on-demand")]),
        tolerations: vec![toleration("spot")],
        scheduling_gates: vec![scheduling_gates::TOPOLOGY.to_owned()],
    }
}

#[test]
fn merging_adds_keys_and_keeps_tolerations_and_gates_unique() {
    let mut meta = ObjectMeta {
        labels: Some(map(&[("app", "x")])),
        ..ObjectMeta::default()
    };
    let mut spec = PodSpec {
        node_selector: Some(map(&[("instance-type", "on-demand")])),
        tolerations: Some(vec![toleration("spot")]),
        scheduling_gates: Some(vec![PodSchedulingGate {
            name: scheduling_gates::TOPOLOGY.to_owned(),
        }]),
        ..PodSpec::default()
    };
    info().merge_into(&mut meta, &mut spec).unwrap();
    assert_eq!(
        meta.labels,
        Some(map(&[("app", "x"), (labels::POD_SET, "main")]))
    );
    assert_eq!(
        meta.annotations,
        Some(map(&[(annotations::WORKLOAD, "wl")]))
    );
    assert_eq!(spec.tolerations, Some(vec![toleration("spot")]));
    assert_eq!(spec.scheduling_gates.as_ref().map(Vec::len), Some(1));
}

#[test]
fn a_conflicting_node_selector_changes_nothing_and_is_permanent() {
    let mut meta = ObjectMeta::default();
    let mut spec = PodSpec {
        node_selector: Some(map(&[("instance-type", "spot")])),
        ..PodSpec::default()
    };
    let before = (meta.clone(), spec.clone());
    let error = info().merge_into(&mut meta, &mut spec).unwrap_err();
    assert!(error.is_permanent());
    assert_eq!(
        error.to_string(),
        "invalid admission check PodSetUpdate: conflict for nodeSelector: conflict for \
         key=instance-type, value1=spot, value2=on-demand"
    );
    assert_eq!((meta, spec), before);
}

#[test]
fn restoring_sets_the_saved_values_back_and_reports_a_change_only_when_there_is_one() {
    let mut meta = ObjectMeta::default();
    let mut spec = PodSpec::default();
    info().merge_into(&mut meta, &mut spec).unwrap();
    let original = PodSetInfo {
        labels: map(&[("app", "x")]),
        ..PodSetInfo::default()
    };
    assert!(original.restore_into(&mut meta, &mut spec));
    assert_eq!(meta.labels, Some(map(&[("app", "x")])));
    assert_eq!(meta.annotations, None);
    assert_eq!(spec.node_selector, None);
    assert_eq!(spec.tolerations, None);
    assert_eq!(spec.scheduling_gates, None);
    assert!(!original.restore_into(&mut meta, &mut spec));
    // An empty list and an absent one are the same.
    spec.tolerations = Some(Vec::new());
    assert!(!original.restore_into(&mut meta, &mut spec));
}

#[test]
fn the_saved_template_is_read_from_the_workload_pod_set() {
    let wl = workload(json!({}));
    let saved = PodSetInfo::from_pod_set(&wl.spec.pod_sets[0]);
    assert_eq!(saved.count, 4);
    assert_eq!(saved.labels, map(&[("app", "sample")]));
    assert!(saved.node_selector.is_empty());
}
