//! Node replacement: one and several failed nodes, slices, and why none exists.

use super::*;
use crate::engine::WorkloadKey;
use crate::engine::topology::model::{
    AdmittedPodSetUsage, AdmittedTasUsage, DomainAssignment, DomainList,
};
use crate::engine::topology::replacement::{ReplacementError, replace_failed_nodes};
use crate::engine::topology::request::SliceLayer;
use crate::engine::topology::synthetic::BLOCK;

fn assignment(domains: &[(&str, u32)]) -> DomainList {
    DomainList {
        levels: vec![HOST.into()],
        domains: domains
            .iter()
            .map(|(h, c)| DomainAssignment {
                values: vec![h.to_string()],
                count: *c,
            })
            .collect(),
    }
}

/// Admits `request` at `domains` and marks `failed` nodes not ready.
fn admitted(
    s: &mut TopologySnapshot,
    request: &PodSetRequest,
    domains: &DomainList,
    failed: &[&str],
) {
    s.admit(AdmittedTasUsage {
        workload: WorkloadKey::new("ns", "w"),
        pod_sets: vec![AdmittedPodSetUsage {
            flavor: "tas".into(),
            per_pod: request.per_pod.clone(),
            assignment: domains.clone(),
        }],
    })
    .unwrap();
    for name in failed {
        let mut node = s.nodes().get(s.nodes().id(name).unwrap()).unwrap().clone();
        node.ready = false;
        s.upsert_node(node);
    }
}

fn replace(
    s: &TopologySnapshot,
    req: &PodSetRequest,
    domains: &DomainList,
    failed: &[&str],
) -> Result<Vec<(String, u32)>, ReplacementError> {
    let failed: Vec<String> = failed.iter().map(|f| f.to_string()).collect();
    replace_failed_nodes(s, req, domains, &failed, &FeatureGates::default()).map(|r| {
        r.assignment
            .domains
            .iter()
            .map(|d| (d.values[0].clone(), d.count))
            .collect()
    })
}

#[test]
fn one_failed_node_is_replaced_inside_the_required_rack() {
    let mut s = cluster(&[
        ("h1", "z1", "b1", "r1", 4),
        ("h2", "z1", "b1", "r1", 4),
        ("h3", "z1", "b1", "r1", 4),
        ("h4", "z1", "b1", "r2", 16),
    ]);
    let req = cpu_request(8, required_rack());
    let domains = assignment(&[("h1", 4), ("h2", 4)]);
    admitted(&mut s, &req, &domains, &["h1"]);
    let out = replace_failed_nodes(
        &s,
        &req,
        &domains,
        &["h1".to_string()],
        &FeatureGates::default(),
    )
    .unwrap();
    assert_eq!(
        out.added,
        vec![DomainAssignment {
            values: vec!["h3".into()],
            count: 4
        }]
    );
    assert_eq!(
        out.removed,
        vec![DomainAssignment {
            values: vec!["h1".into()],
            count: 4
        }]
    );
    assert_eq!(
        replace(&s, &req, &domains, &["h1"]).unwrap(),
        pairs(&[("h2", 4), ("h3", 4)])
    );
}

#[test]
fn several_failed_nodes_are_replaced_at_once() {
    let mut s = cluster(&[
        ("h1", "z1", "b1", "r1", 4),
        ("h2", "z1", "b1", "r1", 4),
        ("h3", "z1", "b1", "r1", 4),
        ("h5", "z1", "b1", "r1", 4),
        ("h6", "z1", "b1", "r1", 4),
        ("h4", "z1", "b1", "r2", 16),
    ]);
    let req = cpu_request(12, required_rack());
    let domains = assignment(&[("h1", 4), ("h2", 4), ("h3", 4)]);
    admitted(&mut s, &req, &domains, &["h1", "h2"]);
    assert_eq!(
        replace(&s, &req, &domains, &["h1", "h2"]).unwrap(),
        pairs(&[("h3", 4), ("h5", 4), ("h6", 4)])
    );
}

#[test]
fn no_replacement_says_why() {
    let mut s = cluster(&[
        ("h1", "z1", "b1", "r1", 4),
        ("h2", "z1", "b1", "r1", 4),
        ("h3", "z1", "b1", "r2", 16),
    ]);
    let req = cpu_request(8, required_rack());
    let domains = assignment(&[("h1", 4), ("h2", 4)]);
    admitted(&mut s, &req, &domains, &["h1"]);
    let err = replace(&s, &req, &domains, &["h1"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "no replacement for unhealthy node(s) h1: {RACK} \"z1/b1/r1\" allows to fit only 0 out of 4 pod(s)"
        )
    );
    let err = replace(&s, &req, &domains, &["h3"]).unwrap_err();
    assert!(matches!(err, ReplacementError::NotAssigned { .. }), "{err}");
}

#[test]
fn a_vanished_remaining_node_makes_the_assignment_stale() {
    let mut s = cluster(&[
        ("h1", "z1", "b1", "r1", 4),
        ("h2", "z1", "b1", "r1", 4),
        ("h3", "z1", "b1", "r1", 4),
    ]);
    let req = cpu_request(8, required_rack());
    let domains = assignment(&[("h1", 4), ("h2", 4)]);
    admitted(&mut s, &req, &domains, &["h1"]);
    s.remove_node("h2");
    let err = replace(&s, &req, &domains, &["h1"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "pod set \"main\": existing topologyAssignment is invalid: stale domain \"h2\""
    );
}

#[test]
fn a_remaining_node_not_ready_or_cordoned_stays_and_the_failed_one_is_replaced() {
    for how in ["not ready", "cordoned"] {
        let mut s = cluster(&[
            ("h1", "z1", "b1", "r1", 4),
            ("h2", "z1", "b1", "r1", 4),
            ("h3", "z1", "b1", "r1", 4),
            ("h4", "z1", "b1", "r2", 16),
        ]);
        let req = cpu_request(8, required_rack());
        let domains = assignment(&[("h1", 4), ("h2", 4)]);
        admitted(&mut s, &req, &domains, &["h1"]);
        // h2's pods may still run there: it has not failed (yet), it is only out of the tree.
        let mut h2 = s.nodes().get(s.nodes().id("h2").unwrap()).unwrap().clone();
        if how == "not ready" {
            h2.ready = false;
        } else {
            h2.unschedulable = true;
        }
        s.upsert_node(h2);
        assert_eq!(
            replace(&s, &req, &domains, &["h1"]).unwrap(),
            vec![("h2".to_string(), 4), ("h3".to_string(), 4)],
            "{how}"
        );
    }
}

#[test]
fn a_remaining_node_out_of_the_tree_cannot_anchor_a_request_for_one_host() {
    let mut s = cluster(&[
        ("h1", "z1", "b1", "r1", 4),
        ("h2", "z1", "b1", "r1", 4),
        ("h3", "z1", "b1", "r1", 4),
    ]);
    let mut req = cpu_request(8, PlacementMode::Preferred(RACK.into()));
    req.slices = vec![SliceLayer {
        level: HOST.into(),
        size: 4,
    }];
    let domains = assignment(&[("h1", 4), ("h2", 4)]);
    admitted(&mut s, &req, &domains, &["h1", "h2"]);
    let err = replace(&s, &req, &domains, &["h1"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "pod set \"main\": existing topologyAssignment is invalid: stale domain \"h2\""
    );
}

fn sliced_request() -> PodSetRequest {
    let mut req = cpu_request(8, PlacementMode::Required(BLOCK.into()));
    req.slices = vec![SliceLayer {
        level: RACK.into(),
        size: 4,
    }];
    req
}

#[test]
fn a_broken_slice_is_completed_inside_its_rack() {
    let mut s = cluster(&[
        ("h1", "z1", "b1", "r1", 2),
        ("h2", "z1", "b1", "r1", 2),
        ("h9", "z1", "b1", "r1", 2),
        ("h3", "z1", "b1", "r2", 4),
        ("h7", "z1", "b1", "r3", 16),
    ]);
    let req = sliced_request();
    let domains = assignment(&[("h1", 2), ("h2", 2), ("h3", 4)]);
    admitted(&mut s, &req, &domains, &["h1"]);
    // r3 has far more room, but the slice's other half is in r1.
    assert_eq!(
        replace(&s, &req, &domains, &["h1"]).unwrap(),
        pairs(&[("h2", 2), ("h9", 2), ("h3", 4)])
    );
}

#[test]
fn a_lost_whole_slice_may_move_to_another_rack_of_the_block() {
    let mut s = cluster(&[
        ("h1", "z1", "b1", "r1", 2),
        ("h2", "z1", "b1", "r1", 2),
        ("h3", "z1", "b1", "r2", 4),
        ("h7", "z1", "b1", "r3", 4),
        ("h8", "z1", "b2", "r4", 4),
    ]);
    let req = sliced_request();
    let domains = assignment(&[("h1", 2), ("h2", 2), ("h3", 4)]);
    admitted(&mut s, &req, &domains, &["h3"]);
    assert_eq!(
        replace(&s, &req, &domains, &["h3"]).unwrap(),
        pairs(&[("h1", 2), ("h2", 2), ("h7", 4)])
    );
}

#[test]
fn preferred_replacements_stay_near_the_remaining_pods() {
    let mut s = cluster(&[
        ("h1", "z1", "b1", "r1", 4),
        ("h2", "z1", "b1", "r1", 4),
        ("h3", "z1", "b1", "r2", 8),
        ("a1", "z0", "b0", "r0", 4),
    ]);
    let req = cpu_request(8, PlacementMode::Preferred(RACK.into()));
    let domains = assignment(&[("h1", 4), ("h2", 4)]);
    admitted(&mut s, &req, &domains, &["h1"]);
    // Rack r1 is full. Anywhere, the tightest fit would be a1 in zone z0; the same block's r2 wins.
    assert_eq!(
        replace(&s, &req, &domains, &["h1"]).unwrap(),
        pairs(&[("h2", 4), ("h3", 4)])
    );
}

#[test]
fn replacement_needs_a_hostname_level() {
    let mut s = TopologySnapshot::new();
    s.upsert_topology(crate::engine::topology::model::Topology {
        name: "default".into(),
        levels: vec![BLOCK.into(), RACK.into()],
    })
    .unwrap();
    s.upsert_flavor(synthetic::flavor()).unwrap();
    let req = cpu_request(1, required_rack());
    let err = replace(&s, &req, &assignment(&[("h1", 1)]), &["h1"]).unwrap_err();
    assert!(
        matches!(err, ReplacementError::NeedsHostnameLevel { .. }),
        "{err}"
    );
}
