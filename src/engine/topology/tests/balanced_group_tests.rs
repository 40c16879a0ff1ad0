//! Balanced placement of pod-set groups: the leader rides in the first domain filled, and leader
//! room is kept only where the worker slices beside it reach the threshold.

use super::*;
use crate::engine::features::Feature;
use crate::engine::topology::synthetic::BLOCK;

fn group(leader_cpus: i64, workers: u32, level: &str, slice: Option<u32>) -> [PodSetRequest; 2] {
    let mode = PlacementMode::Preferred(level.into());
    let mut leader = PodSetRequest::new(
        "leader",
        "tas",
        1,
        resources(&[("cpu", leader_cpus)]),
        mode.clone(),
    );
    leader.group = Some("lws".into());
    let mut crew = cpu_request(workers, mode);
    if let Some(size) = slice {
        crew = with_slices(crew, HOST, size);
    }
    crew.name = "workers".into();
    crew.group = Some("lws".into());
    [leader, crew]
}

fn balanced(s: &TopologySnapshot, requests: &[PodSetRequest]) -> Vec<Vec<(String, u32)>> {
    let gates = FeatureGates::default().with(Feature::TASBalancedPlacement, true);
    placement::place(s, requests, &gates)
        .unwrap()
        .iter()
        .map(hosts)
        .collect()
}

#[test]
fn the_leader_rides_with_evenly_spread_worker_slices() {
    let s = cluster(&[
        ("x1", "z1", "b1", "r1", 20),
        ("x2", "z1", "b1", "r1", 15),
        ("x3", "z1", "b1", "r1", 12),
    ]);
    let placed = balanced(&s, &group(1, 25, RACK, Some(5)));
    assert_eq!(placed[0], pairs(&[("x3", 1)]));
    assert_eq!(placed[1], pairs(&[("x2", 15), ("x3", 10)]));
}

#[test]
fn leader_room_is_not_reserved_on_every_node() {
    for (first, second) in [(7, 5), (6, 5)] {
        let s = cluster(&[
            ("x1", "z1", "b1", "r1", first),
            ("x2", "z1", "b1", "r1", second),
        ]);
        let placed = balanced(&s, &group(1, 10, RACK, None));
        assert_eq!(placed[0], pairs(&[("x1", 1)]), "x1 of {first} CPUs");
        assert_eq!(
            placed[1],
            pairs(&[("x1", 5), ("x2", 5)]),
            "x1 of {first} CPUs"
        );
    }
}

/// Block b1 holds the group, but 7 workers cannot take the threshold of 3 on each of the three
/// hosts they need, so placement falls back to best fit inside b1 (three hosts, the leader on
/// the only one of b1 with room for its 5 CPUs).
#[test]
fn a_group_that_cannot_meet_the_threshold_falls_back_to_best_fit() {
    let s = cluster(&[
        ("x1", "z1", "b1", "r1", 3),
        ("x2", "z1", "b1", "r2", 3),
        ("x3", "z1", "b1", "r3", 8),
        ("x4", "z1", "b2", "r1", 11),
    ]);
    let placed = balanced(&s, &group(5, 7, BLOCK, None));
    assert_eq!(placed[0], pairs(&[("x3", 1)]));
    let workers: u32 = placed[1].iter().map(|(_, c)| c).sum();
    assert_eq!((placed[1].len(), workers), (3, 7));
    assert!(placed[1].iter().all(|(h, _)| h != "x4"), "{:?}", placed[1]);
}
