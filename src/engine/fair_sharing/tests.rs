use super::*;
use crate::engine::compile::compile_valid;
use crate::engine::model::{
    ClusterQueue, Cohort, EngineConfig, FlavorQuotas, ResourceGroup, ResourceQuota, Snapshot,
};
use crate::engine::resources::FlavorResource;
use crate::engine::topology_placer::NoTopologyConstraints;

fn group(flavor: &str, cpu: i64, memory: i64) -> Vec<ResourceGroup> {
    vec![ResourceGroup {
        covered_resources: vec!["cpu".into(), "memory".into()],
        flavors: vec![FlavorQuotas {
            name: flavor.into(),
            resources: vec![
                ResourceQuota::nominal("cpu", Quantity::from_units(cpu)),
                ResourceQuota::nominal("memory", Quantity::from_units(memory)),
            ],
        }],
    }]
}

#[test]
fn dominant_share_takes_the_most_borrowed_resource_over_its_weight() {
    let queue = |name: &str, weight: Option<i64>| ClusterQueue {
        name: name.into(),
        cohort: Some("pool".into()),
        resource_groups: group("f", 0, 0),
        fair_sharing_weight: weight.map(Quantity::from_units),
        ..Default::default()
    };
    let snapshot = Snapshot {
        cluster_queues: vec![queue("a", None), queue("b", Some(2)), queue("z", Some(0))],
        cohorts: vec![Cohort {
            name: "pool".into(),
            resource_groups: group("f", 10, 100),
            ..Default::default()
        }],
        ..Default::default()
    };
    let mut c = compile_valid(snapshot);
    let config = EngineConfig::default();
    let (cpu, memory) = (FlavorResource(0), FlavorResource(1));
    for node in [NodeId(0), NodeId(1), NodeId(2)] {
        c.tree.add_usage(node, cpu, Quantity::from_units(2));
        c.tree.add_usage(node, memory, Quantity::from_units(50));
    }
    let world = World {
        names: &c.names,
        flavors: &c.flavors,
        cqs: &c.cqs,
        queues: &c.queues,
        workloads: &c.workloads,
        config: &config,
        placer: &NoTopologyConstraints,
        cohort_weights: &c.cohort_weights,
        tree_cqs_by_root: &c.tree_cqs,
        cycle: 0,
    };
    // memory: 50 of 100 lendable = 500 beats cpu: 2 of 10 = 200.
    assert_eq!(dominant_share(&world, &c.tree, NodeId(0)), 500.0);
    assert_eq!(dominant_share(&world, &c.tree, NodeId(1)), 250.0);
    assert_eq!(dominant_share(&world, &c.tree, NodeId(2)), f64::INFINITY);
    assert_eq!(dominant_share(&world, &c.tree, NodeId(3)), 0.0);
}
