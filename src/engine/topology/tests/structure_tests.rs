//! Tree membership, exclusions and incremental updates.

use super::*;
use crate::api::ObjectKey;
use crate::engine::WorkloadKey;
use crate::engine::quantity::Quantity;
use crate::engine::topology::synthetic::{ClusterShape, ZONE};

fn cpu_free(s: &TopologySnapshot, level: usize, path: &[&str]) -> Quantity {
    let tree = s.tree("tas").unwrap();
    let order = tree.level_order(level);
    let slot = order
        .into_iter()
        .find(|slot| {
            tree.path(level, *slot) == path.iter().map(|p| p.to_string()).collect::<Vec<_>>()
        })
        .unwrap();
    let cpu = s.registry().get("cpu").unwrap();
    tree.domain(level, slot).unwrap().free.get(cpu)
}

#[test]
fn only_ready_schedulable_fully_labelled_flavor_nodes_join() {
    let mut s = cluster(&[("h1", "z1", "b1", "r1", 8)]);
    let mut not_ready = synthetic::node("h2", "z1", "b1", "r1", 8);
    not_ready.ready = false;
    let mut cordoned = synthetic::node("h3", "z1", "b1", "r1", 8);
    cordoned.unschedulable = true;
    let unlabelled = relabel(&synthetic::node("h4", "z1", "b1", "r1", 8), RACK, None);
    let other_pool = relabel(
        &synthetic::node("h5", "z1", "b1", "r1", 8),
        "pool",
        Some("cpu"),
    );
    for n in [not_ready, cordoned, unlabelled, other_pool] {
        s.upsert_node(n);
    }
    let tree = s.tree("tas").unwrap();
    assert_eq!(tree.domain_counts(), vec![1, 1, 1, 1]);
    let excluded = tree.exclusion_counts();
    assert_eq!(excluded.get("not ready"), Some(&1));
    assert_eq!(excluded.get("unschedulable"), Some(&1));
    assert_eq!(excluded.get(&format!("missing label {RACK:?}")), Some(&1));
    assert_eq!(
        excluded.values().sum::<u64>(),
        3,
        "a node of another pool is not reported"
    );
}

#[test]
fn leaves_are_lowest_level_domains_without_hostname() {
    let mut s = TopologySnapshot::new();
    s.upsert_topology(crate::engine::topology::model::Topology {
        name: "default".into(),
        levels: vec![ZONE.into(), RACK.into()],
    })
    .unwrap();
    s.upsert_flavor(synthetic::flavor()).unwrap();
    for h in ["a", "b", "c"] {
        s.upsert_node(synthetic::node(h, "z1", "b1", "r1", 4));
    }
    let tree = s.tree("tas").unwrap();
    assert_eq!(tree.domain_counts(), vec![1, 1]);
    let leaf = tree.level_order(1)[0];
    assert_eq!(tree.domain(1, leaf).unwrap().nodes.len(), 3);
}

#[test]
fn events_update_domain_aggregates_along_one_path() {
    let mut s = cluster(&[("h1", "z1", "b1", "r1", 8), ("h2", "z1", "b1", "r2", 8)]);
    assert_eq!(cpu_free(&s, 0, &["z1"]), Quantity::from_units(16));
    s.upsert_pod(pod("p1", "h1", 3, false));
    assert_eq!(
        cpu_free(&s, 2, &["z1", "b1", "r1"]),
        Quantity::from_units(5)
    );
    assert_eq!(cpu_free(&s, 0, &["z1"]), Quantity::from_units(13));
    let mut done = pod("p1", "h1", 3, false);
    done.phase = PodPhase::Succeeded;
    s.upsert_pod(done);
    assert_eq!(cpu_free(&s, 0, &["z1"]), Quantity::from_units(16));
    s.upsert_pod(pod("p2", "h2", 2, false));
    s.remove_pod(&ObjectKey::new("default", "p2"));
    assert_eq!(cpu_free(&s, 0, &["z1"]), Quantity::from_units(16));
    s.remove_node("h2");
    assert_eq!(cpu_free(&s, 0, &["z1"]), Quantity::from_units(8));
    assert_eq!(s.tree("tas").unwrap().domain_counts(), vec![1, 1, 1, 1]);
}

#[test]
fn pods_bound_before_their_node_appears_still_count() {
    let mut s = cluster(&[]);
    s.upsert_pod(pod("early", "h1", 6, false));
    s.upsert_node(synthetic::node("h1", "z1", "b1", "r1", 8));
    assert_eq!(
        cpu_free(&s, 3, &["z1", "b1", "r1", "h1"]),
        Quantity::from_units(2)
    );
}

#[test]
fn node_updates_move_nodes_between_domains_and_in_and_out() {
    let mut s = cluster(&[("h1", "z1", "b1", "r1", 8), ("h2", "z1", "b1", "r1", 8)]);
    let moved = synthetic::node("h2", "z1", "b1", "r9", 8);
    s.upsert_node(moved.clone());
    assert_eq!(
        cpu_free(&s, 2, &["z1", "b1", "r1"]),
        Quantity::from_units(8)
    );
    assert_eq!(
        cpu_free(&s, 2, &["z1", "b1", "r9"]),
        Quantity::from_units(8)
    );
    let mut down = moved;
    down.ready = false;
    s.upsert_node(down.clone());
    assert_eq!(s.tree("tas").unwrap().domain_counts(), vec![1, 1, 1, 1]);
    down.ready = true;
    s.upsert_node(down);
    assert_eq!(s.tree("tas").unwrap().domain_counts(), vec![1, 1, 2, 2]);
}

#[test]
fn any_event_order_gives_the_same_tree() {
    let shape = ClusterShape {
        zones: 2,
        blocks_per_zone: 2,
        racks_per_block: 2,
        hosts_per_rack: 3,
        cpus: 8,
    };
    let nodes = synthetic::nodes(&shape);
    let forward = synthetic::snapshot(&shape).unwrap();
    let mut backward = TopologySnapshot::new();
    backward.upsert_topology(synthetic::topology()).unwrap();
    for n in nodes.iter().rev() {
        backward.upsert_node(n.clone());
    }
    backward.upsert_flavor(synthetic::flavor()).unwrap();
    let (a, b) = (forward.tree("tas").unwrap(), backward.tree("tas").unwrap());
    for level in 0..4 {
        let paths = |t: &crate::engine::topology::tree::FlavorTree| {
            t.level_order(level)
                .into_iter()
                .map(|s| t.path(level, s))
                .collect::<Vec<_>>()
        };
        assert_eq!(paths(a), paths(b));
    }
    let req = cpu_request(10, PlacementMode::Preferred(RACK.into()));
    assert_eq!(
        place(&forward, std::slice::from_ref(&req)).unwrap(),
        place(&backward, &[req]).unwrap()
    );
}

#[test]
fn invalid_topologies_and_flavors_are_refused() {
    let mut s = TopologySnapshot::new();
    let bad = crate::engine::topology::model::Topology {
        name: "t".into(),
        levels: vec![HOST.into(), RACK.into()],
    };
    assert!(
        s.upsert_topology(bad)
            .unwrap_err()
            .to_string()
            .contains("only last")
    );
    let err = s.upsert_flavor(synthetic::flavor()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "ResourceFlavor \"tas\": spec.topologyName \"default\" names no known Topology"
    );
}

mod incremental {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;
    use crate::engine::topology::model::{
        AdmittedPodSetUsage, AdmittedTasUsage, DomainAssignment, DomainList,
    };

    #[derive(Clone, Debug)]
    enum Op {
        Node {
            host: usize,
            rack: usize,
            cpus: i64,
            ready: bool,
        },
        RemoveNode(usize),
        Pod {
            pod: usize,
            host: usize,
            cpus: i64,
            tas: bool,
            done: bool,
        },
        RemovePod(usize),
        Admit {
            workload: usize,
            host: usize,
            count: u32,
        },
        Release(usize),
    }

    fn ops() -> impl Strategy<Value = Vec<Op>> {
        let op = prop_oneof![
            3 => (0..8usize, 0..3usize, 1..16i64, any::<bool>()).prop_map(|(host, rack, cpus, ready)| Op::Node { host, rack, cpus, ready }),
            1 => (0..8usize).prop_map(Op::RemoveNode),
            3 => (0..6usize, 0..8usize, 0..4i64, any::<bool>(), any::<bool>())
                .prop_map(|(pod, host, cpus, tas, done)| Op::Pod { pod, host, cpus, tas, done }),
            1 => (0..6usize).prop_map(Op::RemovePod),
            2 => (0..3usize, 0..8usize, 1..4u32).prop_map(|(workload, host, count)| Op::Admit { workload, host, count }),
            1 => (0..3usize).prop_map(Op::Release),
        ];
        prop::collection::vec(op, 0..40)
    }

    fn usage(workload: usize, host: usize, count: u32) -> AdmittedTasUsage {
        AdmittedTasUsage {
            workload: WorkloadKey::new("ns", format!("w{workload}")),
            pod_sets: vec![AdmittedPodSetUsage {
                flavor: "tas".into(),
                per_pod: resources(&[("cpu", 1)]),
                assignment: DomainList {
                    levels: vec![HOST.into()],
                    domains: vec![DomainAssignment {
                        values: vec![format!("h{host}")],
                        count,
                    }],
                },
            }],
        }
    }

    /// Every domain's path and free CPU and pods, by name.
    fn picture(s: &TopologySnapshot) -> Vec<(usize, Vec<String>, Quantity, Quantity)> {
        let tree = s.tree("tas").unwrap();
        let get = |v: &crate::engine::topology::resources::ResVec, name: &str| {
            s.registry().get(name).map_or(Quantity::ZERO, |r| v.get(r))
        };
        (0..tree.depth())
            .flat_map(|level| {
                tree.level_order(level).into_iter().map(move |slot| {
                    let d = tree.domain(level, slot).unwrap();
                    (
                        level,
                        tree.path(level, slot),
                        get(&d.free, "cpu"),
                        get(&d.free, "pods"),
                    )
                })
            })
            .collect()
    }

    proptest! {
        #[test]
        fn events_match_a_rebuild(ops in ops()) {
            let mut live = cluster(&[]);
            let (mut nodes, mut pods, mut admitted) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
            for op in ops {
                match op {
                    Op::Node { host, rack, cpus, ready } => {
                        let mut n = synthetic::node(&format!("h{host}"), "z1", "b1", &format!("r{rack}"), cpus);
                        n.ready = ready;
                        nodes.insert(host, n.clone());
                        live.upsert_node(n);
                    }
                    Op::RemoveNode(host) => {
                        nodes.remove(&host);
                        live.remove_node(&format!("h{host}"));
                    }
                    Op::Pod { pod: p, host, cpus, tas, done } => {
                        let mut bound = super::pod(&format!("p{p}"), &format!("h{host}"), cpus, tas);
                        if done {
                            bound.phase = PodPhase::Succeeded;
                        }
                        pods.insert(p, bound.clone());
                        live.upsert_pod(bound);
                    }
                    Op::RemovePod(p) => {
                        pods.remove(&p);
                        live.remove_pod(&ObjectKey::new("default", format!("p{p}")));
                    }
                    Op::Admit { workload, host, count } => {
                        admitted.insert(workload, usage(workload, host, count));
                        live.admit(usage(workload, host, count)).unwrap();
                    }
                    Op::Release(workload) => {
                        admitted.remove(&workload);
                        live.release(&WorkloadKey::new("ns", format!("w{workload}")));
                    }
                }
            }
            let mut rebuilt = cluster(&[]);
            for n in nodes.into_values() {
                rebuilt.upsert_node(n);
            }
            for p in pods.into_values() {
                rebuilt.upsert_pod(p);
            }
            for u in admitted.into_values() {
                rebuilt.admit(u).unwrap();
            }
            prop_assert_eq!(picture(&live), picture(&rebuilt));
            let req = cpu_request(5, PlacementMode::Preferred(RACK.into()));
            prop_assert_eq!(place(&live, std::slice::from_ref(&req)), place(&rebuilt, &[req]));
        }
    }
}
