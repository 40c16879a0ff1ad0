//! Unit tests of topology placement, shared helpers first.

mod balanced_group_tests;
mod balanced_tests;
mod capacity_tests;
mod encoding_tests;
mod group_tests;
mod node_failure_tests;
mod placement_tests;
mod replacement_tests;
mod structure_tests;
mod tie_break_tests;
mod view_tests;

use super::model::{BoundPod, HOSTNAME_LABEL, Node, PodPhase};
use super::placement::{self, PlacementFailure, PodSetPlacement};
use super::request::{PlacementMode, PodSetRequest};
use super::snapshot::TopologySnapshot;
use super::synthetic::{self, RACK, resources};
use crate::engine::features::FeatureGates;

/// A snapshot with the synthetic topology and flavor and the given nodes (name, zone, block, rack, cpus).
pub fn cluster(nodes: &[(&str, &str, &str, &str, i64)]) -> TopologySnapshot {
    let mut s = TopologySnapshot::new();
    s.upsert_topology(synthetic::topology()).unwrap();
    s.upsert_flavor(synthetic::flavor()).unwrap();
    for (name, zone, block, rack, cpus) in nodes {
        s.upsert_node(synthetic::node(name, zone, block, rack, *cpus));
    }
    s
}

/// A request of `count` one-CPU pods on flavor `tas`.
pub fn cpu_request(count: u32, mode: PlacementMode) -> PodSetRequest {
    PodSetRequest::new("main", "tas", count, resources(&[("cpu", 1)]), mode)
}

/// `req` with one slice layer: every `size` consecutive pods share a domain of `level`.
pub fn with_slices(mut req: PodSetRequest, level: &str, size: u32) -> PodSetRequest {
    req.slices = vec![super::request::SliceLayer {
        level: level.to_string(),
        size,
    }];
    req
}

pub fn required_rack() -> PlacementMode {
    PlacementMode::Required(RACK.to_string())
}

pub fn place(
    s: &TopologySnapshot,
    reqs: &[PodSetRequest],
) -> Result<Vec<PodSetPlacement>, PlacementFailure> {
    placement::place(s, reqs, &FeatureGates::default())
}

/// (hostname, count) pairs of a placement.
pub fn hosts(p: &PodSetPlacement) -> Vec<(String, u32)> {
    p.assignment
        .domains
        .iter()
        .map(|d| (d.values.join("/"), d.count))
        .collect()
}

pub fn pairs(items: &[(&str, u32)]) -> Vec<(String, u32)> {
    items.iter().map(|(h, c)| (h.to_string(), *c)).collect()
}

/// A running pod on `node` asking for `cpus`.
pub fn pod(name: &str, node: &str, cpus: i64, tas: bool) -> BoundPod {
    BoundPod {
        namespace: "default".into(),
        name: name.into(),
        node_name: node.into(),
        requests: resources(&[("cpu", cpus)]),
        phase: PodPhase::Running,
        tas,
    }
}

/// A copy of `node` with one label changed.
pub fn relabel(node: &Node, key: &str, value: Option<&str>) -> Node {
    let mut n = node.clone();
    match value {
        Some(v) => n.labels.insert(key.to_string(), v.to_string()),
        None => n.labels.remove(key),
    };
    n
}

pub const HOST: &str = HOSTNAME_LABEL;
