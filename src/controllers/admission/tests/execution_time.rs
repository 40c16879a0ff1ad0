//! `spec.maximumExecutionTimeSeconds`: an admitted Workload that ran out of time is marked
//! `DeactivationTarget`, made inactive, then evicted with its quota released and the time it ran
//! accumulated, as Kueue's workload controller does; one with time left is left alone.

use super::*;

fn condition_of<'a>(status: &'a api::WorkloadStatus, type_: &str) -> Option<(&'a str, &'a str)> {
    status
        .conditions
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| (c.status.as_str(), c.reason.as_str()))
}

/// `name` admitted by the loop, then read back as if admitted `ran` seconds ago, with `maximum`
/// seconds of execution time and `past` accumulated.
fn admitted_for(h: &mut Harness, name: &str, maximum: i32, past: Option<i32>, ran: i64) {
    let mut w = workload(name, 1, 0, 0);
    w.spec.maximum_execution_time_seconds = Some(maximum);
    h.apply(w);
    for request in h.workload_requests() {
        h.store(request);
    }
    let mut read = (*h.admission.workloads.shared_read(&wk(name)).unwrap()).clone();
    let since = Time(
        h.clock
            .wall()
            .checked_sub(k8s_openapi::jiff::SignedDuration::from_secs(ran))
            .unwrap(),
    );
    let status = read.status.as_mut().unwrap();
    status.accumulated_past_execution_time_seconds = past;
    for c in &mut status.conditions {
        if c.type_ == "Admitted" {
            c.last_transition_time = since.clone();
        }
    }
    h.revision += 1;
    read.metadata.resource_version = Some(h.revision.to_string());
    h.apply(read);
}

#[test]
fn past_its_maximum_execution_time_a_workload_is_deactivated_evicted_and_its_time_kept() {
    let mut h = Harness::new();
    admitted_for(&mut h, "long", 60, Some(50), 15);
    let marked = h.workload_requests();
    assert_eq!(effects(&marked), [(wk("long"), Effect::Update)]);
    let status = &marked[0].2.status;
    assert_eq!(
        condition_of(status, "DeactivationTarget"),
        Some(("True", "MaximumExecutionTimeExceeded"))
    );
    assert_eq!(status.accumulated_past_execution_time_seconds, None);
    assert!(status.admission.is_some());
    for request in marked {
        h.store(request);
    }
    let deactivations = h.deactivate_requests();
    assert_eq!(deactivations.len(), 1);
    for request in deactivations {
        h.store_deactivation(request);
    }
    let evicted = h.workload_requests();
    assert_eq!(effects(&evicted), [(wk("long"), Effect::Release)]);
    let status = &evicted[0].2.status;
    assert_eq!(
        condition_of(status, "Evicted"),
        Some(("True", "DeactivatedDueToMaximumExecutionTimeExceeded"))
    );
    let accumulated = status.accumulated_past_execution_time_seconds;
    assert!(
        accumulated.is_some_and(|s| (15..=17).contains(&s)),
        "the last admission's time: {accumulated:?}"
    );
    assert!(!h.admitted_in_engine(&wk("long")));
}

#[test]
fn a_workload_with_time_left_keeps_running() {
    let mut h = Harness::new();
    admitted_for(&mut h, "short", 60, Some(10), 15);
    assert!(h.workload_requests().is_empty());
    assert!(h.deactivate_requests().is_empty());
    assert!(h.admitted_in_engine(&wk("short")));
}

/// The deadline is read from the Workload, not remembered: a loop started afresh (a restarted or
/// newly elected controller) that reads a Workload admitted longer ago than its maximum marks it
/// at once.
#[test]
fn a_fresh_loop_marks_a_workload_that_ran_out_of_time_before_it_started() {
    let mut before = Harness::new();
    admitted_for(&mut before, "long", 5, None, 30);
    let read = (*before.admission.workloads.shared_read(&wk("long")).unwrap()).clone();

    let mut h = Harness::new();
    h.apply(read);
    let marked = h.workload_requests();
    assert_eq!(effects(&marked), [(wk("long"), Effect::Update)]);
    assert_eq!(
        condition_of(&marked[0].2.status, "DeactivationTarget"),
        Some(("True", "MaximumExecutionTimeExceeded"))
    );
}
