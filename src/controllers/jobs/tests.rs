//! The Job controller's loop around leadership: what arrives while this replica waits to lead
//! (following, or in the takeover wait) is decided on its first pass as the leader.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Namespace;
use kube::Client;
use serde_json::json;

use super::*;
use crate::controllers::leader::Tenure;
use crate::jobs::JobScope;

fn job(namespace: &str) -> Job {
    serde_json::from_value(json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "plain", "namespace": namespace, "uid": "uid-plain",
                     "resourceVersion": "7"},
        "spec": {"parallelism": 1, "completions": 1, "template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox",
                            "resources": {"requests": {"cpu": "1"}}}]}}},
    }))
    .expect("a Job")
}

/// A controller managing Jobs that name no queue in every namespace. Its writer's tenure has
/// not begun, so a write it sent would be refused; nothing listens on the client's address.
fn controller(leading: watch::Receiver<bool>) -> WorkQueue<JobTask> {
    let config = kube::Config::new("http://127.0.0.1:9".parse().expect("a URL"));
    let client = Client::try_from(config).expect("a client");
    let settings = JobSettings {
        scope: JobScope {
            manage_without_queue_name: true,
            ..JobScope::default()
        },
        ..JobSettings::default()
    };
    let (events, _) = EventSink::detached();
    let writer = Writer::new(
        client,
        -1.0,
        1,
        Tenure::none(),
        crate::clock::Clock::system(),
    );
    let clock = Clock::manual(k8s_openapi::jiff::Timestamp::from_second(1_700_000_000).unwrap());
    WorkQueue::new(JobTask::new(settings, writer, events), leading, clock)
}

/// Every watch's first list: one namespace, nothing else.
fn first_lists(namespace: &str) -> Vec<JobInput> {
    let ns: Namespace =
        serde_json::from_value(json!({"metadata": {"name": namespace}})).expect("a Namespace");
    vec![
        JobInput::Job(Change::Reset(Vec::new())),
        JobInput::Workload(Change::Reset(Vec::new())),
        JobInput::ResourceFlavor(Change::Reset(Vec::new())),
        JobInput::WorkloadPriorityClass(Change::Reset(Vec::new())),
        JobInput::PriorityClass(Change::Reset(Vec::new())),
        JobInput::Namespace(Change::Reset(vec![ns])),
    ]
}

#[tokio::test]
async fn a_job_created_while_this_replica_waits_to_lead_is_decided_once_it_leads() {
    let (election, leading) = watch::channel(false);
    let mut controller = controller(leading);
    for input in first_lists("ml") {
        controller.take(input);
    }
    assert!(controller.turn().is_empty());
    controller.take(JobInput::Job(Change::Apply(Box::new(job("ml")))));
    assert!(controller.turn().is_empty(), "a follower sends nothing");

    election.send_replace(true);
    let sent: Vec<Object> = controller.turn().into_iter().map(|(key, _)| key).collect();
    assert_eq!(
        sent,
        [Object::Job(ObjectKey::new("ml", "plain"))],
        "the new leader's first pass creates the Job's Workload"
    );
}
