//! A framework kind's task: nothing is decided before the kind's own watch has listed, a job
//! gets its Workload, and only the kind's own Workloads are finished when their job is gone.

use k8s_openapi::api::core::v1::{Namespace, ObjectReference};
use kube::Client;
use serde_json::json;
use tokio::sync::{mpsc, watch};

use super::*;
use crate::api::Workload;
use crate::clock::Clock;
use crate::controllers::events::WorkloadEvent;
use crate::controllers::leader::Tenure;
use crate::controllers::watches::Change;
use crate::controllers::work_queue::WorkQueue;
use crate::jobs::kinds::{JOBSET, TRAINJOB};

fn jobset() -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "train", "namespace": "ml", "uid": "uid-train",
                     "resourceVersion": "3",
                     "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {"suspend": true, "replicatedJobs": [{"name": "workers", "replicas": 2,
            "template": {"spec": {"parallelism": 1, "completions": 1, "template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}}}]},
    }))
    .expect("a JobSet")
}

fn workload_owned_by(kind: &str, api_version: &str) -> Workload {
    serde_json::from_value(json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
        "metadata": {"name": "w", "namespace": "ml", "resourceVersion": "5",
            "finalizers": ["kueue.x-k8s.io/resource-in-use"],
            "ownerReferences": [{"apiVersion": api_version, "kind": kind, "name": "gone",
                                 "uid": "uid-gone", "controller": true}]},
        "spec": {"queueName": "lq", "podSets": [{"name": "workers", "count": 2,
            "template": {"spec": {"containers": [{"name": "c"}]}}}]},
    }))
    .expect("a Workload")
}

/// A task of `kind` that leads; its writer's tenure has not begun and nothing listens on the
/// client's address, so writes are only decided.
fn task() -> WorkQueue<FrameworkTask> {
    task_of(&JOBSET).0
}

/// A task of `kind`, and the events it records.
fn task_of(
    kind: &'static dyn JobKind,
) -> (
    WorkQueue<FrameworkTask>,
    mpsc::Receiver<(ObjectReference, WorkloadEvent)>,
) {
    let config = kube::Config::new("http://127.0.0.1:9".parse().expect("a URL"));
    let client = Client::try_from(config).expect("a client");
    let (events, recorded) = EventSink::detached();
    let writer = Writer::new(client, -1.0, 1, Tenure::none(), Clock::system());
    let (_, leading) = watch::channel(true);
    let clock = Clock::manual(k8s_openapi::jiff::Timestamp::from_second(1_700_000_000).unwrap());
    let task = WorkQueue::new(
        FrameworkTask::new(kind, JobSettings::default(), writer, events),
        leading,
        clock,
    );
    (task, recorded)
}

/// The first lists of the watches every kind shares: one namespace, `workloads`.
fn shared_lists(task: &mut WorkQueue<FrameworkTask>, workloads: Vec<Workload>) {
    let ns: Namespace =
        serde_json::from_value(json!({"metadata": {"name": "ml"}})).expect("a Namespace");
    let workloads = workloads.into_iter().map(std::sync::Arc::new).collect();
    for input in [
        JobInput::Workload(Change::Reset(workloads)),
        JobInput::ResourceFlavor(Change::Reset(Vec::new())),
        JobInput::WorkloadPriorityClass(Change::Reset(Vec::new())),
        JobInput::PriorityClass(Change::Reset(Vec::new())),
        JobInput::Namespace(Change::Reset(vec![ns])),
    ] {
        task.take(input.into());
    }
}

fn sent(task: &mut WorkQueue<FrameworkTask>) -> Vec<(Object, String)> {
    task.turn()
        .into_iter()
        .map(|(key, write)| (key, format!("{write:?}")))
        .collect()
}

#[tokio::test]
async fn a_jobset_gets_its_workload_once_the_kinds_watch_has_listed() {
    let mut task = task();
    shared_lists(&mut task, Vec::new());
    task.take(JobInput::Job(Change::Apply(Box::new(jobset()))).into());
    assert!(
        sent(&mut task).is_empty(),
        "the JobSet watch has not listed"
    );

    task.take(JobInput::Job(Change::Reset(vec![jobset()])).into());
    let sent = sent(&mut task);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].0, Object::Job(ObjectKey::new("ml", "train")));
    assert!(sent[0].1.contains("CreateWorkload"), "{}", sent[0].1);
    assert!(sent[0].1.contains("jobset-train-"), "{}", sent[0].1);
}

#[tokio::test]
async fn a_workload_whose_jobset_is_gone_is_finished_and_other_kinds_workloads_are_left() {
    let mut task = task();
    let jobsets = workload_owned_by("JobSet", "jobset.x-k8s.io/v1alpha2");
    let mut jobs = workload_owned_by("Job", "batch/v1");
    jobs.metadata.name = Some("of-a-job".into());
    shared_lists(&mut task, vec![jobsets, jobs]);
    assert!(
        sent(&mut task).is_empty(),
        "the JobSet watch has not listed"
    );

    task.take(JobInput::Job(Change::Reset(Vec::new())).into());
    let sent = sent(&mut task);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].0, Object::Workload(ObjectKey::new("ml", "w")));
    assert!(sent[0].1.contains("OwnerNotFound"), "{}", sent[0].1);
}

fn train_job() -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
        "metadata": {"name": "train", "namespace": "ml", "uid": "uid-train",
                     "resourceVersion": "3",
                     "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {"suspend": true, "runtimeRef": {"kind": "TrainingRuntime", "name": "torch"}},
    }))
    .expect("a TrainJob")
}

fn runtime() -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
        "metadata": {"name": "torch", "namespace": "ml"},
        "spec": {"template": {"spec": {"replicatedJobs": [{"name": "node", "template": {
            "spec": {"template": {"spec": {"containers": [{"name": "node",
                "resources": {"requests": {"cpu": "1"}}}]}}}}}]}}},
    }))
    .expect("a TrainingRuntime")
}

/// A TrainJob waits until its runtimes have been listed, names its missing runtime, and gets its
/// Workload as soon as the runtime appears.
#[tokio::test]
async fn a_trainjob_gets_its_workload_once_its_runtime_exists() {
    let (mut task, mut recorded) = task_of(&TRAINJOB);
    shared_lists(&mut task, Vec::new());
    task.take(JobInput::Job(Change::Reset(vec![train_job()])).into());
    assert!(sent(&mut task).is_empty(), "the runtimes are not listed");

    task.take(FrameworkInput::Referenced(0, Change::Reset(Vec::new())));
    task.take(FrameworkInput::Referenced(1, Change::Reset(Vec::new())));
    assert!(
        sent(&mut task).is_empty(),
        "no Workload without the runtime"
    );
    let (regarding, event) = recorded.try_recv().expect("an event on the TrainJob");
    assert_eq!(regarding.kind.as_deref(), Some("TrainJob"));
    assert!(
        event
            .note
            .contains("spec.runtimeRef: TrainingRuntime ml/torch does not exist"),
        "{}",
        event.note
    );

    task.take(FrameworkInput::Referenced(
        0,
        Change::Apply(Box::new(runtime())),
    ));
    let created = sent(&mut task);
    assert_eq!(created.len(), 1, "{created:?}");
    assert_eq!(created[0].0, Object::Job(ObjectKey::new("ml", "train")));
    assert!(created[0].1.contains("CreateWorkload"), "{}", created[0].1);
    assert!(created[0].1.contains("trainjob-train-"), "{}", created[0].1);
}
