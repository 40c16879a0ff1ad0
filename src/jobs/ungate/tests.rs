use k8s_openapi::api::core::v1::Pod;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::api::keys::labels::JOB_COMPLETION_INDEX;
use crate::engine::features::FeatureGates;
use crate::engine::topology::encode;
use crate::engine::topology::model::DomainAssignment;
use crate::jobs::fixtures::{template, workload};

const RACK: &str = "cloud.provider.com/topology-rack";
const BLOCK: &str = "cloud.provider.com/topology-block";

/// An admitted TAS Workload whose pod set `main` is placed over `domains` (values per level of
/// `levels`, count) and asks for ranks from the Job index label.
fn tas_workload(levels: &[&str], domains: &[(&[&str], u32)], extra: Value) -> Workload {
    let list = DomainList {
        levels: levels.iter().map(|l| (*l).to_owned()).collect(),
        domains: domains
            .iter()
            .map(|(values, count)| DomainAssignment {
                values: values.iter().map(|v| (*v).to_owned()).collect(),
                count: *count,
            })
            .collect(),
    };
    let count = i32::try_from(list.pod_count()).unwrap();
    let assignment = encode(&list, &FeatureGates::default());
    let mut wl = workload(json!({
        "spec": {"podSets": [{
            "name": "main",
            "count": count,
            "template": template(),
            "topologyRequest": {"required": BLOCK, "podIndexLabel": JOB_COMPLETION_INDEX}
        }]},
        "status": {"admission": {"podSetAssignments": [{
            "name": "main",
            "flavors": {"cpu": "tas"},
            "resourceUsage": {"cpu": count.to_string()},
            "count": count,
            "topologyAssignment": assignment
        }]}}
    }));
    let mut value = serde_json::to_value(&wl).unwrap();
    crate::jobs::fixtures::merge(&mut value, extra);
    wl = serde_json::from_value(value).unwrap();
    wl
}

fn gated(name: &str, index: Option<u32>) -> PodView {
    PodView {
        name: name.to_owned(),
        pod_set: Some("main".to_owned()),
        labels: index
            .map(|i| BTreeMap::from([(JOB_COMPLETION_INDEX.to_owned(), i.to_string())]))
            .unwrap_or_default(),
        topology_gated: true,
        ..PodView::default()
    }
}

fn placed(mut pod: PodView, selector: &[(&str, &str)]) -> PodView {
    pod.topology_gated = false;
    pod.node_selector = selector
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    pod
}

/// Pod name → the value of `level` it is sent to.
fn targets(ungates: &[Ungate], level: &str) -> BTreeMap<String, String> {
    ungates
        .iter()
        .map(|u| (u.pod.clone(), u.node_selector[level].clone()))
        .collect()
}

fn apply(pods: &mut [PodView], ungates: &[Ungate]) {
    for u in ungates {
        let pod = pods.iter_mut().find(|p| p.name == u.pod).unwrap();
        assert!(pod.topology_gated, "{} ungated twice", u.pod);
        pod.topology_gated = false;
        pod.node_selector.extend(u.node_selector.clone());
    }
}

fn names(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn consecutive_indexes_share_a_domain_in_assignment_order() {
    let wl = tas_workload(
        &[BLOCK, RACK],
        &[(&["b1", "r2"], 2), (&["b1", "r1"], 2)],
        json!({}),
    );
    // Listed out of index order, with names that do not follow the indexes.
    let pods = [
        gated("d", Some(0)),
        gated("c", Some(3)),
        gated("b", Some(1)),
        gated("a", Some(2)),
    ];
    let ungates = pods_to_ungate(&wl, &pods).unwrap();
    assert_eq!(
        targets(&ungates, RACK),
        names(&[("d", "r2"), ("b", "r2"), ("a", "r1"), ("c", "r1")])
    );
    // Every level of the assignment is written.
    assert!(ungates.iter().all(|u| u.node_selector[BLOCK] == "b1"));
}

#[test]
fn hostname_assignments_write_only_the_hostname() {
    let wl = tas_workload(&[HOSTNAME_LABEL], &[(&["node-1"], 1)], json!({}));
    let ungates = pods_to_ungate(&wl, &[gated("p", Some(0))]).unwrap();
    assert_eq!(ungates.len(), 1);
    assert_eq!(
        ungates[0].node_selector,
        names(&[(HOSTNAME_LABEL, "node-1")])
    );
    assert_eq!(ungates[0].pod_set, "main");
}

#[test]
fn a_recreated_pod_takes_the_slot_of_the_one_it_replaces() {
    let wl = tas_workload(&[RACK], &[(&["r1"], 2), (&["r2"], 2)], json!({}));
    let mut failed = placed(gated("old-2", Some(2)), &[(RACK, "r2")]);
    failed.terminated = true;
    let pods = [
        placed(gated("p0", Some(0)), &[(RACK, "r1")]),
        placed(gated("p1", Some(1)), &[(RACK, "r1")]),
        failed,
        placed(gated("p3", Some(3)), &[(RACK, "r2")]),
        gated("new-2", Some(2)),
    ];
    let ungates = pods_to_ungate(&wl, &pods).unwrap();
    assert_eq!(targets(&ungates, RACK), names(&[("new-2", "r2")]));
}

#[test]
fn without_indexes_domains_fill_in_order_counting_pods_already_there() {
    let wl = tas_workload(&[RACK], &[(&["r1"], 2), (&["r2"], 2)], json!({}));
    let pods = [
        placed(gated("x", None), &[(RACK, "r1")]),
        gated("c", None),
        gated("a", None),
        gated("b", None),
        gated("d", None),
    ];
    let ungates = pods_to_ungate(&wl, &pods).unwrap();
    // r1 has one free slot, r2 two; by name; "d" finds no room.
    assert_eq!(
        targets(&ungates, RACK),
        names(&[("a", "r1"), ("b", "r2"), ("c", "r2")])
    );
}

#[test]
fn ungated_pods_off_their_rank_domain_switch_to_greedy() {
    let wl = tas_workload(&[RACK], &[(&["r1"], 1), (&["r2"], 1)], json!({}));
    // Index 0 belongs on r1, but the pod was ungated onto r2 (e.g. greedily, earlier).
    let pods = [
        placed(gated("p0", Some(0)), &[(RACK, "r2")]),
        gated("p1", Some(1)),
    ];
    let ungates = pods_to_ungate(&wl, &pods).unwrap();
    assert_eq!(targets(&ungates, RACK), names(&[("p1", "r1")]));
}

#[test]
fn duplicate_or_out_of_range_indexes_switch_to_greedy_which_still_orders_by_index() {
    let wl = tas_workload(&[RACK], &[(&["r1"], 2), (&["r2"], 2)], json!({}));
    let pods = [
        gated("a", Some(3)),
        gated("b", Some(1)),
        gated("c", Some(1)),
        gated("d", None),
    ];
    let ungates = pods_to_ungate(&wl, &pods).unwrap();
    // b (1) and c (1) sort before a (3); d has no index and comes last.
    assert_eq!(
        targets(&ungates, RACK),
        names(&[("b", "r1"), ("c", "r1"), ("a", "r2"), ("d", "r2")])
    );
    let out_of_range = [gated("a", Some(4)), gated("b", Some(0))];
    let ungates = pods_to_ungate(&wl, &out_of_range).unwrap();
    assert_eq!(targets(&ungates, RACK), names(&[("b", "r1"), ("a", "r1")]));
}

#[test]
fn an_index_offset_shifts_ranks() {
    let wl = tas_workload(&[RACK], &[(&["r1"], 1), (&["r2"], 1)], json!({}));
    let offset = |mut pod: PodView| {
        pod.index_offset = Some("1".to_owned());
        pod
    };
    // MPIJob-style workers indexed from 1.
    let pods = [offset(gated("w1", Some(1))), offset(gated("w2", Some(2)))];
    let ungates = pods_to_ungate(&wl, &pods).unwrap();
    assert_eq!(
        targets(&ungates, RACK),
        names(&[("w1", "r1"), ("w2", "r2")])
    );

    for value in ["one", &i64::MAX.to_string()] {
        let bad = [PodView {
            index_offset: Some(value.to_owned()),
            ..gated("w1", Some(1))
        }];
        assert!(
            matches!(pods_to_ungate(&wl, &bad), Err(UngateError::Offset { .. })),
            "{value}: not an integer, or ranks past i64"
        );
    }
}

#[test]
fn sub_group_indexes_rank_pods_across_jobs() {
    // A JobSet-like pod set of 2 jobs of 2 pods: rank = pod index + job index × 2.
    let wl = tas_workload(
        &[RACK],
        &[(&["r1"], 1), (&["r2"], 1), (&["r3"], 1), (&["r4"], 1)],
        json!({"spec": {"podSets": [{
            "name": "main", "count": 4, "template": template(),
            "topologyRequest": {
                "required": BLOCK,
                "podIndexLabel": JOB_COMPLETION_INDEX,
                "subGroupIndexLabel": "jobset.sigs.k8s.io/job-index",
                "subGroupCount": 2
            }
        }]}}),
    );
    let pod = |name: &str, job: u32, index: u32| {
        let mut pod = gated(name, Some(index));
        pod.labels
            .insert("jobset.sigs.k8s.io/job-index".to_owned(), job.to_string());
        pod
    };
    let pods = [
        pod("j1-p1", 1, 1),
        pod("j0-p0", 0, 0),
        pod("j1-p0", 1, 0),
        pod("j0-p1", 0, 1),
    ];
    let ungates = pods_to_ungate(&wl, &pods).unwrap();
    assert_eq!(
        targets(&ungates, RACK),
        names(&[
            ("j0-p0", "r1"),
            ("j0-p1", "r2"),
            ("j1-p0", "r3"),
            ("j1-p1", "r4")
        ])
    );
}

#[test]
fn a_pod_set_group_leader_takes_the_first_ranks() {
    let leader_list = DomainList {
        levels: vec![RACK.to_owned()],
        domains: vec![DomainAssignment {
            values: vec!["r1".to_owned()],
            count: 1,
        }],
    };
    let worker_list = DomainList {
        levels: vec![RACK.to_owned()],
        domains: vec![
            DomainAssignment {
                values: vec!["r1".to_owned()],
                count: 1,
            },
            DomainAssignment {
                values: vec!["r2".to_owned()],
                count: 1,
            },
        ],
    };
    let gates = FeatureGates::default();
    let request = |group: &str| json!({"required": BLOCK, "podIndexLabel": "leaderworkerset.sigs.k8s.io/worker-index", "podSetGroupName": group});
    let wl = workload(json!({
        "spec": {"podSets": [
            {"name": "leader", "count": 1, "template": template(), "topologyRequest": request("g")},
            {"name": "workers", "count": 2, "template": template(), "topologyRequest": request("g")}
        ]},
        "status": {"admission": {"podSetAssignments": [
            {"name": "leader", "flavors": {"cpu": "tas"}, "resourceUsage": {"cpu": "1"}, "count": 1,
             "topologyAssignment": encode(&leader_list, &gates)},
            {"name": "workers", "flavors": {"cpu": "tas"}, "resourceUsage": {"cpu": "2"}, "count": 2,
             "topologyAssignment": encode(&worker_list, &gates)}
        ]}}
    }));
    let pod = |name: &str, pod_set: &str, index: u32| PodView {
        name: name.to_owned(),
        pod_set: Some(pod_set.to_owned()),
        labels: BTreeMap::from([(
            "leaderworkerset.sigs.k8s.io/worker-index".to_owned(),
            index.to_string(),
        )]),
        topology_gated: true,
        ..PodView::default()
    };
    // Workers carry indexes 1 and 2 (the leader is 0): worker 2 is rank 1 of its pod set.
    let pods = [
        pod("leader", "leader", 0),
        pod("w2", "workers", 2),
        pod("w1", "workers", 1),
    ];
    let ungates = pods_to_ungate(&wl, &pods).unwrap();
    assert_eq!(
        targets(&ungates, RACK),
        names(&[("leader", "r1"), ("w1", "r1"), ("w2", "r2")])
    );
}

#[test]
fn pods_on_unhealthy_nodes_wait_for_their_replacement() {
    let wl = tas_workload(
        &[HOSTNAME_LABEL],
        &[(&["node-1"], 1), (&["node-2"], 1)],
        json!({"status": {"unhealthyNodes": [{"name": "node-2"}]}}),
    );
    let ungates = pods_to_ungate(&wl, &[gated("a", Some(0)), gated("b", Some(1))]).unwrap();
    assert_eq!(targets(&ungates, HOSTNAME_LABEL), names(&[("a", "node-1")]));
}

#[test]
fn nothing_is_ungated_before_admission_or_for_other_pod_sets() {
    let wl = tas_workload(&[RACK], &[(&["r1"], 1)], json!({}));
    let not_admitted = tas_workload(
        &[RACK],
        &[(&["r1"], 1)],
        json!({"status": {"conditions": [crate::jobs::fixtures::condition(
            "Admitted", false, "NoReservation", "2026-01-01T00:00:00Z"
        )]}}),
    );
    assert!(
        pods_to_ungate(&not_admitted, &[gated("a", Some(0))])
            .unwrap()
            .is_empty()
    );
    let other = PodView {
        pod_set: Some("other".to_owned()),
        ..gated("a", Some(0))
    };
    assert!(pods_to_ungate(&wl, &[other]).unwrap().is_empty());
    let plain = workload(json!({}));
    assert!(
        pods_to_ungate(&plain, &[gated("a", Some(0))])
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_pod_view_reads_gate_selector_phase_and_labels() {
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {
            "name": "p",
            "labels": {"kueue.x-k8s.io/podset": "main", JOB_COMPLETION_INDEX: "3"},
            "annotations": {"kueue.x-k8s.io/pod-index-offset": "1"}
        },
        "spec": {
            "containers": [{"name": "c"}],
            "schedulingGates": [{"name": "kueue.x-k8s.io/topology"}],
            "nodeSelector": {"a": "b"}
        },
        "status": {"phase": "Failed"}
    }))
    .unwrap();
    let view = PodView::of(&pod);
    assert_eq!(view.name, "p");
    assert_eq!(view.pod_set.as_deref(), Some("main"));
    assert_eq!(view.index_offset.as_deref(), Some("1"));
    assert!(view.topology_gated);
    assert!(view.terminated);
    assert_eq!(view.node_selector, names(&[("a", "b")]));
    assert_eq!(view.labels[JOB_COMPLETION_INDEX], "3");
}

/// A pod of a property scenario: its index, the domain it was already placed in (one past the
/// last: outside the assignment), and whether it terminated.
type ScenarioPod = (Option<u32>, Option<usize>, bool);

/// A cluster state for the properties: domains with counts, pods with an optional index, some
/// already placed (possibly anywhere, even where no slot is free), some terminated.
fn scenario() -> impl Strategy<Value = (Vec<u32>, Vec<ScenarioPod>)> {
    (prop::collection::vec(1u32..4, 1..5)).prop_flat_map(|counts| {
        let total: u32 = counts.iter().sum();
        let domains = counts.len();
        let pod = (
            prop::option::weighted(0.8, 0..total + 1),
            prop::option::weighted(0.3, 0..domains + 1),
            prop::bool::weighted(0.15),
        );
        (
            Just(counts),
            prop::collection::vec(pod, 0..(total as usize + 4)),
        )
    })
}

fn build(counts: &[u32], pods: &[ScenarioPod]) -> (Workload, Vec<PodView>) {
    let values: Vec<String> = (0..counts.len()).map(|i| format!("r{i}")).collect();
    let domains: Vec<(Vec<&str>, u32)> = values
        .iter()
        .zip(counts)
        .map(|(v, c)| (vec![v.as_str()], *c))
        .collect();
    let slices: Vec<(&[&str], u32)> = domains.iter().map(|(v, c)| (v.as_slice(), *c)).collect();
    let wl = tas_workload(&[RACK], &slices, json!({}));
    let views = pods
        .iter()
        .enumerate()
        .map(|(i, (index, at, terminated))| {
            let mut pod = gated(&format!("p{i:02}"), *index);
            if let Some(at) = at {
                // One past the last domain: a pod placed outside the assignment.
                pod = placed(pod, &[(RACK, &format!("r{at}"))]);
            }
            pod.terminated = *terminated;
            pod
        })
        .collect();
    (wl, views)
}

/// Live pods per rack value.
fn per_domain(pods: &[PodView]) -> BTreeMap<String, u32> {
    let mut counts = BTreeMap::new();
    for pod in pods.iter().filter(|p| !p.terminated && !p.topology_gated) {
        if let Some(value) = pod.node_selector.get(RACK) {
            *counts.entry(value.clone()).or_default() += 1;
        }
    }
    counts
}

proptest! {
    /// Ungating never puts more pods in a domain than its count, counting live pods already
    /// there, unless that many were there before; a second pass ungates nothing; terminated pods
    /// are never ungated.
    #[test]
    fn domains_never_overflow_and_a_second_pass_does_nothing((counts, pods) in scenario()) {
        let (wl, mut views) = build(&counts, &pods);
        let before = per_domain(&views);
        let ungates = pods_to_ungate(&wl, &views).unwrap();
        for u in &ungates {
            let pod = views.iter().find(|p| p.name == u.pod).unwrap();
            prop_assert!(!pod.terminated);
        }
        apply(&mut views, &ungates);
        let after = per_domain(&views);
        for (i, count) in counts.iter().enumerate() {
            let value = format!("r{i}");
            let was = before.get(&value).copied().unwrap_or(0);
            let now = after.get(&value).copied().unwrap_or(0);
            prop_assert!(now <= (*count).max(was), "r{} holds {} pods, count {}", i, now, count);
            if now > was {
                prop_assert!(now <= *count);
            }
        }
        prop_assert_eq!(pods_to_ungate(&wl, &views).unwrap(), Vec::new());
    }

    /// Every slot that is free gets a waiting pod when one is waiting.
    #[test]
    fn free_slots_are_filled_while_pods_wait((counts, pods) in scenario()) {
        let (wl, mut views) = build(&counts, &pods);
        let ungates = pods_to_ungate(&wl, &views).unwrap();
        apply(&mut views, &ungates);
        let waiting = views.iter().filter(|p| !p.terminated && p.topology_gated).count();
        if waiting > 0 {
            let after = per_domain(&views);
            for (i, count) in counts.iter().enumerate() {
                let now = after.get(&format!("r{i}")).copied().unwrap_or(0);
                prop_assert!(now >= *count, "r{} has a free slot while {} pods wait", i, waiting);
            }
        }
    }
}
