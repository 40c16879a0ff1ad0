//! The node-health loop's bookkeeping: what it reports to the admission loop, and when.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde_json::json;
use tokio::sync::mpsc;

use super::{Change, HealthInput, NodeFailures, NodeHealthLoop};
use crate::api::Workload;
use crate::engine::features::FeatureGates;
use crate::engine::topology::node_failure::FailedNode;

fn at(seconds: i64) -> Timestamp {
    Timestamp::UNIX_EPOCH + SignedDuration::from_secs(1_000_000 + seconds)
}

fn node(name: &str, ready: bool, since: i64) -> Node {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" },
            "lastTransitionTime": at(since).to_string()}]},
    }))
    .unwrap()
}

fn workload() -> Workload {
    serde_json::from_value(json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"queueName": "q", "podSets": [{"name": "main", "count": 2,
            "template": {"spec": {"containers": [{"name": "c"}]}}}]},
        "status": {
            "conditions": [{"type": "Admitted", "status": "True", "reason": "Admitted",
                "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
            "admission": {"clusterQueue": "cq", "podSetAssignments": [{
                "name": "main", "count": 2, "flavors": {"cpu": "tas"},
                "topologyAssignment": {"levels": ["kubernetes.io/hostname"], "slices": [{
                    "domainCount": 2,
                    "valuesPerLevel": [{"individual": {"prefix": "h", "roots": ["1", "2"]}}],
                    "podCounts": {"universal": 1},
                }]},
            }]},
        },
    }))
    .unwrap()
}

fn started() -> (NodeHealthLoop, mpsc::Receiver<NodeFailures>) {
    let (reports, received) = mpsc::channel(16);
    let mut health = NodeHealthLoop {
        gates: FeatureGates::default(),
        reports,
        nodes: BTreeMap::new(),
        gone: BTreeMap::new(),
        flavors: BTreeMap::new(),
        workloads: BTreeMap::new(),
        reported: BTreeMap::new(),
        listed: [false; 3],
    };
    health.take(
        HealthInput::Node(Change::Reset(vec![
            node("h1", true, 0),
            node("h2", true, 0),
        ])),
        at(0),
    );
    health.take(
        HealthInput::Workload(Change::Reset(vec![std::sync::Arc::new(workload())])),
        at(0),
    );
    health.take(
        HealthInput::ResourceFlavor(Change::Reset(Vec::new())),
        at(0),
    );
    (health, received)
}

#[tokio::test]
async fn a_node_not_ready_is_reported_once_after_the_delay_and_withdrawn_when_ready() {
    let (mut health, mut reports) = started();
    assert_eq!(health.pass(at(1)).await, None);
    health.take(
        HealthInput::Node(Change::Apply(Box::new(node("h2", false, 5)))),
        at(5),
    );
    assert_eq!(health.pass(at(6)).await, Some(at(35)));
    assert!(reports.try_recv().is_err());
    assert_eq!(health.pass(at(35)).await, None);
    let failed = vec![FailedNode {
        name: "h2".into(),
        since: at(35),
    }];
    assert_eq!(
        reports.try_recv().unwrap(),
        NodeFailures {
            workload: "ns/w".into(),
            failed
        }
    );
    health.pass(at(40)).await;
    assert!(reports.try_recv().is_err(), "reported once");
    health.take(
        HealthInput::Node(Change::Apply(Box::new(node("h2", true, 41)))),
        at(41),
    );
    health.pass(at(41)).await;
    assert_eq!(reports.try_recv().unwrap().failed, Vec::new());
}

#[tokio::test]
async fn a_node_back_within_the_delay_is_never_reported() {
    let (mut health, mut reports) = started();
    health.take(
        HealthInput::Node(Change::Apply(Box::new(node("h1", false, 0)))),
        at(0),
    );
    assert_eq!(health.pass(at(0)).await, Some(at(30)));
    health.take(
        HealthInput::Node(Change::Apply(Box::new(node("h1", true, 20)))),
        at(20),
    );
    assert_eq!(health.pass(at(20)).await, None);
    assert_eq!(health.pass(at(31)).await, None);
    assert!(reports.try_recv().is_err());
}

#[tokio::test]
async fn a_deleted_node_is_reported_at_once() {
    let (mut health, mut reports) = started();
    health.take(
        HealthInput::Node(Change::Delete(Box::new(node("h1", true, 0)))),
        at(7),
    );
    health.pass(at(8)).await;
    let report = reports.try_recv().unwrap();
    assert_eq!(
        report.failed,
        vec![FailedNode {
            name: "h1".into(),
            since: at(7)
        }]
    );
}
