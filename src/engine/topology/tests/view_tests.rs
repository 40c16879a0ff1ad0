//! Capacity views, flavors sharing nodes across pod sets, and topologies without a hostname level.

use super::*;
use crate::engine::WorkloadKey;
use crate::engine::topology::capacity::CapacityView;
use crate::engine::topology::encoding::{decode, encode};
use crate::engine::topology::model::{AdmittedPodSetUsage, AdmittedTasUsage, TasFlavor, Topology};
use crate::engine::topology::placement::place_with;
use crate::engine::topology::synthetic::{BLOCK, ZONE};

#[test]
fn empty_cluster_view_ignores_admitted_tas_usage_only() {
    let mut s = cluster(&[("h1", "z1", "b1", "r1", 4)]);
    s.upsert_pod(pod("daemon", "h1", 1, false));
    let placed = place(&s, &[cpu_request(3, required_rack())]).unwrap();
    s.admit(AdmittedTasUsage {
        workload: WorkloadKey::new("ns", "w"),
        pod_sets: vec![AdmittedPodSetUsage {
            flavor: "tas".into(),
            per_pod: resources(&[("cpu", 1)]),
            assignment: placed[0].assignment.clone(),
        }],
    })
    .unwrap();
    let gates = FeatureGates::default();
    let one = [cpu_request(1, required_rack())];
    assert!(place_with(&s, &one, &gates, CapacityView::Current).is_err());
    assert!(place_with(&s, &one, &gates, CapacityView::EmptyCluster).is_ok());
    let four = [cpu_request(4, required_rack())];
    assert!(
        place_with(&s, &four, &gates, CapacityView::EmptyCluster).is_err(),
        "the non-TAS pod stays"
    );
}

#[test]
fn pod_sets_on_different_flavors_share_node_capacity() {
    let mut s = cluster(&[("h1", "z1", "b1", "r1", 4), ("h2", "z1", "b1", "r2", 4)]);
    s.upsert_flavor(TasFlavor {
        name: "tas-b".into(),
        ..synthetic::flavor()
    })
    .unwrap();
    let first = cpu_request(4, required_rack());
    let mut second = cpu_request(4, required_rack());
    second.name = "second".into();
    second.flavor = "tas-b".into();
    let placed = place(&s, &[first, second]).unwrap();
    assert_eq!(hosts(&placed[0]), pairs(&[("h1", 4)]));
    assert_eq!(hosts(&placed[1]), pairs(&[("h2", 4)]));
}

#[test]
fn topologies_without_hostname_assign_lowest_domains_with_every_level() {
    let mut s = TopologySnapshot::new();
    s.upsert_topology(Topology {
        name: "default".into(),
        levels: vec![BLOCK.into(), RACK.into()],
    })
    .unwrap();
    s.upsert_flavor(synthetic::flavor()).unwrap();
    for (h, rack, cpus) in [("a", "r1", 4), ("b", "r1", 4), ("c", "r2", 2)] {
        s.upsert_node(synthetic::node(h, "z1", "b1", rack, cpus));
    }
    let placed = place(
        &s,
        &[cpu_request(10, PlacementMode::Required(BLOCK.into()))],
    )
    .unwrap();
    assert_eq!(
        placed[0].assignment.levels,
        vec![BLOCK.to_string(), RACK.to_string()]
    );
    assert_eq!(hosts(&placed[0]), pairs(&[("b1/r1", 8), ("b1/r2", 2)]));
    let gates = FeatureGates::default();
    let encoded = encode(&placed[0].assignment, &gates);
    assert_eq!(
        encoded.slices[0].values_per_level[0].universal.as_deref(),
        Some("b1")
    );
    assert_eq!(decode(&encoded, 10).unwrap(), placed[0].assignment);
    // The second pod set sees the first one's usage on the rack domains.
    let mut second = cpu_request(1, PlacementMode::Required(BLOCK.into()));
    second.name = "second".into();
    let err = place(
        &s,
        &[
            cpu_request(10, PlacementMode::Required(BLOCK.into())),
            second,
        ],
    )
    .unwrap_err();
    assert_eq!(err.pod_set, "second");
}

#[test]
fn preferred_groups_climb_to_a_shared_domain() {
    let s = cluster(&[
        ("h1", "z1", "b1", "r1", 2),
        ("h2", "z1", "b1", "r2", 2),
        ("h3", "z2", "b2", "r3", 1),
    ]);
    let mode = PlacementMode::Preferred(RACK.into());
    let mut leader = PodSetRequest::new("leader", "tas", 1, resources(&[("cpu", 1)]), mode.clone());
    leader.group = Some("g".into());
    let mut workers = cpu_request(3, mode);
    workers.name = "workers".into();
    workers.group = Some("g".into());
    let placed = place(&s, &[workers, leader]).unwrap();
    let (workers, leader) = (&placed[0], &placed[1]);
    assert_eq!(leader.name, "leader");
    assert_eq!(hosts(leader).len(), 1);
    // No rack holds all four pods; block b1 does, and zone z2 is never touched.
    assert_eq!(
        workers.assignment.pod_count() + leader.assignment.pod_count(),
        4
    );
    assert!(
        hosts(workers)
            .iter()
            .chain(hosts(leader).iter())
            .all(|(h, _)| h != "h3")
    );
}

#[test]
fn preferred_slices_keep_slices_whole_when_climbing() {
    let s = cluster(&[
        ("h1", "z1", "b1", "r1", 3),
        ("h2", "z1", "b1", "r2", 3),
        ("h3", "z1", "b2", "r3", 2),
        ("h4", "z1", "b2", "r3", 2),
    ]);
    let mut req = cpu_request(4, PlacementMode::Preferred(ZONE.into()));
    req.slices = vec![crate::engine::topology::request::SliceLayer {
        level: RACK.into(),
        size: 4,
    }];
    // Block b1 has 6 free CPUs but no rack with 4; rack r3 holds the slice across two hosts.
    let placed = place(&s, &[req]).unwrap();
    assert_eq!(hosts(&placed[0]), pairs(&[("h3", 2), ("h4", 2)]));
}
