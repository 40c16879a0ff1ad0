//! The admission placer: TAS asks, flavor mismatches, now / never, released victims, several pod
//! sets, groups, reserve / release, and the engine driving it.

use super::super::model::HOSTNAME_LABEL;
use super::super::synthetic::{self, RACK, resources};
use super::*;
use crate::engine::Engine;
use crate::engine::decision::{PendingReason, WorkloadStatus};
use crate::engine::model::{
    ClusterQueue, EngineConfig, FlavorQuotas, LocalQueue, Namespace, PodSetAssignment,
    ResourceFlavor, ResourceGroup, ResourceQuota, Snapshot, Workload,
};
use crate::engine::quantity::Quantity;

/// Racks `rack-1` (host-1, host-2) and `rack-2` (host-3, host-4), 4 CPUs each.
fn cluster() -> TopologySnapshot {
    nodes(&[
        ("host-1", "rack-1"),
        ("host-2", "rack-1"),
        ("host-3", "rack-2"),
        ("host-4", "rack-2"),
    ])
}

/// Rack `rack-1` only (host-1, host-2), 4 CPUs each.
fn one_rack() -> TopologySnapshot {
    nodes(&[("host-1", "rack-1"), ("host-2", "rack-1")])
}

fn nodes(hosts: &[(&str, &str)]) -> TopologySnapshot {
    let mut s = TopologySnapshot::new();
    s.upsert_topology(synthetic::topology()).unwrap();
    s.upsert_flavor(synthetic::flavor()).unwrap();
    for (host, rack) in hosts {
        s.upsert_node(synthetic::node(host, "zone-a", "block-1", rack, 4));
    }
    s
}

fn tas_flavor() -> ResourceFlavor {
    ResourceFlavor {
        name: "tas".into(),
        topology_name: Some("default".into()),
        ..ResourceFlavor::default()
    }
}

fn plain_flavor() -> ResourceFlavor {
    ResourceFlavor {
        name: "plain".into(),
        ..ResourceFlavor::default()
    }
}

fn pod_set(name: &str, count: i32, request: Option<TopologyRequest>) -> PodSet {
    PodSet {
        name: name.into(),
        count,
        requests: resources(&[("cpu", 1)]).into_iter().collect(),
        topology_request: request.map(Box::new),
        ..PodSet::default()
    }
}

fn required_rack() -> Option<TopologyRequest> {
    Some(TopologyRequest {
        required: Some(RACK.into()),
        ..TopologyRequest::default()
    })
}

fn workload(name: &str, pod_sets: Vec<PodSet>) -> Workload {
    Workload {
        namespace: "team".into(),
        name: name.into(),
        queue_name: "lq".into(),
        active: true,
        pod_sets,
        ..Workload::default()
    }
}

fn ask(
    placer: &SnapshotPlacer,
    wl: &Workload,
    index: usize,
    flavor: &ResourceFlavor,
    tas_only: bool,
    released: &[WorkloadKey],
) -> TopologyVerdict {
    placer.place(&TopologyQuery {
        workload: wl,
        pod_set_index: index,
        pod_set: &wl.pod_sets[index],
        count: wl.pod_sets[index].count,
        flavor,
        cluster_queue: "cq",
        tas_only_cluster_queue: tas_only,
        released,
    })
}

/// (hostname, pods) of a verdict that fits.
fn hosts(verdict: &TopologyVerdict) -> Vec<(String, u32)> {
    let TopologyVerdict::Fits(Some(placement)) = verdict else {
        panic!("expected a fit with an assignment, got {verdict:?}");
    };
    let assignment = &placement.assignment;
    let placed: i32 = assignment
        .slices
        .iter()
        .map(|s| match &s.pod_counts.individual {
            Some(counts) => counts.iter().sum(),
            None => s.domain_count * s.pod_counts.universal.unwrap_or(0),
        })
        .sum();
    let list = decode(assignment, placed).unwrap();
    assert_eq!(list.levels, vec![HOSTNAME_LABEL.to_string()]);
    list.domains
        .iter()
        .map(|d| (d.values[0].clone(), d.count))
        .collect()
}

fn admission_of(wl: &Workload, verdicts: &[TopologyVerdict]) -> Admission {
    Admission {
        cluster_queue: "cq".into(),
        pod_set_assignments: wl
            .pod_sets
            .iter()
            .zip(verdicts)
            .map(|(ps, verdict)| PodSetAssignment {
                name: ps.name.clone(),
                flavors: [("cpu".to_string(), "tas".to_string())].into(),
                count: ps.count,
                topology_assignment: match verdict {
                    TopologyVerdict::Fits(p) => p.as_ref().map(|p| p.assignment.clone()),
                    _ => None,
                },
                ..PodSetAssignment::default()
            })
            .collect(),
    }
}

#[test]
fn tas_asks_follow_the_annotation_precedence() {
    let gates = FeatureGates::default();
    assert_eq!(tas_ask(None, &gates), TasAsk::None);
    let rank_only = TopologyRequest {
        pod_index_label: Some("batch.kubernetes.io/job-completion-index".into()),
        ..TopologyRequest::default()
    };
    assert_eq!(tas_ask(Some(&rank_only), &gates), TasAsk::None);
    let both = TopologyRequest {
        required: Some(RACK.into()),
        preferred: Some("block".into()),
        ..TopologyRequest::default()
    };
    assert!(matches!(
        tas_ask(Some(&both), &gates),
        TasAsk::Explicit { mode: PlacementMode::Required(level), .. } if level == RACK
    ));
    let slices_only = TopologyRequest {
        slice_required_topology: Some(RACK.into()),
        slice_size: Some(2),
        ..TopologyRequest::default()
    };
    assert_eq!(
        tas_ask(Some(&slices_only), &gates),
        TasAsk::Explicit {
            mode: PlacementMode::Unconstrained,
            slices: vec![SliceLayer {
                level: RACK.into(),
                size: 2
            }],
            group: None
        }
    );
    let not_specified = TopologyRequest {
        unconstrained: Some(false),
        ..TopologyRequest::default()
    };
    assert_eq!(
        tas_ask(Some(&not_specified), &gates),
        TasAsk::LevelNotSpecified
    );
}

#[test]
fn a_slice_level_without_a_size_is_refused_naming_the_annotation() {
    let gates = FeatureGates::default();
    for size in [None, Some(0), Some(-2)] {
        let request = TopologyRequest {
            preferred: Some(RACK.into()),
            slice_required_topology: Some(HOSTNAME_LABEL.into()),
            slice_size: size,
            ..TopologyRequest::default()
        };
        assert_eq!(tas_ask(Some(&request), &gates), TasAsk::SliceSizeMissing);
    }
    let placer = SnapshotPlacer::new(cluster(), gates);
    let request = TopologyRequest {
        required: Some(RACK.into()),
        slice_required_topology: Some(HOSTNAME_LABEL.into()),
        ..TopologyRequest::default()
    };
    let wl = workload("no-size", vec![pod_set("main", 2, Some(request))]);
    let verdict = ask(&placer, &wl, 0, &tas_flavor(), false, &[]);
    let TopologyVerdict::Never { message } = verdict else {
        panic!("expected a refusal, got {verdict:?}");
    };
    assert!(
        message.contains("kueue.x-k8s.io/podset-slice-required-topology"),
        "{message}"
    );
}

#[test]
fn multi_layer_slices_count_only_with_their_gate() {
    let request = TopologyRequest {
        required: Some(RACK.into()),
        slice_required_topology_constraints: vec![(RACK.into(), 4), (HOSTNAME_LABEL.into(), 2)],
        ..TopologyRequest::default()
    };
    let layers = |gates: &FeatureGates| match tas_ask(Some(&request), gates) {
        TasAsk::Explicit { slices, .. } => slices.len(),
        other => panic!("unexpected ask {other:?}"),
    };
    assert_eq!(layers(&FeatureGates::default()), 2);
    let off: FeatureGates = "TASMultiLayerTopology=false".parse().unwrap();
    assert_eq!(
        layers(&off),
        0,
        "ignored as Kueue's job integration ignores them"
    );
}

#[test]
fn implied_tas_places_a_plain_pod_set_in_a_tas_only_queue() {
    let placer = SnapshotPlacer::new(cluster(), FeatureGates::default());
    let wl = workload("implied", vec![pod_set("main", 3, None)]);
    let verdict = ask(&placer, &wl, 0, &tas_flavor(), true, &[]);
    assert_eq!(hosts(&verdict).iter().map(|h| h.1).sum::<u32>(), 3);
}

#[test]
fn flavor_and_pod_set_must_agree_on_tas() {
    let placer = SnapshotPlacer::new(cluster(), FeatureGates::default());
    let plain = workload("plain", vec![pod_set("main", 1, None)]);
    match ask(&placer, &plain, 0, &tas_flavor(), false, &[]) {
        TopologyVerdict::Never { message } => {
            assert!(
                message.contains("supports only TopologyAwareScheduling"),
                "{message}"
            );
        }
        other => panic!("a non-TAS pod set fitted a TAS flavor: {other:?}"),
    }
    assert_eq!(
        ask(&placer, &plain, 0, &plain_flavor(), false, &[]),
        TopologyVerdict::Fits(None)
    );
    let tas = workload("tas", vec![pod_set("main", 1, required_rack())]);
    match ask(&placer, &tas, 0, &plain_flavor(), false, &[]) {
        TopologyVerdict::Never { message } => {
            assert_eq!(
                message,
                "flavor plain does not support TopologyAwareScheduling"
            );
        }
        other => panic!("a TAS pod set fitted a plain flavor: {other:?}"),
    }
}

#[test]
fn not_now_when_usage_blocks_never_when_even_empty_cannot_fit() {
    let mut placer = SnapshotPlacer::new(one_rack(), FeatureGates::default());
    let holder = workload("holder", vec![pod_set("main", 5, required_rack())]);
    let verdict = ask(&placer, &holder, 0, &tas_flavor(), false, &[]);
    assert_eq!(hosts(&verdict).iter().map(|h| h.1).sum::<u32>(), 5);
    let key = WorkloadKey::new("team", "holder");
    placer.reserve(&key, &admission_of(&holder, &[verdict]));

    let next = workload("next", vec![pod_set("main", 6, required_rack())]);
    match ask(&placer, &next, 0, &tas_flavor(), false, &[]) {
        TopologyVerdict::NotNow { message } => assert_eq!(
            message,
            "topology \"default\" allows to fit only 3 out of 6 pod(s); excluded nodes: insufficient \"cpu\": 1"
        ),
        other => panic!("expected NotNow, got {other:?}"),
    }
    // The victim's usage counts as free while preemption considers it.
    let verdict = ask(
        &placer,
        &next,
        0,
        &tas_flavor(),
        false,
        std::slice::from_ref(&key),
    );
    assert_eq!(hosts(&verdict).iter().map(|h| h.1).sum::<u32>(), 6);
    // ... and is back afterwards.
    assert!(matches!(
        ask(&placer, &next, 0, &tas_flavor(), false, &[]),
        TopologyVerdict::NotNow { .. }
    ));

    let huge = workload("huge", vec![pod_set("main", 9, required_rack())]);
    match ask(&placer, &huge, 0, &tas_flavor(), false, &[]) {
        TopologyVerdict::Never { message } => {
            assert!(
                message.ends_with("it would not fit even on an empty cluster"),
                "{message}"
            );
        }
        other => panic!("expected Never, got {other:?}"),
    }

    placer.release(&key, &admission_of(&holder, &[]));
    assert!(matches!(
        ask(&placer, &next, 0, &tas_flavor(), false, &[]),
        TopologyVerdict::Fits(Some(_))
    ));
}

#[test]
fn later_pod_sets_see_the_earlier_ones() {
    let placer = SnapshotPlacer::new(cluster(), FeatureGates::default());
    let wl = workload(
        "two",
        vec![
            pod_set("first", 6, required_rack()),
            pod_set("second", 4, required_rack()),
        ],
    );
    let first = ask(&placer, &wl, 0, &tas_flavor(), false, &[]);
    let second = ask(&placer, &wl, 1, &tas_flavor(), false, &[]);
    let racks = |h: &[(String, u32)]| {
        h.iter()
            .map(|(host, _)| host == "host-1" || host == "host-2")
            .collect::<std::collections::BTreeSet<_>>()
    };
    // Each pod set takes a rack of its own: the second sees the first's 6 CPUs.
    assert_eq!(racks(&hosts(&first)).len(), 1);
    assert_eq!(racks(&hosts(&second)).len(), 1);
    assert_ne!(racks(&hosts(&first)), racks(&hosts(&second)));

    let too_big = workload(
        "too-big",
        vec![
            pod_set("first", 6, required_rack()),
            pod_set("second", 6, required_rack()),
            pod_set("third", 6, required_rack()),
        ],
    );
    assert!(matches!(
        ask(&placer, &too_big, 0, &tas_flavor(), false, &[]),
        TopologyVerdict::Fits(_)
    ));
    assert!(matches!(
        ask(&placer, &too_big, 1, &tas_flavor(), false, &[]),
        TopologyVerdict::Fits(_)
    ));
    match ask(&placer, &too_big, 2, &tas_flavor(), false, &[]) {
        TopologyVerdict::Never { message } => {
            assert!(message.contains("only 2 out of 6"), "{message}")
        }
        other => panic!("the third pod set fitted beside the other two: {other:?}"),
    }
}

#[test]
fn a_pod_set_group_is_placed_together() {
    let placer = SnapshotPlacer::new(cluster(), FeatureGates::default());
    let grouped = |count| {
        Some(TopologyRequest {
            required: Some(RACK.into()),
            pod_set_group_name: Some("lws".into()),
            ..TopologyRequest::default()
        })
        .map(|r| {
            pod_set(
                if count == 1 { "leader" } else { "workers" },
                count,
                Some(r),
            )
        })
    };
    let wl = workload("group", vec![grouped(1).unwrap(), grouped(7).unwrap()]);
    let leader = hosts(&ask(&placer, &wl, 0, &tas_flavor(), false, &[]));
    let workers = hosts(&ask(&placer, &wl, 1, &tas_flavor(), false, &[]));
    let rack_of = |host: &str| {
        if host == "host-1" || host == "host-2" {
            1
        } else {
            2
        }
    };
    let rack = rack_of(&leader[0].0);
    assert_eq!(leader.iter().map(|h| h.1).sum::<u32>(), 1);
    assert_eq!(workers.iter().map(|h| h.1).sum::<u32>(), 7);
    assert!(
        workers.iter().all(|(h, _)| rack_of(h) == rack),
        "{workers:?}"
    );
}

fn engine_snapshot(workloads: Vec<Workload>) -> Snapshot {
    Snapshot {
        resource_flavors: vec![tas_flavor()],
        cluster_queues: vec![ClusterQueue {
            name: "cq".into(),
            namespace_selector: Some(Default::default()),
            resource_groups: vec![ResourceGroup {
                covered_resources: vec!["cpu".into()],
                flavors: vec![FlavorQuotas {
                    name: "tas".into(),
                    resources: vec![ResourceQuota::nominal("cpu", Quantity::from_units(100))],
                }],
            }],
            ..ClusterQueue::default()
        }],
        local_queues: vec![LocalQueue {
            namespace: "team".into(),
            name: "lq".into(),
            cluster_queue: "cq".into(),
            ..LocalQueue::default()
        }],
        namespaces: vec![Namespace {
            name: "team".into(),
            ..Namespace::default()
        }],
        workloads,
        ..Snapshot::default()
    }
}

#[test]
fn the_engine_admits_only_what_the_topology_holds() {
    let mut first = workload("first", vec![pod_set("main", 4, required_rack())]);
    first.creation = 1;
    let mut second = workload("second", vec![pod_set("main", 6, required_rack())]);
    second.creation = 2;
    let mut third = workload("third", vec![pod_set("main", 9, required_rack())]);
    third.creation = 3;
    let placer = SnapshotPlacer::new(one_rack(), FeatureGates::default());
    let mut engine = Engine::with_placer(
        engine_snapshot(vec![first, second, third]),
        EngineConfig::default(),
        Box::new(placer),
    )
    .unwrap();
    let outcome = engine.run_until_stable();
    let status = |name: &str| {
        outcome
            .workloads
            .iter()
            .find(|w| w.workload.name == name)
            .map(|w| w.status.clone())
            .unwrap()
    };
    let WorkloadStatus::Admitted(admission) = status("first") else {
        panic!("first not admitted: {:?}", status("first"));
    };
    let assignment = admission.pod_set_assignments[0]
        .topology_assignment
        .as_ref()
        .unwrap();
    assert!(decode(assignment, 4).is_ok(), "{assignment:?}");
    // 4 of the 8 CPUs are used by `first`, in one rack: 6 more in one rack do not fit now.
    match status("second") {
        WorkloadStatus::Pending { reason, message } => {
            assert_eq!(reason, PendingReason::WaitingForQuota);
            assert!(
                message.contains("allows to fit only 4 out of 6"),
                "{message}"
            );
        }
        other => panic!("second: {other:?}"),
    }
    match status("third") {
        WorkloadStatus::Pending { reason, message } => {
            assert_eq!(reason, PendingReason::TopologyPlacementFailed);
            assert!(
                message.contains("would not fit even on an empty cluster"),
                "{message}"
            );
        }
        other => panic!("third: {other:?}"),
    }
}

#[test]
fn partial_admission_places_the_count_asked_for() {
    let placer = SnapshotPlacer::new(one_rack(), FeatureGates::default());
    let mut wl = workload("partial", vec![pod_set("main", 10, required_rack())]);
    wl.pod_sets[0].min_count = Some(4);
    let verdict = placer.place(&TopologyQuery {
        workload: &wl,
        pod_set_index: 0,
        pod_set: &wl.pod_sets[0],
        count: 7,
        flavor: &tas_flavor(),
        cluster_queue: "cq",
        tas_only_cluster_queue: false,
        released: &[],
    });
    assert_eq!(hosts(&verdict).iter().map(|h| h.1).sum::<u32>(), 7);
}
