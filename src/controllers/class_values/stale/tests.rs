//! The WorkloadPriorityClass task in the work-queue loop: which Workloads get a class's value,
//! and when.

use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;
use tokio::sync::watch;

use super::super::{ClassInput, ClassTask};
use super::*;
use crate::api::{Workload, WorkloadPriorityClassFields};
use crate::clock::Clock;
use crate::controllers::leader::Tenure;
use crate::controllers::work_queue::{RETRY_BACKOFF, WorkQueue};
use crate::controllers::writer::{WriteError, Writer};

fn class(name: &str, value: i32) -> WorkloadPriorityClass {
    WorkloadPriorityClass::new(
        name,
        WorkloadPriorityClassFields {
            value,
            description: None,
        },
    )
}

/// A Workload naming WorkloadPriorityClass `class` (or a pod PriorityClass with `pod: true`),
/// holding quota or not.
fn workload(name: &str, class: &str, priority: i32, pod: bool, reserved: bool) -> SharedWorkload {
    let (group, kind) = if pod {
        ("scheduling.k8s.io", "PriorityClass")
    } else {
        ("kueue.x-k8s.io", "WorkloadPriorityClass")
    };
    let status = if reserved {
        serde_json::json!({"conditions": [{"type": "QuotaReserved", "status": "True",
            "reason": "QuotaReserved", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]})
    } else {
        serde_json::Value::Null
    };
    let workload: Workload = serde_json::from_value(serde_json::json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": "1"},
        "spec": {"priority": priority,
                 "priorityClassRef": {"group": group, "kind": kind, "name": class},
                 "podSets": [{"name": "main", "count": 1,
                              "template": {"spec": {"containers": [{"name": "c"}]}}}]},
        "status": status,
    }))
    .expect("test workload");
    Arc::new(workload)
}

type Queue = WorkQueue<ClassTask>;

/// A leading loop on `clock`; its writer is never called (the writes a turn decides are only
/// looked at).
fn queue_on(clock: &Clock) -> (Queue, watch::Sender<bool>) {
    let config = kube::Config::new("http://127.0.0.1:9".parse().expect("a URL"));
    let client = kube::Client::try_from(config).expect("a client");
    let task = ClassTask {
        stale: StaleValues::default(),
        writer: Writer::new(
            client,
            -1.0,
            1,
            Tenure::none(),
            crate::clock::Clock::system(),
        ),
    };
    let (election, leading) = watch::channel(true);
    (WorkQueue::new(task, leading, clock.clone()), election)
}

fn clock() -> Clock {
    Clock::manual(Timestamp::from_second(1_700_000_000).expect("a time"))
}

fn queue() -> (Queue, watch::Sender<bool>) {
    queue_on(&clock())
}

fn take_class(queue: &mut Queue, change: Change<WorkloadPriorityClass>) {
    queue.take(ClassInput::Class(change));
}

fn take_workload(queue: &mut Queue, change: Change<SharedWorkload>) {
    queue.take(ClassInput::Workload(change));
}

/// The writes of one turn, as (Workload, value written).
fn turn(queue: &mut Queue) -> Vec<(String, i32)> {
    queue
        .turn()
        .into_iter()
        .map(|(key, (_, value))| (key.name, value))
        .collect()
}

/// Both kinds listed: `high` at 100 and the given Workloads; the first turn taken.
fn listed(workloads: Vec<SharedWorkload>) -> (Queue, watch::Sender<bool>, Vec<(String, i32)>) {
    let (mut queue, election) = queue();
    take_workload(&mut queue, Change::Reset(workloads));
    take_class(&mut queue, Change::Reset(vec![class("high", 100)]));
    let first = turn(&mut queue);
    (queue, election, first)
}

#[tokio::test]
async fn a_changed_value_reaches_every_workload_naming_the_class_pending_or_admitted() {
    let (mut queue, _election, first) = listed(vec![
        workload("pending", "high", 100, false, false),
        workload("admitted", "high", 100, false, true),
        workload("other", "low", 100, false, false),
        workload("pods", "high", 100, true, false),
    ]);
    assert!(first.is_empty(), "every copy is current");
    take_class(&mut queue, Change::Apply(Box::new(class("high", 300))));
    assert_eq!(
        turn(&mut queue),
        [("admitted".to_string(), 300), ("pending".to_string(), 300)]
    );
    take_class(&mut queue, Change::Apply(Box::new(class("high", 200))));
    assert_eq!(turn(&mut queue), [], "each is written once at a time");
}

#[tokio::test]
async fn a_stale_copy_is_written_when_the_class_is_listed_not_before_the_workloads_are() {
    let (mut queue, _election) = queue();
    take_class(&mut queue, Change::Reset(vec![class("high", 300)]));
    assert!(turn(&mut queue).is_empty(), "Workloads not listed yet");
    take_workload(
        &mut queue,
        Change::Reset(vec![workload("w", "high", 100, false, false)]),
    );
    assert_eq!(turn(&mut queue), [("w".to_string(), 300)]);
}

#[tokio::test]
async fn an_unchanged_value_or_a_deleted_class_changes_nothing_and_a_failed_write_is_retried() {
    let clock = clock();
    let (mut queue, _election) = queue_on(&clock);
    take_workload(
        &mut queue,
        Change::Reset(vec![workload("w", "high", 5, false, false)]),
    );
    take_class(&mut queue, Change::Reset(vec![class("high", 100)]));
    assert_eq!(turn(&mut queue), [("w".to_string(), 100)]);
    queue.answered(
        ObjectKey::new("ns", "w"),
        Err(WriteError::Conflict("w".to_string())),
    );
    assert!(turn(&mut queue).is_empty(), "not before its backoff");
    // The longest first wait: 1 s with the most jitter.
    clock.advance(RETRY_BACKOFF.wait(1, 1.0));
    assert_eq!(turn(&mut queue), [("w".to_string(), 100)], "tried again");
    queue.answered(
        ObjectKey::new("ns", "w"),
        Err(WriteError::NotFound("w".to_string())),
    );
    clock.advance(std::time::Duration::from_secs(60));
    assert!(
        turn(&mut queue).is_empty(),
        "a Workload gone is not tried again"
    );

    let (mut queue, _election, first) = listed(vec![]);
    assert!(first.is_empty());
    take_class(&mut queue, Change::Apply(Box::new(class("high", 100))));
    take_workload(
        &mut queue,
        Change::Apply(Box::new(workload("late", "high", 5, false, false))),
    );
    assert!(
        turn(&mut queue).is_empty(),
        "Kueue looks at a class only when it is created or its value changes"
    );
    take_class(&mut queue, Change::Delete(Box::new(class("high", 100))));
    assert!(turn(&mut queue).is_empty());
}
