//! Balanced placement (`TASBalancedPlacement`): thresholds, pruning, the optimal domain set,
//! entropy, slices below and on the balanced level, four-level topologies.

use super::*;
use crate::engine::features::Feature;
use crate::engine::topology::model::Topology;
use crate::engine::topology::synthetic::{BLOCK, ZONE};

/// (name, block, rack, cpus) under one zone.
fn three_levels(nodes: &[(&str, &str, &str, i64)]) -> TopologySnapshot {
    let spec: Vec<(&str, &str, &str, &str, i64)> = nodes
        .iter()
        .map(|(n, b, r, c)| (*n, "z1", *b, *r, *c))
        .collect();
    cluster(&spec)
}

fn balanced(s: &TopologySnapshot, req: PodSetRequest) -> Vec<(String, u32)> {
    let gates = FeatureGates::default().with(Feature::TASBalancedPlacement, true);
    let placed = placement::place(s, &[req], &gates).unwrap();
    hosts(&placed[0])
}

fn preferred(count: u32, level: &str, slice: Option<(&str, u32)>) -> PodSetRequest {
    let req = cpu_request(count, PlacementMode::Preferred(level.into()));
    match slice {
        Some((slice_level, size)) => with_slices(req, slice_level, size),
        None => req,
    }
}

#[test]
fn pods_are_spread_evenly_over_the_fewest_domains() {
    let s = three_levels(&[("x1", "b1", "r1", 15), ("x2", "b1", "r2", 15)]);
    assert_eq!(
        balanced(&s, preferred(25, RACK, None)),
        pairs(&[("x1", 13), ("x2", 12)])
    );
    // Kueue's basic case of the issue: 22 pods on two racks of 20 are 11 and 11, not 20 and 2.
    let s = three_levels(&[("x1", "b1", "r1", 20), ("x2", "b1", "r2", 20)]);
    assert_eq!(
        balanced(&s, preferred(22, RACK, None)),
        pairs(&[("x1", 11), ("x2", 11)])
    );
}

#[test]
fn the_optimal_set_leaves_the_least_capacity_over() {
    let s = three_levels(&[
        ("x1", "b1", "r1", 15),
        ("x2", "b1", "r1", 13),
        ("x3", "b1", "r1", 10),
    ]);
    assert_eq!(
        balanced(&s, preferred(23, RACK, None)),
        pairs(&[("x1", 12), ("x2", 11)])
    );
    let s = three_levels(&[
        ("x1", "b1", "r1", 20),
        ("x2", "b1", "r1", 15),
        ("x3", "b1", "r1", 10),
    ]);
    assert_eq!(
        balanced(&s, preferred(25, RACK, Some((HOST, 5)))),
        pairs(&[("x2", 15), ("x3", 10)])
    );
}

#[test]
fn the_parent_with_the_highest_threshold_wins() {
    let s = three_levels(&[
        ("x1", "b1", "r1", 20),
        ("x2", "b1", "r1", 10),
        ("x3", "b2", "r2", 15),
        ("x4", "b2", "r2", 15),
    ]);
    assert_eq!(
        balanced(&s, preferred(22, RACK, None)),
        pairs(&[("x3", 11), ("x4", 11)])
    );
    // Domains of different parents are never combined.
    let s = three_levels(&[
        ("x1", "b1", "r1", 14),
        ("x2", "b1", "r1", 11),
        ("x3", "b2", "r2", 15),
        ("x4", "b2", "r2", 10),
    ]);
    assert_eq!(
        balanced(&s, preferred(25, RACK, None)),
        pairs(&[("x1", 14), ("x2", 11)])
    );
    // Equal thresholds: the parent needing fewer racks wins.
    let s = three_levels(&[
        ("x1", "b1", "r1", 15),
        ("x2", "b1", "r2", 15),
        ("x3", "b2", "r3", 15),
        ("x4", "b2", "r3", 15),
    ]);
    assert_eq!(
        balanced(&s, preferred(25, RACK, Some((HOST, 5)))),
        pairs(&[("x3", 15), ("x4", 10)])
    );
}

#[test]
fn pruning_drops_domains_below_the_threshold() {
    let s = three_levels(&[
        ("x01", "b1", "r1", 5),
        ("x02", "b1", "r1", 5),
        ("x03", "b1", "r2", 5),
        ("x04", "b1", "r2", 5),
        ("x05", "b2", "r3", 10),
        ("x06", "b2", "r3", 4),
        ("x07", "b2", "r3", 4),
        ("x08", "b2", "r3", 4),
        ("x09", "b2", "r4", 5),
        ("x10", "b2", "r5", 5),
    ]);
    assert_eq!(
        balanced(&s, preferred(20, RACK, None)),
        pairs(&[("x01", 5), ("x02", 5), ("x03", 5), ("x04", 5)])
    );
}

#[test]
fn more_even_racks_win_by_entropy() {
    let s = three_levels(&[
        ("x1", "b1", "r1", 10),
        ("x2", "b1", "r1", 5),
        ("x3", "b1", "r2", 5),
        ("x4", "b1", "r2", 5),
        ("x5", "b1", "r2", 5),
    ]);
    assert_eq!(
        balanced(&s, preferred(15, RACK, None)),
        pairs(&[("x3", 5), ("x4", 5), ("x5", 5)])
    );
    let s = three_levels(&[
        ("x1", "b1", "r1", 8),
        ("x2", "b1", "r1", 8),
        ("x3", "b1", "r1", 8),
        ("x4", "b1", "r2", 16),
        ("x5", "b1", "r2", 8),
    ]);
    assert_eq!(
        balanced(&s, preferred(24, RACK, None)),
        pairs(&[("x1", 8), ("x2", 8), ("x3", 8)])
    );
}

#[test]
fn balancing_on_the_lowest_level_with_and_without_slices() {
    let s = three_levels(&[
        ("x1", "b1", "r1", 15),
        ("x2", "b1", "r1", 13),
        ("x3", "b1", "r1", 10),
        ("x4", "b1", "r2", 20),
        ("x5", "b1", "r2", 8),
    ]);
    assert_eq!(
        balanced(&s, preferred(22, HOST, Some((HOST, 2)))),
        pairs(&[("x2", 12), ("x3", 10)])
    );
    let s = three_levels(&[
        ("x1", "b1", "r1", 20),
        ("x2", "b1", "r1", 8),
        ("x3", "b1", "r2", 15),
        ("x4", "b1", "r2", 13),
        ("x5", "b1", "r2", 10),
    ]);
    assert_eq!(
        balanced(&s, preferred(22, HOST, None)),
        pairs(&[("x3", 11), ("x4", 11)])
    );
}

/// Kueue's four-level cases: block / sub-block / rack / host become zone / block / rack / host.
fn four_levels() -> TopologySnapshot {
    cluster(&[
        ("x1", "b1", "sb1", "r1", 18),
        ("x2", "b1", "sb1", "r2", 8),
        ("x3", "b1", "sb2", "r3", 15),
        ("x4", "b1", "sb2", "r4", 9),
        ("x5", "b1", "sb2", "r4", 7),
    ])
}

#[test]
fn four_levels_with_slices_below_the_balanced_level() {
    assert_eq!(
        balanced(&four_levels(), preferred(20, BLOCK, Some((HOST, 2)))),
        pairs(&[("x3", 10), ("x4", 8), ("x5", 2)])
    );
    // Slices of racks: each rack of sb2 takes 5 slices; inside rack r4 the pods go largest host
    // first (Kueue fills the smaller host first, x4 3 and x5 7: the same two hosts).
    assert_eq!(
        balanced(&four_levels(), preferred(20, BLOCK, Some((RACK, 2)))),
        pairs(&[("x3", 10), ("x4", 9), ("x5", 1)])
    );
}

#[test]
fn balancing_on_racks_when_racks_are_the_lowest_level() {
    let mut s = TopologySnapshot::new();
    s.upsert_topology(Topology {
        name: "default".into(),
        levels: vec![ZONE.into(), BLOCK.into(), RACK.into()],
    })
    .unwrap();
    s.upsert_flavor(synthetic::flavor()).unwrap();
    for (name, block, rack, cpus) in [
        ("x1", "sb1", "r1", 18),
        ("x2", "sb1", "r2", 8),
        ("x3", "sb2", "r3", 15),
        ("x4", "sb2", "r4", 15),
    ] {
        s.upsert_node(synthetic::node(name, "b1", block, rack, cpus));
    }
    let placed = balanced(&s, preferred(20, BLOCK, Some((RACK, 2))));
    assert_eq!(placed, pairs(&[("b1/sb2/r3", 10), ("b1/sb2/r4", 10)]));
}

#[test]
fn a_preferred_slice_level_with_levels_below_falls_back_to_best_fit() {
    let s = three_levels(&[("x1", "b1", "r1", 10), ("x2", "b1", "r2", 10)]);
    assert_eq!(
        balanced(&s, preferred(12, RACK, Some((RACK, 2)))),
        pairs(&[("x1", 10), ("x2", 2)])
    );
}
