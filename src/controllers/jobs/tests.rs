//! The Job controller's loop around leadership: what arrives while this replica waits to lead
//! (following, or in the takeover wait) is decided on its first pass as the leader.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Namespace;
use kube::Client;
use serde_json::json;

use super::*;
use crate::controllers::leader::Tenure;
use crate::jobs::JobScope;
use crate::jobs::fixtures;

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

/// A leader with the sample Job as read and `workload` as its Workload.
fn leading_with(job: Job, workload: crate::api::Workload) -> Vec<(Object, Write)> {
    let (_election, leading) = watch::channel(true);
    let mut controller = controller(leading);
    for input in first_lists("team-a") {
        controller.take(input);
    }
    let flavor: crate::api::ResourceFlavor = serde_json::from_value(json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
        "metadata": {"name": "on-demand"}, "spec": {}}))
    .expect("a ResourceFlavor");
    controller.take(JobInput::ResourceFlavor(Change::Apply(Box::new(flavor))));
    controller.take(JobInput::Workload(Change::Apply(Box::new(
        std::sync::Arc::new(workload),
    ))));
    controller.take(JobInput::Job(Change::Apply(Box::new(job))));
    controller.turn()
}

fn versions(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect()
}

#[tokio::test]
async fn a_new_leaders_stop_of_a_running_job_is_fenced_on_the_workloads_it_saw() {
    // The predecessor admitted the Workload and started the Job; this replica's Job watch has
    // brought the start, its Workload watch not yet the admission.
    let running = fixtures::job(json!({"metadata": {"resourceVersion": "12"},
                                       "spec": {"suspend": false}}));
    let mut before_admission = fixtures::workload(json!({"metadata": {"resourceVersion": "10"}}));
    before_admission.status = None;
    let sent = leading_with(running, before_admission);
    let (_, write) = sent
        .iter()
        .find(|(key, _)| matches!(key, Object::Job(_)))
        .expect("the Job is stopped");
    let fence = write
        .fence()
        .expect("the stop is fenced on the Workloads seen");
    assert_eq!(fence.seen, versions(&[(fixtures::WORKLOAD_NAME, "10")]));
    assert!(
        !fence.holds(&versions(&[(fixtures::WORKLOAD_NAME, "11")])),
        "a newer version of the Workload calls the stop off"
    );
    assert!(
        !fence.holds(&versions(&[
            (fixtures::WORKLOAD_NAME, "10"),
            ("job-sample-other", "3")
        ])),
        "a Workload the decision did not see calls the stop off"
    );
    assert!(fence.holds(&versions(&[(fixtures::WORKLOAD_NAME, "10")])));
}

#[tokio::test]
async fn a_start_is_not_fenced_on_the_workloads() {
    let suspended = fixtures::job(json!({"metadata": {"resourceVersion": "12"}}));
    let admitted = fixtures::workload(json!({"metadata": {"resourceVersion": "10"}}));
    let sent = leading_with(suspended, admitted);
    let (_, write) = sent
        .iter()
        .find(|(key, _)| matches!(key, Object::Job(_)))
        .expect("the Job is started");
    assert!(write.fence().is_none());
}

#[tokio::test]
async fn a_stop_after_an_eviction_is_made_whatever_the_workload_has_become() {
    // Evicted and admitted again (perhaps elsewhere) while the Job still runs on the admission
    // taken back: it stops, as Kueue stops it before the Workload queues again.
    let running = fixtures::job(json!({"metadata": {"resourceVersion": "12"},
                                       "spec": {"suspend": false}}));
    let mut requeued = fixtures::workload(json!({"metadata": {"resourceVersion": "10"}}));
    requeued.status = Some(
        serde_json::from_value(json!({"conditions": [
            fixtures::condition("Evicted", false, "Preempted", "2026-01-01T00:00:00Z"),
            fixtures::condition("QuotaReserved", false, "Pending", "2026-01-01T00:00:00Z"),
        ]}))
        .expect("a status"),
    );
    let sent = leading_with(running, requeued);
    let (_, write) = sent
        .iter()
        .find(|(key, _)| matches!(key, Object::Job(_)))
        .expect("the Job is stopped");
    assert!(write.fence().is_none());
}
