//! The node-health loop's bookkeeping: what it reports to the admission loop, and when.

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde_json::json;
use tokio::sync::mpsc;

use super::{Change, HealthInput, NodeFailures, NodeHealthTask};
use crate::api::{ObjectKey, Workload};
use crate::clock::Clock;
use crate::controllers::work_queue::{Dirty, Task, WorkQueue};
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

/// A running pod of the Workload `w` bound to `node`.
fn pod(name: &str, node: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "ns",
            "annotations": {"kueue.x-k8s.io/workload": "w"}},
        "spec": {"containers": [{"name": "c"}], "nodeName": node},
        "status": {"phase": "Running"},
    }))
    .unwrap()
}

/// The loop on a manual clock, and what it reports.
struct Health {
    queue: WorkQueue<NodeHealthTask>,
    clock: Clock,
    reports: mpsc::Receiver<NodeFailures>,
}

impl Health {
    /// Takes `input` in at `now`.
    fn take(&mut self, input: HealthInput, now: Timestamp) {
        self.clock.set_wall(now);
        self.queue.take(input);
    }

    /// Whether `input`, taken at `now`, asks to look at any Workload again.
    fn marks(&mut self, input: HealthInput, now: Timestamp) -> bool {
        self.clock.set_wall(now);
        let mut dirty = Dirty::default();
        let reading = self.clock.read();
        self.queue.task_mut().take(input, reading, &mut dirty);
        !dirty.is_empty()
    }

    /// One turn at `now`, its reports sent; returns when a verdict changes next by time alone.
    async fn pass(&mut self, now: Timestamp) -> Option<Timestamp> {
        self.clock.set_wall(now);
        for (key, report) in self.queue.turn() {
            self.queue.task().write(report).await;
            self.queue.answered(key, ());
        }
        self.queue.task().rechecks.values().min().copied()
    }
}

/// The loop with Kueue's gates, its pods one on each host.
fn started() -> Health {
    started_with(FeatureGates::default())
}

/// The loop as Kueue ran before it waited for pods: `TASReplaceNodeOnPodTermination` off.
fn started_with_timer() -> Health {
    started_with("TASReplaceNodeOnPodTermination=false".parse().unwrap())
}

/// The loop as `start` makes it, before any watch has listed.
fn fresh(gates: FeatureGates) -> Health {
    let (reports, received) = mpsc::channel(16);
    let clock = Clock::manual(at(0));
    Health {
        queue: WorkQueue::ungated(NodeHealthTask::new(gates, reports), clock.clone()),
        clock,
        reports: received,
    }
}

fn started_with(gates: FeatureGates) -> Health {
    let mut health = fresh(gates);
    health.take(
        HealthInput::Pod(Change::Reset(vec![pod("p1", "h1"), pod("p2", "h2")])),
        at(0),
    );
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
    health
}

#[tokio::test]
async fn a_node_not_ready_is_reported_once_after_the_delay_and_withdrawn_when_ready() {
    let mut health = started_with_timer();
    assert_eq!(health.pass(at(1)).await, None);
    health.take(
        HealthInput::Node(Change::Apply(Box::new(node("h2", false, 5)))),
        at(5),
    );
    assert_eq!(health.pass(at(6)).await, Some(at(35)));
    assert!(health.reports.try_recv().is_err());
    assert_eq!(health.pass(at(35)).await, None);
    let failed = vec![FailedNode {
        name: "h2".into(),
        since: at(35),
    }];
    assert_eq!(
        health.reports.try_recv().unwrap(),
        NodeFailures {
            workload: ObjectKey::new("ns", "w"),
            failed
        }
    );
    health.pass(at(40)).await;
    assert!(health.reports.try_recv().is_err(), "reported once");
    health.take(
        HealthInput::Node(Change::Apply(Box::new(node("h2", true, 41)))),
        at(41),
    );
    health.pass(at(41)).await;
    assert_eq!(health.reports.try_recv().unwrap().failed, Vec::new());
}

#[tokio::test]
async fn a_node_back_within_the_delay_is_never_reported() {
    let mut health = started_with_timer();
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
    assert!(health.reports.try_recv().is_err());
}

#[tokio::test]
async fn a_deleted_node_is_reported_at_once() {
    let mut health = started();
    health.take(
        HealthInput::Node(Change::Delete(Box::new(node("h1", true, 0)))),
        at(7),
    );
    health.pass(at(8)).await;
    let report = health.reports.try_recv().unwrap();
    assert_eq!(
        report.failed,
        vec![FailedNode {
            name: "h1".into(),
            since: at(7)
        }]
    );
}

#[tokio::test]
async fn a_node_not_ready_is_reported_once_the_workloads_pod_there_has_stopped() {
    let mut health = started();
    health.take(
        HealthInput::Node(Change::Apply(Box::new(node("h2", false, 5)))),
        at(5),
    );
    // Long past the old 30 s timer: the pod may still run there, and nothing is due at a time.
    assert_eq!(health.pass(at(600)).await, None);
    assert!(health.reports.try_recv().is_err());
    let mut stopped = pod("p2", "h2");
    if let Some(status) = stopped.status.as_mut() {
        status.phase = Some("Failed".into());
    }
    health.take(HealthInput::Pod(Change::Apply(Box::new(stopped))), at(601));
    health.pass(at(601)).await;
    assert_eq!(
        health.reports.try_recv().unwrap(),
        NodeFailures {
            workload: ObjectKey::new("ns", "w"),
            failed: vec![FailedNode {
                name: "h2".into(),
                since: at(5)
            }],
        }
    );
}

#[tokio::test]
async fn the_pods_must_be_listed_first_unless_no_rule_reads_them() {
    let without = fresh(
        "TASReplaceNodeOnPodTermination=false,TASReplaceNodeOnNodeTaints=false"
            .parse()
            .unwrap(),
    );
    assert!(without.queue.task().listed[3], "no pod watch to wait for");
    let mut health = fresh(FeatureGates::default());
    health.take(
        HealthInput::Node(Change::Reset(vec![
            node("h1", false, 0),
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
    assert!(
        !health.queue.task().listed(),
        "the pods have not been listed"
    );
    health.take(
        HealthInput::Pod(Change::Reset(vec![pod("p1", "h1")])),
        at(1),
    );
    assert!(health.queue.task().listed());
    health.pass(at(1)).await;
    assert!(health.reports.try_recv().is_err(), "p1 still runs on h1");
}

/// A pod change that leaves where the Workload's pods progress as it was needs no pass.
#[test]
fn only_a_pod_change_that_moves_progress_asks_for_a_pass() {
    let mut health = started();
    let again = HealthInput::Pod(Change::Apply(Box::new(pod("p1", "h1"))));
    assert!(!health.marks(again, at(1)));
    let mut done = pod("p1", "h1");
    if let Some(status) = done.status.as_mut() {
        status.phase = Some("Succeeded".into());
    }
    assert!(health.marks(HealthInput::Pod(Change::Apply(Box::new(done))), at(2)));
    let node = HealthInput::Node(Change::Apply(Box::new(node("h1", true, 0))));
    assert!(health.marks(node, at(3)), "other changes always do");
}
