use super::*;
use crate::engine::model::{
    ClusterQueue, EngineConfig, FlavorQuotas, LocalQueue, Namespace, PodSet, ResourceFlavor,
    ResourceGroup, ResourceQuota, Snapshot, StopPolicy,
};
use crate::engine::quantity::Quantity;
use crate::small_map::SmallMap;

fn workload(queue: &str, name: &str, priority: i32, creation: i64) -> Workload {
    Workload {
        namespace: "ns".into(),
        name: name.into(),
        uid: format!("uid-{name}"),
        queue_name: queue.into(),
        priority,
        creation,
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

fn local_queue(name: &str, cluster_queue: &str) -> LocalQueue {
    LocalQueue {
        namespace: "ns".into(),
        name: name.into(),
        cluster_queue: cluster_queue.into(),
        ..Default::default()
    }
}

/// ClusterQueue `cq` with no quota, so nothing is admitted; LocalQueues `a` and `b` point at it,
/// `orphan` at a ClusterQueue that does not exist, `held` is stopped.
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
                    resources: vec![ResourceQuota::nominal("cpu", Quantity::from_units(0))],
                }],
            }],
            namespace_selector: Some(Default::default()),
            ..Default::default()
        }],
        local_queues: vec![
            local_queue("a", "cq"),
            local_queue("b", "cq"),
            local_queue("orphan", "missing"),
            LocalQueue {
                stop_policy: StopPolicy::Hold,
                ..local_queue("held", "cq")
            },
        ],
        namespaces: vec![Namespace {
            name: "ns".into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let mut engine = Engine::new(&snapshot, EngineConfig::default()).unwrap();
    for w in [
        workload("a", "a-old-low", 1, 10),
        workload("b", "b-high", 5, 30),
        workload("a", "a-new-low", 1, 20),
        workload("b", "b-low", 1, 15),
        workload("a", "a-high", 5, 40),
        workload("held", "held-high", 9, 1),
        workload("orphan", "orphan", 9, 1),
    ] {
        engine.upsert_workload(w).unwrap();
    }
    engine.run_until_stable();
    engine
}

const ALL: Window = Window {
    offset: 0,
    limit: usize::MAX,
};

/// (name, position in ClusterQueue, position in LocalQueue).
fn places(list: &[PendingPlace<'_>]) -> Vec<(String, usize, usize)> {
    list.iter()
        .map(|p| {
            (
                p.workload.name.clone(),
                p.position_in_cluster_queue,
                p.position_in_local_queue,
            )
        })
        .collect()
}

fn entry(name: &str, in_cq: usize, in_lq: usize) -> (String, usize, usize) {
    (name.to_string(), in_cq, in_lq)
}

#[test]
fn a_cluster_queue_lists_by_priority_then_time_with_local_places() {
    let mut engine = engine();
    let list = engine
        .pending_window(QueueRef::Cluster("cq"), ALL, &[])
        .unwrap();
    assert_eq!(
        places(&list),
        vec![
            entry("b-high", 0, 0),
            entry("a-high", 1, 0),
            entry("a-old-low", 2, 1),
            entry("b-low", 3, 1),
            entry("a-new-low", 4, 2),
        ],
        "the stopped LocalQueue's Workload cannot queue and is not listed"
    );
}

#[test]
fn a_cluster_queue_window_keeps_places_counted_from_the_start() {
    let mut engine = engine();
    let window = Window {
        offset: 2,
        limit: 2,
    };
    let list = engine
        .pending_window(QueueRef::Cluster("cq"), window, &[])
        .unwrap();
    assert_eq!(
        places(&list),
        vec![entry("a-old-low", 2, 1), entry("b-low", 3, 1)]
    );
    let none = Window {
        offset: 0,
        limit: 0,
    };
    assert!(
        engine
            .pending_window(QueueRef::Cluster("cq"), none, &[])
            .unwrap()
            .is_empty()
    );
    let past = Window {
        offset: 9,
        limit: 5,
    };
    assert!(
        engine
            .pending_window(QueueRef::Cluster("cq"), past, &[])
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_local_queue_window_counts_its_own_entries() {
    let mut engine = engine();
    let a = ObjectKey::new("ns", "a");
    let list = engine
        .pending_window(QueueRef::Local(&a), ALL, &[])
        .unwrap();
    assert_eq!(
        places(&list),
        vec![
            entry("a-high", 1, 0),
            entry("a-old-low", 2, 1),
            entry("a-new-low", 4, 2)
        ]
    );
    let window = Window {
        offset: 1,
        limit: 1,
    };
    let list = engine
        .pending_window(QueueRef::Local(&a), window, &[])
        .unwrap();
    assert_eq!(places(&list), vec![entry("a-old-low", 2, 1)]);
}

#[test]
fn unknown_queues_are_told_apart_from_empty_ones() {
    let mut engine = engine();
    assert_eq!(
        engine.pending_window(QueueRef::Cluster("nope"), ALL, &[]),
        Err(UnknownQueue::ClusterQueue)
    );
    let nope = ObjectKey::new("ns", "nope");
    assert_eq!(
        engine.pending_window(QueueRef::Local(&nope), ALL, &[]),
        Err(UnknownQueue::LocalQueue)
    );
    let orphan = ObjectKey::new("ns", "orphan");
    assert_eq!(
        engine.pending_window(QueueRef::Local(&orphan), ALL, &[]),
        Ok(Vec::new())
    );
}

#[test]
fn an_admitted_workload_leaves_the_list() {
    let mut engine = engine();
    engine
        .upsert_cluster_queue(ClusterQueue {
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
        })
        .unwrap();
    let head = engine
        .pending_window(QueueRef::Cluster("cq"), ALL, &[])
        .unwrap()[0]
        .workload
        .name
        .clone();
    engine.run_until_stable();
    let list = engine
        .pending_window(QueueRef::Cluster("cq"), ALL, &[])
        .unwrap();
    assert_eq!(head, "b-high");
    assert_eq!(
        places(&list)[0],
        entry("a-high", 0, 0),
        "the head shown is the one admitted"
    );
    assert_eq!(list.len(), 4);
}

#[test]
fn workloads_waiting_out_a_backoff_are_listed_in_their_places() {
    let mut engine = engine();
    let backing_off = [
        // Between b-high (5, 30) and a-high (5, 40).
        workload("b", "b-back", 5, 35),
        // Last: lowest priority.
        workload("a", "a-back", 0, 1),
        // Its LocalQueue is stopped: it cannot queue, backoff or not.
        workload("held", "held-back", 9, 1),
        // Deactivated.
        Workload {
            active: false,
            ..workload("a", "inactive-back", 9, 1)
        },
    ];
    let list = engine
        .pending_window(QueueRef::Cluster("cq"), ALL, &backing_off)
        .unwrap();
    assert_eq!(
        places(&list),
        vec![
            entry("b-high", 0, 0),
            entry("b-back", 1, 1),
            entry("a-high", 2, 0),
            entry("a-old-low", 3, 1),
            entry("b-low", 4, 2),
            entry("a-new-low", 5, 2),
            entry("a-back", 6, 3),
        ]
    );
    let b = ObjectKey::new("ns", "b");
    let list = engine
        .pending_window(QueueRef::Local(&b), ALL, &backing_off)
        .unwrap();
    assert_eq!(
        places(&list),
        vec![
            entry("b-high", 0, 0),
            entry("b-back", 1, 1),
            entry("b-low", 4, 2)
        ]
    );
}
