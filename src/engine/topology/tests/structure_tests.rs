//! Tree membership, exclusions and incremental updates.

use super::*;
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
    s.remove_pod("default", "p2");
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
