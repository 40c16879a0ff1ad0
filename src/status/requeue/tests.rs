use crate::api::Condition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;
use crate::api::workload_status::{Admission, RequeueState};

fn at(text: &str) -> Time {
    Time(text.parse().unwrap())
}

fn requeued(status: &str) -> Condition {
    Condition {
        type_: "Requeued".into(),
        status: status.into(),
        reason: "PodsReadyTimeout".into(),
        message: Default::default(),
        last_transition_time: at("2026-11-23T09:00:00Z"),
        observed_generation: None,
    }
}

fn backing_off() -> Workload {
    let mut w = Workload::new("job", Default::default());
    w.status = Some(WorkloadStatus {
        conditions: vec![requeued("False")],
        requeue_state: Some(Box::new(RequeueState {
            count: Some(2),
            requeue_at: Some(at("2026-11-23T10:00:00Z")),
        })),
        ..WorkloadStatus::default()
    });
    w
}

#[test]
fn an_evicted_workload_waits_until_its_requeue_time() {
    assert_eq!(
        waiting_until(&backing_off()),
        Some(&at("2026-11-23T10:00:00Z"))
    );
}

#[test]
fn an_admitted_or_requeued_workload_waits_for_nothing() {
    let mut admitted = backing_off();
    if let Some(status) = admitted.status.as_mut() {
        status.admission = Some(Admission {
            cluster_queue: "team".into(),
            pod_set_assignments: Vec::new(),
        });
    }
    assert_eq!(waiting_until(&admitted), None);
    let mut requeued_already = backing_off();
    if let Some(status) = requeued_already.status.as_mut() {
        status.conditions = vec![requeued("True")];
    }
    assert_eq!(waiting_until(&requeued_already), None);
}

#[test]
fn the_end_of_a_backoff_requeues_and_keeps_the_count() {
    let old = backing_off().status.unwrap_or_default();
    let now = at("2026-11-23T10:00:01Z");
    let status = backoff_finished(&old, &now, Some(3));
    let state = status.requeue_state.as_ref().expect("requeue state");
    assert_eq!((state.count, state.requeue_at.as_ref()), (Some(2), None));
    let condition = &status.conditions[0];
    assert_eq!(
        (
            condition.status.as_str(),
            condition.reason.as_str(),
            condition.message.as_str()
        ),
        (
            "True",
            "BackoffFinished",
            "The workload backoff was finished"
        )
    );
    assert_eq!(condition.last_transition_time, now);
    assert_eq!(condition.observed_generation, Some(3));
}
