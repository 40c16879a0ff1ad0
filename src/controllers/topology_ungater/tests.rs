//! The ungater as a loop: the pods of a TAS Workload of any kind are released once this replica
//! leads, with no job integration running beside it, and a pod whose release is in flight is not
//! sent twice.

use k8s_openapi::api::core::v1::Node;
use kube::Client;
use serde_json::json;

use super::*;
use crate::api::Workload;
use crate::controllers::leader::Tenure;

/// A JobSet's Workload admitted on host h1 for both its pods.
fn workload() -> Workload {
    serde_json::from_value(json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
        "metadata": {"name": "jobset-train-1a2b3", "namespace": "ml", "resourceVersion": "9",
            "ownerReferences": [{"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                "name": "train", "uid": "uid-train", "controller": true}]},
        "spec": {"queueName": "lq", "podSets": [{"name": "workers", "count": 2,
            "template": {"spec": {"containers": [{"name": "c"}]}},
            "topologyRequest": {"required": "kubernetes.io/hostname"}}]},
        "status": {
            "conditions": [{"type": "Admitted", "status": "True", "reason": "Admitted",
                "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
            "admission": {"clusterQueue": "cq", "podSetAssignments": [{
                "name": "workers", "count": 2, "flavors": {"cpu": "tas"},
                "topologyAssignment": {"levels": ["kubernetes.io/hostname"], "slices": [{
                    "domainCount": 1,
                    "valuesPerLevel": [{"individual": {"roots": ["h1"]}}],
                    "podCounts": {"universal": 2},
                }]},
            }]},
        },
    }))
    .expect("a Workload")
}

fn gated_pod(name: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "ml", "resourceVersion": "3",
                     "creationTimestamp": "2026-01-01T00:00:01Z",
                     "labels": {"kueue.x-k8s.io/podset": "workers"},
                     "annotations": {"kueue.x-k8s.io/workload": "jobset-train-1a2b3"}},
        "spec": {"containers": [{"name": "c"}],
                 "schedulingGates": [{"name": "kueue.x-k8s.io/topology"}]},
        "status": {"phase": "Pending"},
    }))
    .expect("a Pod")
}

fn ready_node() -> Node {
    serde_json::from_value(json!({
        "metadata": {"name": "h1", "labels": {"kubernetes.io/hostname": "h1"}},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }))
    .expect("a Node")
}

/// An ungater whose writer's tenure has not begun; nothing listens on the client's address.
fn ungater(leading: watch::Receiver<bool>) -> WorkQueue<UngaterTask> {
    let config = kube::Config::new("http://127.0.0.1:9".parse().expect("a URL"));
    let client = Client::try_from(config).expect("a client");
    let writer = Writer::new(client, -1.0, 1, Tenure::none(), Clock::system());
    let clock = Clock::manual(k8s_openapi::jiff::Timestamp::from_second(1_700_000_000).unwrap());
    WorkQueue::new(UngaterTask::new(writer), leading, clock)
}

#[tokio::test]
async fn a_framework_kinds_tas_pods_are_released_by_the_leader_once_each() {
    let (election, leading) = watch::channel(false);
    let mut ungater = ungater(leading);
    ungater.take(UngaterInput::Node(Change::Reset(vec![ready_node()])));
    ungater.take(UngaterInput::Workload(Change::Reset(vec![
        std::sync::Arc::new(workload()),
    ])));
    assert!(ungater.turn().is_empty(), "not every watch has listed");
    ungater.take(UngaterInput::Pod(Change::Reset(vec![
        slim_pod(gated_pod("train-workers-0-0")),
        slim_pod(gated_pod("train-workers-0-1")),
    ])));
    assert!(ungater.turn().is_empty(), "a follower sends nothing");

    election.send_replace(true);
    let sent = ungater.turn();
    let released: Vec<(String, Option<String>)> = sent
        .iter()
        .map(|(key, write)| match (key, write) {
            (Object::Pod(pod), Write::Release(release)) => (
                pod.to_string(),
                release.node_selector.get("kubernetes.io/hostname").cloned(),
            ),
            other => panic!("unexpected write {other:?}"),
        })
        .collect();
    assert_eq!(
        released,
        [
            ("ml/train-workers-0-0".to_owned(), Some("h1".to_owned())),
            ("ml/train-workers-0-1".to_owned(), Some("h1".to_owned())),
        ]
    );

    // The pods change while their releases are in flight: nothing is sent again.
    ungater.take(UngaterInput::Pod(Change::Apply(Box::new(slim_pod(
        gated_pod("train-workers-0-0"),
    )))));
    assert!(ungater.turn().is_empty());
}
