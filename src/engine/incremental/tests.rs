use super::*;
use crate::engine::model::{
    ClusterQueue, EngineConfig, FlavorQuotas, LocalQueue, Namespace, PodSet, ResourceFlavor,
    ResourceGroup, ResourceQuota, Snapshot,
};
use crate::engine::quantity::Quantity;
use crate::small_map::SmallMap;

fn workload(name: &str, priority: i32) -> Workload {
    Workload {
        namespace: "ns".into(),
        name: name.into(),
        uid: format!("uid-{name}"),
        queue_name: "lq".into(),
        priority,
        creation: 1,
        active: true,
        pod_sets: vec![PodSet {
            name: "main".into(),
            count: 1,
            requests: SmallMap::from([("cpu".to_string(), Quantity::from_units(1))]),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn engine() -> Engine {
    let snapshot = Snapshot {
        resource_flavors: vec![ResourceFlavor {
            name: "default".into(),
            ..Default::default()
        }],
        cluster_queues: vec![ClusterQueue {
            name: "cq".into(),
            resource_groups: vec![ResourceGroup {
                covered_resources: vec!["cpu".into()],
                flavors: vec![FlavorQuotas {
                    name: "default".into(),
                    resources: vec![ResourceQuota::nominal("cpu", Quantity::from_units(1))],
                }],
            }],
            namespace_selector: Some(Default::default()),
            ..Default::default()
        }],
        local_queues: vec![LocalQueue {
            namespace: "ns".into(),
            name: "lq".into(),
            cluster_queue: "cq".into(),
            ..Default::default()
        }],
        namespaces: vec![Namespace {
            name: "ns".into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    Engine::new(&snapshot, EngineConfig::default()).unwrap()
}

/// Every change of a workload leaves its old slot behind until the next re-index; the slot must
/// not keep the workload's pod sets, requests or reasons alive meanwhile.
#[test]
fn a_replaced_workload_leaves_an_empty_slot_behind() {
    let mut engine = engine();
    for priority in 0..5 {
        engine.upsert_workload(workload("w", priority)).unwrap();
    }
    engine.upsert_workload(workload("other", 0)).unwrap();
    engine.remove_workload(&WorkloadKey::new("ns", "other"));
    let removed: Vec<&Wl> = engine.c.workloads.iter().filter(|w| w.removed).collect();
    assert_eq!(removed.len(), 5);
    for slot in removed {
        assert_eq!(slot.model, Workload::default());
        assert!(slot.per_pod.is_empty());
        assert!(slot.blocked.is_none() && slot.holding.is_none());
    }
    let live = engine.workload(&WorkloadKey::new("ns", "w")).unwrap();
    assert_eq!(live.priority, 4);
    assert_eq!(live.pod_sets.len(), 1);
}
