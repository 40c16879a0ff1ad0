//! When an assigned node counts as failed: the Ready delay, deletion, taints, and the workloads
//! the detection looks at.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Taint, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde_json::json;

use crate::api::Workload;
use crate::engine::features::FeatureGates;
use crate::engine::topology::node_failure::{
    AssignedPodSet, FailedNode, NodeFacts, NodeHealth, NodeLookup, PodsOnNode, ReadyCondition,
    assigned_pod_sets, node_health, workload_nodes,
};

use PodsOnNode::{Progressing, Stopped};

fn at(seconds: i64) -> Timestamp {
    Timestamp::UNIX_EPOCH + SignedDuration::from_secs(1_000_000 + seconds)
}

fn node(name: &str, ready: bool, since: i64) -> NodeFacts {
    NodeFacts {
        name: name.into(),
        ready: Some(ReadyCondition {
            ready,
            since: at(since),
        }),
        taints: Vec::new(),
        unschedulable: false,
        seen_at: at(since),
    }
}

fn taint(key: &str, effect: &str) -> Taint {
    Taint {
        key: key.into(),
        effect: effect.into(),
        ..Taint::default()
    }
}

fn gates(spec: &str) -> FeatureGates {
    spec.parse().unwrap()
}

/// Kueue's behaviour before it waited for pods: `TASReplaceNodeOnPodTermination` off.
fn timer_only() -> FeatureGates {
    gates("TASReplaceNodeOnPodTermination=false")
}

#[test]
fn without_waiting_for_pods_a_not_ready_node_fails_thirty_seconds_after_the_transition() {
    let down = node("h1", false, 0);
    let g = timer_only();
    let health = |now| node_health(NodeLookup::Present(&down), &[], Progressing, &g, at(now));
    assert_eq!(health(0), NodeHealth::FailsAt(at(30)));
    assert_eq!(health(29), NodeHealth::FailsAt(at(30)));
    assert_eq!(health(30), NodeHealth::Failed { since: at(30) });
    assert_eq!(health(95), NodeHealth::Failed { since: at(30) });
}

#[test]
fn a_not_ready_node_fails_once_the_workloads_pods_there_have_stopped() {
    let down = node("h1", false, 0);
    let g = FeatureGates::default();
    let health = |pods, now| node_health(NodeLookup::Present(&down), &[], pods, &g, at(now));
    // Past Kueue's old 30 s timer, the pods may still run on a node that stopped reporting.
    assert_eq!(health(Progressing, 5), NodeHealth::WaitingForPods);
    assert_eq!(health(Progressing, 3600), NodeHealth::WaitingForPods);
    assert_eq!(health(Stopped, 5), NodeHealth::Failed { since: at(0) });
}

#[test]
fn the_deprecated_fixed_time_gate_adds_the_timer_beside_the_wait_for_pods() {
    let down = node("h1", false, 0);
    let g = gates("TASReplaceNodeDueToNotReadyOverFixedTime=true");
    let health = |pods, now| node_health(NodeLookup::Present(&down), &[], pods, &g, at(now));
    assert_eq!(health(Progressing, 10), NodeHealth::FailsAt(at(30)));
    assert_eq!(
        health(Progressing, 31),
        NodeHealth::Failed { since: at(30) }
    );
    assert_eq!(health(Stopped, 10), NodeHealth::Failed { since: at(0) });
}

#[test]
fn a_node_ready_again_before_the_delay_is_healthy() {
    let back = node("h1", true, 20);
    for g in [FeatureGates::default(), timer_only()] {
        assert_eq!(
            node_health(NodeLookup::Present(&back), &[], Stopped, &g, at(25)),
            NodeHealth::Healthy
        );
    }
}

#[test]
fn a_deleted_unknown_or_conditionless_node_fails_at_once_whatever_its_pods_do() {
    let g = FeatureGates::default();
    let gone = NodeLookup::Gone {
        name: "h1",
        since: at(3),
    };
    assert_eq!(
        node_health(gone, &[], Progressing, &g, at(4)),
        NodeHealth::Failed { since: at(3) }
    );
    assert_eq!(
        node_health(NodeLookup::Unknown, &[], Progressing, &g, at(4)),
        NodeHealth::Failed { since: at(4) }
    );
    let mut bare = node("h1", true, 2);
    bare.ready = None;
    assert_eq!(
        node_health(NodeLookup::Present(&bare), &[], Progressing, &g, at(4)),
        NodeHealth::Failed { since: at(2) }
    );
}

#[test]
fn an_untolerated_taint_fails_a_ready_node_only_with_the_taints_gate() {
    let mut tainted = node("h1", true, 0);
    tainted.seen_at = at(7);
    tainted.taints = vec![
        taint("maintenance", "NoExecute"),
        taint("soft", "PreferNoSchedule"),
    ];
    let lookup = NodeLookup::Present(&tainted);
    let g = FeatureGates::default();
    assert_eq!(
        node_health(lookup, &[], Stopped, &g, at(8)),
        NodeHealth::Failed { since: at(7) }
    );
    // By default the pods still running there are waited for; without that, it fails at once.
    assert_eq!(
        node_health(lookup, &[], Progressing, &g, at(8)),
        NodeHealth::WaitingForPods
    );
    assert_eq!(
        node_health(lookup, &[], Progressing, &timer_only(), at(8)),
        NodeHealth::Failed { since: at(7) }
    );
    assert_eq!(
        node_health(
            lookup,
            &[],
            Stopped,
            &gates("TASReplaceNodeOnNodeTaints=false"),
            at(8)
        ),
        NodeHealth::Healthy
    );
    let tolerated = Toleration {
        key: Some("maintenance".into()),
        operator: Some("Exists".into()),
        ..Toleration::default()
    };
    assert_eq!(
        node_health(lookup, &[tolerated], Stopped, &g, at(8)),
        NodeHealth::Healthy
    );
}

#[test]
fn a_taint_tolerated_only_for_a_while_fails_once_the_pods_stop() {
    let mut tainted = node("h1", true, 0);
    tainted.seen_at = at(7);
    tainted.taints = vec![taint("maintenance", "NoExecute")];
    let lookup = NodeLookup::Present(&tainted);
    let for_a_while = Toleration {
        key: Some("maintenance".into()),
        operator: Some("Exists".into()),
        toleration_seconds: Some(300),
        ..Toleration::default()
    };
    for g in [FeatureGates::default(), timer_only()] {
        assert_eq!(
            node_health(
                lookup,
                std::slice::from_ref(&for_a_while),
                Progressing,
                &g,
                at(8)
            ),
            NodeHealth::WaitingForPods
        );
        assert_eq!(
            node_health(
                lookup,
                std::slice::from_ref(&for_a_while),
                Stopped,
                &g,
                at(8)
            ),
            NodeHealth::Failed { since: at(7) }
        );
    }
    let for_good = Toleration {
        toleration_seconds: None,
        ..for_a_while.clone()
    };
    assert_eq!(
        node_health(
            lookup,
            &[for_a_while, for_good],
            Stopped,
            &FeatureGates::default(),
            at(8)
        ),
        NodeHealth::Healthy
    );
}

#[test]
fn a_taint_records_when_it_was_added() {
    let mut tainted = node("h1", true, 0);
    let mut added = taint("maintenance", "NoSchedule");
    added.time_added = Some(Time(at(5)));
    tainted.taints = vec![added];
    tainted.seen_at = at(6);
    assert_eq!(
        node_health(
            NodeLookup::Present(&tainted),
            &[],
            Stopped,
            &FeatureGates::default(),
            at(9)
        ),
        NodeHealth::Failed { since: at(5) }
    );
}

#[test]
fn a_cordoned_node_counts_as_tainted_unschedulable() {
    let mut cordoned = node("h1", true, 0);
    cordoned.unschedulable = true;
    assert!(matches!(
        node_health(
            NodeLookup::Present(&cordoned),
            &[],
            Stopped,
            &FeatureGates::default(),
            at(1)
        ),
        NodeHealth::Failed { .. }
    ));
}

#[test]
fn the_readiness_taints_are_judged_through_ready() {
    // Ready again, while the lifecycle controller has not removed its taint yet.
    let mut back = node("h1", true, 10);
    back.taints = vec![taint("node.kubernetes.io/not-ready", "NoExecute")];
    assert_eq!(
        node_health(
            NodeLookup::Present(&back),
            &[],
            Stopped,
            &FeatureGates::default(),
            at(11)
        ),
        NodeHealth::Healthy
    );
    let mut down = node("h1", false, 10);
    down.taints = vec![taint("node.kubernetes.io/unreachable", "NoSchedule")];
    let lookup = NodeLookup::Present(&down);
    assert_eq!(
        node_health(lookup, &[], Progressing, &timer_only(), at(11)),
        NodeHealth::FailsAt(at(40))
    );
    assert_eq!(
        node_health(lookup, &[], Progressing, &FeatureGates::default(), at(11)),
        NodeHealth::WaitingForPods
    );
}

#[test]
fn a_workload_collects_every_failed_node_once_and_the_next_deadline() {
    let nodes = BTreeMap::from([
        ("h1".to_string(), node("node-1", false, 0)),
        ("h2".to_string(), node("node-2", false, 20)),
        ("h3".to_string(), node("node-3", true, 0)),
    ]);
    let pod_sets = vec![
        AssignedPodSet {
            name: "a".into(),
            hosts: vec!["h1".into(), "h2".into(), "h3".into()],
            tolerations: Vec::new(),
        },
        AssignedPodSet {
            name: "b".into(),
            hosts: vec!["h1".into(), "h4".into()],
            tolerations: Vec::new(),
        },
    ];
    let lookup = |host: &str| match nodes.get(host) {
        Some(n) => NodeLookup::Present(n),
        None if host == "h4" => NodeLookup::Gone {
            name: "node-4",
            since: at(35),
        },
        None => NodeLookup::Unknown,
    };
    // The workload's pods have stopped on node-1 and still run on node-2.
    let pods = |name: &str| {
        if name == "node-2" {
            Progressing
        } else {
            Stopped
        }
    };
    let found = workload_nodes(&pod_sets, lookup, pods, &FeatureGates::default(), at(40));
    assert_eq!(
        found.failed,
        vec![
            FailedNode {
                name: "node-1".into(),
                since: at(0)
            },
            FailedNode {
                name: "node-4".into(),
                since: at(35)
            },
        ]
    );
    assert_eq!(found.recheck_at, None);
    let timed = workload_nodes(&pod_sets, lookup, pods, &timer_only(), at(40));
    assert_eq!(
        timed.failed,
        vec![
            FailedNode {
                name: "node-1".into(),
                since: at(30)
            },
            FailedNode {
                name: "node-4".into(),
                since: at(35)
            },
        ]
    );
    assert_eq!(timed.recheck_at, Some(at(50)));
    let off = workload_nodes(
        &pod_sets,
        lookup,
        pods,
        &gates("TASFailedNodeReplacement=false"),
        at(40),
    );
    assert!(off.failed.is_empty() && off.recheck_at.is_none());
}

fn workload(conditions: serde_json::Value, levels: serde_json::Value) -> Workload {
    serde_json::from_value(json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"queueName": "q", "podSets": [{
            "name": "main", "count": 2,
            "template": {"spec": {
                "containers": [{"name": "c"}],
                "tolerations": [{"key": "own", "operator": "Exists"}],
            }},
        }]},
        "status": {
            "conditions": conditions,
            "admission": {"clusterQueue": "cq", "podSetAssignments": [{
                "name": "main", "count": 2, "flavors": {"cpu": "tas"},
                "topologyAssignment": {"levels": levels, "slices": [{
                    "domainCount": 2,
                    "valuesPerLevel": [{"individual": {"prefix": "h", "roots": ["1", "2"]}}],
                    "podCounts": {"universal": 1},
                }]},
            }]},
        },
    }))
    .unwrap()
}

fn condition(type_: &str, status: &str) -> serde_json::Value {
    json!({"type": type_, "status": status, "reason": "R", "message": "",
           "lastTransitionTime": "2026-01-01T00:00:00Z"})
}

#[test]
fn an_admitted_workload_shows_its_hosts_and_tolerations() {
    let flavors = BTreeMap::from([(
        "tas".to_string(),
        vec![Toleration {
            key: Some("flavor".into()),
            operator: Some("Exists".into()),
            ..Toleration::default()
        }],
    )]);
    let admitted = workload(
        json!([condition("Admitted", "True")]),
        json!(["kubernetes.io/hostname"]),
    );
    let found = assigned_pod_sets(&admitted, &flavors).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].hosts, vec!["h1", "h2"]);
    let keys: Vec<_> = found[0]
        .tolerations
        .iter()
        .filter_map(|t| t.key.clone())
        .collect();
    assert_eq!(keys, vec!["own", "flavor"]);
}

#[test]
fn finished_evicted_unadmitted_or_non_host_workloads_are_not_watched() {
    let hosts = json!(["kubernetes.io/hostname"]);
    let cases = [
        workload(json!([condition("Admitted", "False")]), hosts.clone()),
        workload(
            json!([condition("Admitted", "True"), condition("Finished", "True")]),
            hosts.clone(),
        ),
        workload(
            json!([condition("Admitted", "True"), condition("Evicted", "True")]),
            hosts,
        ),
        workload(
            json!([condition("Admitted", "True")]),
            json!(["cloud.provider.com/topology-rack"]),
        ),
    ];
    for case in cases {
        assert!(
            assigned_pod_sets(&case, &BTreeMap::new())
                .unwrap()
                .is_empty()
        );
    }
}

/// A snapshot (`kuota simulate`) judges a node as failure detection does long after it came to
/// look so, with the pods stopped: a taint tolerated only for a while fails it, a readiness taint
/// on a Ready node does not, and a NotReady node fails with or without the wait for pods.
#[test]
fn a_snapshot_judges_nodes_by_the_same_rule() {
    use crate::engine::topology::model::Node;
    use crate::engine::topology::node_health::node_failed;
    let snapshot_node = |ready: bool, taints: Vec<Taint>| Node {
        name: "h1".into(),
        ready,
        taints,
        ..Node::default()
    };
    let for_a_while = Toleration {
        key: Some("maintenance".into()),
        operator: Some("Exists".into()),
        toleration_seconds: Some(300),
        ..Toleration::default()
    };
    let g = FeatureGates::default();
    let tainted = snapshot_node(true, vec![taint("maintenance", "NoExecute")]);
    assert!(node_failed(
        Some(&tainted),
        std::slice::from_ref(&for_a_while),
        &g
    ));
    let lingering = snapshot_node(
        true,
        vec![taint("node.kubernetes.io/not-ready", "NoExecute")],
    );
    assert!(!node_failed(Some(&lingering), &[], &g));
    let down = snapshot_node(false, Vec::new());
    assert!(node_failed(Some(&down), &[], &g));
    assert!(node_failed(Some(&down), &[], &timer_only()));
    assert!(node_failed(None, &[], &g));
}
