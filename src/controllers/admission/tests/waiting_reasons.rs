//! Waiting reasons written at a bounded rate, front of the queue first, without holding back
//! admissions.

use super::*;
use crate::controllers::admission::waiting_reasons::{
    PER_PERIOD, PERIOD, only_waiting_reason, queue_order,
};

/// Takes `workloads` in and decides on all of them in one pass.
fn burst(h: &mut Harness, workloads: Vec<api::Workload>) {
    for workload in workloads {
        h.admission
            .take_change(Input::Workload(Change::Apply(Box::new(Arc::new(workload)))));
    }
    h.turn();
}

fn waiting_keys(requests: &[Request]) -> Vec<WorkloadKey> {
    requests
        .iter()
        .filter(|(_, read, planned)| {
            planned.effect == Effect::Update
                && only_waiting_reason(read.status.as_ref(), &planned.status)
        })
        .map(|(key, _, _)| key.clone())
        .collect()
}

/// `a` holds the whole quota, then `extra` more than a period's budget of 1-cpu Workloads wait:
/// `w-00` is the oldest, and every third one has a higher priority.
fn full_queue(h: &mut Harness, extra: usize) -> Vec<WorkloadKey> {
    h.apply(workload("a", 4, 1000, 0));
    for request in h.workload_requests() {
        h.store(request);
    }
    let waiting: Vec<api::Workload> = (0..PER_PERIOD + extra)
        .map(|i| {
            let priority = if i % 3 == 2 { 10 } else { 0 };
            workload(&format!("w-{i:02}"), 1, priority, i as u32 + 1)
        })
        .collect();
    let mut front: Vec<(i32, u32, WorkloadKey)> = waiting
        .iter()
        .enumerate()
        .map(|(i, w)| (-w.spec.priority.unwrap_or(0), i as u32, WorkloadKey::of(w)))
        .collect();
    front.sort();
    burst(h, waiting);
    front.into_iter().map(|(_, _, key)| key).collect()
}

#[test]
fn waiting_reasons_beyond_a_periods_budget_are_written_in_the_next_front_first() {
    let mut h = Harness::new();
    let front = full_queue(&mut h, 5);

    let first = h.workload_requests();
    let mut sent = waiting_keys(&first);
    assert_eq!(first.len(), sent.len(), "only waiting reasons: {first:?}");
    sent.sort();
    let mut expected = front[..PER_PERIOD].to_vec();
    expected.sort();
    assert_eq!(sent, expected, "the highest priorities, then the oldest");
    for request in first {
        h.store(request);
    }

    h.admission.due_waiting_reasons(h.clock.instant());
    h.turn();
    assert_eq!(
        waiting_keys(&h.workload_requests()),
        Vec::<WorkloadKey>::new()
    );

    h.clock.advance(PERIOD);
    h.admission.due_waiting_reasons(h.clock.instant());
    h.turn();
    let mut rest = waiting_keys(&h.workload_requests());
    rest.sort();
    let mut expected = front[PER_PERIOD..].to_vec();
    expected.sort();
    assert_eq!(rest, expected, "every waiting Workload gets its reason");
}

/// With several periods' worth waiting, each period makes only its budget's worth of them due,
/// the front of the queue first: the rest are not planned again every period.
#[test]
fn a_deep_queue_is_written_a_periods_budget_at_a_time() {
    let mut h = Harness::new();
    let periods = 3;
    let front = full_queue(&mut h, periods * PER_PERIOD);
    for request in h.workload_requests() {
        h.store(request);
    }
    assert_eq!(h.admission.waiting_reasons.deferred(), periods * PER_PERIOD);
    for period in 1..=periods {
        h.clock.advance(PERIOD);
        h.admission.due_waiting_reasons(h.clock.instant());
        assert_eq!(h.admission.ledger.marked(), PER_PERIOD, "period {period}");
        h.turn();
        let requests = h.workload_requests();
        let mut sent = waiting_keys(&requests);
        assert_eq!(
            requests.len(),
            sent.len(),
            "only waiting reasons: {requests:?}"
        );
        sent.sort();
        let mut expected = front[period * PER_PERIOD..(period + 1) * PER_PERIOD].to_vec();
        expected.sort();
        assert_eq!(sent, expected, "period {period}: the front of what waits");
        assert_eq!(
            h.admission.waiting_reasons.deferred(),
            (periods - period) * PER_PERIOD
        );
        for request in requests {
            h.store(request);
        }
    }
}

/// A Workload deleted while its waiting reason waits for a period is not written.
#[test]
fn a_deleted_workload_leaves_the_deferred_waiting_reasons() {
    let mut h = Harness::new();
    let front = full_queue(&mut h, 1);
    for request in h.workload_requests() {
        h.store(request);
    }
    assert_eq!(h.admission.waiting_reasons.deferred(), 1);
    let last = &front[PER_PERIOD];
    let name = last.name.as_str();
    h.admission
        .take_change(Input::Workload(Change::Delete(Box::new(Arc::new(
            workload(name, 1, 0, 0),
        )))));
    assert_eq!(h.admission.waiting_reasons.deferred(), 0);
    h.clock.advance(PERIOD);
    h.admission.due_waiting_reasons(h.clock.instant());
    h.turn();
    assert_eq!(
        waiting_keys(&h.workload_requests()),
        Vec::<WorkloadKey>::new()
    );
}

#[test]
fn an_admission_is_written_at_once_when_the_waiting_budget_is_spent() {
    let mut h = Harness::new();
    let front = full_queue(&mut h, 5);
    for request in h.workload_requests() {
        h.store(request);
    }

    let mut finished = workload("a", 4, 1000, 0);
    finished.metadata.resource_version = Some("999".into());
    h.admission
        .take_change(Input::Workload(Change::Delete(Box::new(Arc::new(
            finished,
        )))));
    h.turn();
    let requests = h.workload_requests();
    let claims: Vec<WorkloadKey> = effects(&requests)
        .into_iter()
        .filter(|(_, effect)| *effect == Effect::Claim)
        .map(|(key, _)| key)
        .collect();
    assert_eq!(claims.len(), 4, "{requests:?}");
    assert!(
        claims.iter().all(|key| front[..4].iter().any(|f| f == key)),
        "the front of the queue is admitted: {claims:?}"
    );
}

#[test]
fn only_a_quota_reserved_false_change_counts_as_a_waiting_reason() {
    use crate::api::Condition;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    let condition = |type_: &str, status: &str, message: &str| Condition {
        type_: type_.into(),
        status: status.into(),
        message: message.into(),
        reason: "Reason".into(),
        last_transition_time: Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
        observed_generation: None,
    };
    let waiting = |message: &str| api::WorkloadStatus {
        conditions: vec![
            condition("PodsReady", "False", "not yet"),
            condition("QuotaReserved", "False", message),
        ],
        ..api::WorkloadStatus::default()
    };
    let old = waiting("no quota in flavor a");
    assert!(only_waiting_reason(
        Some(&old),
        &waiting("no quota in flavor b")
    ));
    assert!(only_waiting_reason(
        None,
        &api::WorkloadStatus {
            conditions: vec![condition("QuotaReserved", "False", "waits")],
            ..api::WorkloadStatus::default()
        }
    ));

    let mut reserved = waiting("");
    reserved.conditions[1].status = "True".into();
    assert!(!only_waiting_reason(Some(&old), &reserved), "an admission");

    let mut other_condition = waiting("no quota in flavor b");
    other_condition.conditions[0].status = "True".into();
    assert!(
        !only_waiting_reason(Some(&old), &other_condition),
        "PodsReady changed too"
    );

    let mut requests = waiting("no quota in flavor b");
    requests.resource_requests = vec![api::workload_status::PodSetRequest::default()].into();
    assert!(
        !only_waiting_reason(Some(&old), &requests),
        "a field besides the conditions"
    );
}

/// A Workload that shows no waiting reason yet goes before one whose shown reason would only
/// be rewritten, whatever their priorities and ages: under steady churn the rewrites alone
/// would fill every period's budget and leave the newest Workloads without any status.
#[test]
fn a_workload_showing_no_reason_yet_is_written_before_reasons_already_shown() {
    let mut shown = workload("old", 1, 100, 1);
    shown.status = serde_json::from_value(serde_json::json!({"conditions": [{
        "type": "QuotaReserved", "status": "False", "reason": "Pending",
        "message": "couldn't assign flavors", "lastTransitionTime": "2026-11-29T00:00:00Z"}]}))
    .expect("a status");
    let fresh = workload("new", 1, 0, 9);
    assert!(queue_order(&fresh) < queue_order(&shown));
    let older_fresh = workload("newer-but-older", 1, 0, 2);
    assert!(
        queue_order(&older_fresh) < queue_order(&fresh),
        "then oldest"
    );
}
