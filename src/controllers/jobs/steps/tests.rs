//! Which Jobs the controller takes a step for: the watches' changes go into the caches as the
//! loop takes them.

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use serde_json::json;

use super::*;
use crate::clock::Clock;
use crate::controllers::jobs::inputs::{JobInput, Touched};
use crate::controllers::watches::Change;
use crate::jobs::JobScope;

fn job(namespace: &str, labels: serde_json::Value) -> Job {
    serde_json::from_value(json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": namespace, "uid": format!("uid-{namespace}"),
                     "labels": labels},
        "spec": {"parallelism": 1, "completions": 1, "suspend": true, "template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox",
                            "resources": {"requests": {"cpu": "1"}}}]}}},
    }))
    .expect("a Job")
}

fn namespace(name: &str, labels: serde_json::Value) -> Namespace {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}}))
        .expect("a Namespace")
}

/// Everything listed: these namespaces, no Workload, no flavor, no class, no pod.
fn caches(namespaces: Vec<Namespace>, jobs: Vec<Job>) -> JobCaches {
    let mut caches = JobCaches::default();
    let mut touched = Touched::default();
    for input in [
        JobInput::Namespace(Change::Reset(namespaces)),
        JobInput::Job(Change::Reset(jobs)),
        JobInput::Workload(Change::Reset(Vec::new())),
    ] {
        caches.take_input(input, &mut touched);
    }
    caches
}

/// Namespaces labelled `team` are selected.
fn scope(manage_without_queue_name: bool) -> JobScope {
    JobScope {
        manage_without_queue_name,
        namespace_selector: LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "team".into(),
                operator: "Exists".into(),
                values: None,
            }]),
            match_labels: None,
        },
        ..JobScope::default()
    }
}

fn step(job: &Job, caches: &JobCaches, manage_without_queue_name: bool) -> JobStep {
    let settings = JobSettings {
        scope: scope(manage_without_queue_name),
        ..JobSettings::default()
    };
    job_step(job, caches, &settings)
}

fn creates_workload_naming(step: JobStep) -> Option<Option<String>> {
    match step {
        JobStep::CreateWorkload(workload) => Some(workload.spec.queue_name),
        _ => None,
    }
}

#[test]
fn a_job_naming_no_queue_gets_a_workload_only_when_managed_without_one_in_a_selected_namespace() {
    let unqueued = job("ml", json!({}));
    let caches = caches(
        vec![namespace("ml", json!({"team": "ml"}))],
        vec![unqueued.clone()],
    );
    assert_eq!(step(&unqueued, &caches, false), JobStep::Idle);
    assert_eq!(
        creates_workload_naming(step(&unqueued, &caches, true)),
        Some(None),
        "its Workload names no LocalQueue and waits with Kueue's reason"
    );
    let elsewhere = job("ops", json!({}));
    let caches = self::caches(vec![namespace("ops", json!({}))], vec![elsewhere.clone()]);
    assert_eq!(
        step(&elsewhere, &caches, true),
        JobStep::Idle,
        "a namespace the selector leaves out"
    );
}

#[test]
fn a_namespace_labelled_later_brings_its_jobs_into_scope() {
    let unqueued = job("ml", json!({}));
    let mut caches = caches(vec![namespace("ml", json!({}))], vec![unqueued.clone()]);
    assert_eq!(step(&unqueued, &caches, true), JobStep::Idle);
    let mut touched = Touched::default();
    caches.take_input(
        JobInput::Namespace(Change::Apply(Box::new(namespace(
            "ml",
            json!({"team": "ml"}),
        )))),
        &mut touched,
    );
    assert!(
        touched.jobs.contains(&ObjectKey::new("ml", "train")),
        "{touched:?}"
    );
    assert!(creates_workload_naming(step(&unqueued, &caches, true)).is_some());
}

#[test]
fn a_job_naming_a_queue_is_managed_whatever_its_namespace() {
    let queued = job("ops", json!({"kueue.x-k8s.io/queue-name": "lq"}));
    let caches = caches(vec![namespace("ops", json!({}))], vec![queued.clone()]);
    assert_eq!(
        creates_workload_naming(step(&queued, &caches, false)),
        Some(Some("lq".to_string()))
    );
}

#[test]
fn a_workload_its_deleted_job_orphaned_is_finished_as_owner_not_found() {
    let mut caches = caches(vec![namespace("ml", json!({}))], vec![]);
    let orphaned: Workload = serde_json::from_value(json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "job-train-1a2b3", "namespace": "ml", "resourceVersion": "7",
                     "labels": {"kueue.x-k8s.io/job-uid": "uid-ml"},
                     "finalizers": ["kueue.x-k8s.io/resource-in-use"]},
        "spec": {"queueName": "lq", "podSets": [{"name": "main", "count": 1, "template": {
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}]},
    }))
    .expect("a Workload");
    let mut touched = Touched::default();
    caches.take_input(
        JobInput::Workload(Change::Apply(Box::new(std::sync::Arc::new(orphaned)))),
        &mut touched,
    );
    assert!(
        touched
            .workloads
            .contains(&ObjectKey::new("ml", "job-train-1a2b3")),
        "{touched:?}"
    );
    let write = workload_write(
        &caches,
        &JobSettings::default(),
        &ObjectKey::new("ml", "job-train-1a2b3"),
        Clock::system().read(),
    )
    .expect("the orphaned Workload is finished");
    let Action::Condition(_, finished) = write.action else {
        panic!("a Finished condition, not {:?}", write.action);
    };
    assert_eq!(
        (
            finished.type_.as_str(),
            finished.status.as_str(),
            finished.reason.as_str()
        ),
        ("Finished", "True", "OwnerNotFound")
    );
    assert_eq!(finished.message, "The workload's owner no longer exists");
}
