//! Free capacity: non-TAS pods, admitted TAS usage, overlapping flavors, node filters.

use k8s_openapi::api::core::v1::{
    NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Taint, Toleration,
};

use super::*;
use crate::engine::WorkloadKey;
use crate::engine::topology::model::{
    AdmittedPodSetUsage, AdmittedTasUsage, DomainAssignment, DomainList, TasFlavor,
};
use crate::engine::topology::placement::FailureReason;

fn hostname_usage(
    workload: &str,
    flavor: &str,
    cpus: i64,
    domains: &[(&str, u32)],
) -> AdmittedTasUsage {
    AdmittedTasUsage {
        workload: WorkloadKey::new("ns", workload),
        pod_sets: vec![AdmittedPodSetUsage {
            flavor: flavor.into(),
            per_pod: resources(&[("cpu", cpus)]),
            assignment: DomainList {
                levels: vec![HOST.into()],
                domains: domains
                    .iter()
                    .map(|(h, c)| DomainAssignment {
                        values: vec![h.to_string()],
                        count: *c,
                    })
                    .collect(),
            },
        }],
    }
}

fn fits(s: &TopologySnapshot, count: u32, mode: PlacementMode) -> bool {
    place(s, &[cpu_request(count, mode)]).is_ok()
}

#[test]
fn non_tas_pods_use_capacity_and_tas_or_finished_pods_do_not() {
    let mut s = cluster(&[("h1", "z1", "b1", "r1", 4)]);
    s.upsert_pod(pod("daemon", "h1", 1, false));
    assert!(fits(&s, 3, required_rack()));
    assert!(!fits(&s, 4, required_rack()));
    s.upsert_pod(pod("tas-pod", "h1", 3, true));
    assert!(
        fits(&s, 3, required_rack()),
        "TAS pods count through their Workload's assignment"
    );
    let mut finished = pod("daemon", "h1", 1, false);
    finished.phase = PodPhase::Failed;
    s.upsert_pod(finished);
    assert!(fits(&s, 4, required_rack()));
}

#[test]
fn pod_count_limit_counts_every_pod() {
    let mut s = cluster(&[]);
    let mut n = synthetic::node("h1", "z1", "b1", "r1", 64);
    n.allocatable.insert(
        "pods".into(),
        crate::engine::quantity::Quantity::from_units(3),
    );
    s.upsert_node(n);
    s.upsert_pod(pod("zero-request", "h1", 0, false));
    assert!(fits(&s, 2, required_rack()));
    let err = place(&s, &[cpu_request(3, required_rack())]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "topology \"default\" allows to fit only 2 out of 3 pod(s); it would not fit even on an empty cluster"
    );
}

/// A node at rack r1 with `pods` allocatable pods and 64 CPUs.
fn node_with_pods(name: &str, pods: i64) -> crate::engine::topology::model::Node {
    let mut n = synthetic::node(name, "z1", "b1", "r1", 64);
    n.allocatable.insert(
        "pods".into(),
        crate::engine::quantity::Quantity::from_units(pods),
    );
    n
}

#[test]
fn pods_without_requests_fill_a_node_pod_count() {
    let mut s = cluster(&[]);
    s.upsert_node(node_with_pods("h1", 4));
    s.upsert_node(node_with_pods("h2", 5));
    let bare = |name: &str| {
        let mut p = pod(name, "h1", 0, false);
        p.requests.clear();
        p
    };
    s.upsert_pod(bare("bare"));
    // Plenty of CPU everywhere: only the pod counts decide. h1 has room for 3 more, h2 for 5.
    let host = PlacementMode::Required(HOST.into());
    let placed = place(&s, &[cpu_request(3, host.clone())]).unwrap();
    assert_eq!(hosts(&placed[0]), pairs(&[("h1", 3)]));
    s.upsert_pod(bare("second"));
    let placed = place(&s, &[cpu_request(3, host.clone())]).unwrap();
    assert_eq!(hosts(&placed[0]), pairs(&[("h2", 3)]));
    assert!(place(&s, &[cpu_request(6, host)]).is_err());
    let spread = place(&s, &[cpu_request(7, required_rack())]).unwrap();
    assert_eq!(hosts(&spread[0]), pairs(&[("h1", 2), ("h2", 5)]));
    assert!(place(&s, &[cpu_request(8, required_rack())]).is_err());
}

#[test]
fn quantities_near_the_limit_do_not_overflow() {
    let mut s = cluster(&[]);
    let mut huge = synthetic::node("h1", "z1", "b1", "r1", 1);
    huge.allocatable.insert(
        "cpu".into(),
        crate::engine::quantity::Quantity::from_nanos(i128::MAX - 7),
    );
    s.upsert_node(huge);
    let mut daemon = pod("daemon", "h1", 0, false);
    daemon.requests.insert(
        "cpu".into(),
        crate::engine::quantity::Quantity::from_nanos(i128::MIN + 1),
    );
    s.upsert_pod(daemon);
    let peta = crate::engine::quantity::Quantity::from_units(1_000_000_000_000_000);
    let mut req = cpu_request(2, required_rack());
    req.per_pod.insert("cpu".into(), peta);
    let placed = place(&s, &[req]).unwrap();
    assert_eq!(hosts(&placed[0]), pairs(&[("h1", 2)]));
}

#[test]
fn admitted_tas_usage_counts_across_flavors_sharing_nodes() {
    let mut s = cluster(&[("h1", "z1", "b1", "r1", 4), ("h2", "z1", "b1", "r1", 4)]);
    let other = TasFlavor {
        name: "tas-b".into(),
        ..synthetic::flavor()
    };
    s.upsert_flavor(other).unwrap();
    s.admit(hostname_usage("w1", "tas-b", 2, &[("h1", 2)]))
        .unwrap();
    assert!(fits(&s, 4, required_rack()));
    assert!(!fits(&s, 5, required_rack()));
    let err = place(&s, &[cpu_request(5, required_rack())]).unwrap_err();
    assert!(
        err.fits_empty_cluster,
        "preemption of w1 would make room: {err}"
    );
    s.release(&WorkloadKey::new("ns", "w1"));
    assert!(fits(&s, 8, required_rack()));
}

#[test]
fn admitted_usage_with_wrong_levels_is_refused() {
    let mut s = cluster(&[("h1", "z1", "b1", "r1", 4)]);
    let mut usage = hostname_usage("w1", "tas", 1, &[("h1", 1)]);
    usage.pod_sets[0].assignment.levels = vec![RACK.into()];
    let err = s.admit(usage).unwrap_err();
    assert!(
        err.to_string()
            .contains("podSetAssignments[0].topologyAssignment.levels"),
        "{err}"
    );
}

#[test]
fn usage_on_lowest_domains_without_hostname_level() {
    let mut s = TopologySnapshot::new();
    let topology = crate::engine::topology::model::Topology {
        name: "default".into(),
        levels: vec![synthetic::BLOCK.into(), RACK.into()],
    };
    s.upsert_topology(topology).unwrap();
    s.upsert_flavor(synthetic::flavor()).unwrap();
    for h in ["a", "b"] {
        s.upsert_node(synthetic::node(h, "z1", "b1", "r1", 4));
    }
    let usage = AdmittedTasUsage {
        workload: WorkloadKey::new("ns", "w"),
        pod_sets: vec![AdmittedPodSetUsage {
            flavor: "tas".into(),
            per_pod: resources(&[("cpu", 3)]),
            assignment: DomainList {
                levels: vec![synthetic::BLOCK.into(), RACK.into()],
                domains: vec![DomainAssignment {
                    values: vec!["b1".into(), "r1".into()],
                    count: 2,
                }],
            },
        }],
    };
    s.admit(usage).unwrap();
    // 8 CPUs minus 6 admitted leave 2 in the rack.
    assert!(fits(&s, 2, required_rack()));
    assert!(!fits(&s, 3, required_rack()));
    s.release(&WorkloadKey::new("ns", "w"));
    // Per-node counting: 3-CPU pods fit once per 4-CPU node, not twice in 8 pooled CPUs.
    let three = PodSetRequest::new("main", "tas", 3, resources(&[("cpu", 3)]), required_rack());
    let err = place(&s, &[three]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "topology \"default\" allows to fit only 2 out of 3 pod(s); it would not fit even on an empty cluster"
    );
}

fn tainted(name: &str, key: &str) -> crate::engine::topology::model::Node {
    let mut n = synthetic::node(name, "z1", "b1", "r1", 4);
    n.taints = vec![Taint {
        key: key.into(),
        effect: "NoSchedule".into(),
        ..Taint::default()
    }];
    n
}

fn tolerate(key: &str) -> Toleration {
    Toleration {
        key: Some(key.into()),
        operator: Some("Exists".into()),
        ..Toleration::default()
    }
}

#[test]
fn taints_need_pod_or_flavor_tolerations() {
    let mut s = cluster(&[("h1", "z1", "b1", "r1", 4)]);
    s.upsert_node(tainted("h2", "gpu"));
    let err = place(&s, &[cpu_request(8, required_rack())]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "topology \"default\" allows to fit only 4 out of 8 pod(s); excluded nodes: taint \"gpu\": 1; it would not fit even on an empty cluster"
    );
    assert!(!err.fits_empty_cluster);
    let mut tolerant = cpu_request(8, required_rack());
    tolerant.tolerations = vec![tolerate("gpu")];
    assert!(place(&s, &[tolerant]).is_ok());
    let flavor = TasFlavor {
        tolerations: vec![tolerate("gpu")],
        ..synthetic::flavor()
    };
    s.upsert_flavor(flavor).unwrap();
    assert!(fits(&s, 8, required_rack()));
}

#[test]
fn node_selector_and_required_affinity_filter_nodes() {
    let mut s = cluster(&[("h1", "z1", "b1", "r1", 4)]);
    s.upsert_node(relabel(
        &synthetic::node("h2", "z1", "b1", "r1", 4),
        "disk",
        Some("ssd"),
    ));
    let mut by_selector = cpu_request(5, required_rack());
    by_selector
        .node_selector
        .insert("disk".into(), "ssd".into());
    let err = place(&s, &[by_selector.clone()]).unwrap_err();
    let FailureReason::NoFit { fit, excluded, .. } = &err.reason else {
        panic!("{err:?}")
    };
    assert_eq!((*fit, excluded.get("nodeSelector")), (4, Some(&1)));
    by_selector.count = 4;
    let placed = place(&s, &[by_selector]).unwrap();
    assert_eq!(hosts(&placed[0]), pairs(&[("h2", 4)]));

    let mut by_affinity = cpu_request(4, required_rack());
    by_affinity.required_affinity = Some(NodeSelector {
        node_selector_terms: vec![NodeSelectorTerm {
            match_expressions: Some(vec![NodeSelectorRequirement {
                key: "disk".into(),
                operator: "DoesNotExist".into(),
                values: None,
            }]),
            match_fields: None,
        }],
    });
    assert_eq!(
        hosts(&place(&s, &[by_affinity.clone()]).unwrap()[0]),
        pairs(&[("h1", 4)])
    );
    by_affinity.count = 5;
    let err = place(&s, &[by_affinity]).unwrap_err();
    assert!(err.to_string().contains("node affinity: 1"), "{err}");
}

#[test]
fn insufficient_resources_are_reported_by_name() {
    let s = cluster(&[("h1", "z1", "b1", "r1", 2), ("h2", "z1", "b1", "r1", 2)]);
    let gpu = PodSetRequest::new(
        "main",
        "tas",
        1,
        resources(&[("nvidia.com/gpu", 1)]),
        required_rack(),
    );
    let err = place(&s, &[gpu]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "topology \"default\" doesn't allow to fit any of 1 pod(s); excluded nodes: insufficient \"nvidia.com/gpu\": 2; it would not fit even on an empty cluster"
    );
    let big = PodSetRequest::new("main", "tas", 1, resources(&[("cpu", 3)]), required_rack());
    assert!(
        place(&s, &[big])
            .unwrap_err()
            .to_string()
            .contains("insufficient \"cpu\": 2")
    );
}

#[test]
fn not_ready_and_unschedulable_nodes_show_in_failure_messages() {
    let mut s = cluster(&[("h1", "z1", "b1", "r1", 2)]);
    let mut down = synthetic::node("h2", "z1", "b1", "r1", 2);
    down.ready = false;
    s.upsert_node(down);
    let err = place(&s, &[cpu_request(4, required_rack())]).unwrap_err();
    assert!(
        err.to_string().contains("excluded nodes: not ready: 1"),
        "{err}"
    );
}
