use crate::api::Condition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;
use crate::api::workload_status::{ReclaimablePod, RequeueState, UnhealthyNode};
use crate::engine::model::PodSetAssignment;
use crate::engine::quantity::Quantity;
use crate::engine::{PendingReason, PreemptionReason, WorkloadKey};
use crate::small_map::SmallMap;

fn at(text: &str) -> Time {
    Time(text.parse().unwrap())
}

fn state(status: EngineStatus, last_eviction: Option<EvictionRecord>) -> WorkloadState {
    WorkloadState {
        workload: WorkloadKey::new("ns", "job"),
        uid: "uid".into(),
        status,
        last_eviction,
        active: true,
        carried: Default::default(),
        admission_checks: Vec::new(),
    }
}

fn admitted() -> EngineStatus {
    EngineStatus::Admitted(Admission {
        cluster_queue: "team".into(),
        pod_set_assignments: vec![PodSetAssignment {
            name: "main".into(),
            flavors: SmallMap::from([("cpu".to_string(), "default".to_string())]),
            resource_usage: SmallMap::from([("cpu".to_string(), Quantity::from_units(2))]),
            count: 2,
            topology_assignment: None,
        }],
    })
}

fn waiting() -> EngineStatus {
    EngineStatus::Pending {
        reason: PendingReason::WaitingForQuota,
        message: "no room".into(),
    }
}

fn preempted() -> EvictionRecord {
    EvictionRecord {
        reason: EvictionReason::Preempted,
        message: "Preempted to accommodate a workload".into(),
        preemption: Some(PreemptionReason::InClusterQueue),
    }
}

fn condition<'a>(status: &'a WorkloadStatus, type_: &str) -> &'a Condition {
    status
        .conditions
        .iter()
        .find(|c| c.type_ == type_)
        .unwrap_or_else(|| panic!("no {type_} in {:?}", status.conditions))
}

/// `Type=Status Reason at lastTransitionTime` for every condition, in order.
fn summary(status: &WorkloadStatus) -> Vec<String> {
    status
        .conditions
        .iter()
        .map(|c| {
            let time = c.last_transition_time.0;
            format!("{}={} {} at {time}", c.type_, c.status, c.reason)
        })
        .collect()
}

#[test]
fn a_fresh_admitted_workload_gets_its_admission_and_two_conditions_at_now() {
    let now = at("2026-01-01T00:00:00Z");
    let status = workload_status(None, &state(admitted(), None), &now, Some(3));
    let admission = status.admission.as_ref().unwrap();
    assert_eq!(admission.cluster_queue, "team");
    assert_eq!(
        admission.pod_set_assignments[0].resource_usage["cpu"].0,
        "2"
    );
    assert_eq!(
        summary(&status),
        vec![
            "QuotaReserved=True QuotaReserved at 2026-01-01T00:00:00Z",
            "Admitted=True Admitted at 2026-01-01T00:00:00Z",
        ]
    );
    assert!(
        status
            .conditions
            .iter()
            .all(|c| c.observed_generation == Some(3))
    );
}

#[test]
fn the_same_decision_applied_twice_gives_the_same_status() {
    let t0 = at("2026-01-01T00:00:00Z");
    let t1 = at("2026-01-01T01:00:00Z");
    for decision in [
        state(admitted(), None),
        state(admitted(), Some(preempted())),
        state(waiting(), None),
        state(waiting(), Some(preempted())),
    ] {
        let first = workload_status(None, &decision, &t0, Some(1));
        let second = workload_status(Some(&first), &decision, &t1, Some(1));
        assert_eq!(first, second, "{decision:?}");
    }
}

#[test]
fn a_flip_moves_only_that_conditions_transition_time() {
    let t0 = at("2026-01-01T00:00:00Z");
    let t1 = at("2026-01-01T01:00:00Z");
    let mut old = workload_status(None, &state(waiting(), None), &t0, Some(1));
    let pods_ready = Condition {
        type_: "PodsReady".into(),
        status: "False".into(),
        reason: "WaitForStart".into(),
        message: "not yet".into(),
        last_transition_time: t0.clone(),
        observed_generation: Some(1),
    };
    old.conditions.push(pods_ready.clone());
    let new = workload_status(Some(&old), &state(admitted(), None), &t1, Some(1));
    let reserved = condition(&new, "QuotaReserved");
    assert_eq!(
        (reserved.status.as_str(), &reserved.last_transition_time),
        ("True", &t1)
    );
    assert_eq!(condition(&new, "Admitted").last_transition_time, t1);
    assert_eq!(condition(&new, "PodsReady"), &pods_ready);
    // A later write with a new pending reason keeps QuotaReserved's flip time but takes the reason.
    let t2 = at("2026-01-01T02:00:00Z");
    let pending = workload_status(Some(&new), &state(waiting(), None), &t2, Some(1));
    let t3 = at("2026-01-01T03:00:00Z");
    let other_reason = EngineStatus::Pending {
        reason: PendingReason::NoMatchingFlavor,
        message: "no flavor".into(),
    };
    let again = workload_status(Some(&pending), &state(other_reason, None), &t3, Some(1));
    let reserved = condition(&again, "QuotaReserved");
    assert_eq!(reserved.last_transition_time, t2);
    assert_eq!(
        (reserved.reason.as_str(), reserved.message.as_str()),
        ("NoMatchingFlavor", "no flavor")
    );
}

#[test]
fn fields_the_engine_does_not_own_are_kept() {
    let now = at("2026-01-01T00:00:00Z");
    let old = WorkloadStatus {
        requeue_state: Some(Box::new(RequeueState {
            count: Some(2),
            requeue_at: None,
        })),
        reclaimable_pods: vec![ReclaimablePod {
            name: "main".into(),
            count: 1,
        }]
        .into(),
        accumulated_past_execution_time_seconds: Some(60),
        unhealthy_nodes: vec![UnhealthyNode {
            name: "node-1".into(),
        }]
        .into(),
        cluster_name: Some("worker-1".into()),
        ..Default::default()
    };
    for decision in [state(admitted(), None), state(waiting(), Some(preempted()))] {
        let new = workload_status(Some(&old), &decision, &now, None);
        assert_eq!(new.requeue_state, old.requeue_state);
        assert_eq!(new.reclaimable_pods, old.reclaimable_pods);
        assert_eq!(new.accumulated_past_execution_time_seconds, Some(60));
        assert_eq!(new.unhealthy_nodes, old.unhealthy_nodes);
        assert_eq!(new.cluster_name, old.cluster_name);
    }
}

#[test]
fn a_pending_decision_clears_the_admission_and_a_finished_one_changes_nothing() {
    let t0 = at("2026-01-01T00:00:00Z");
    let t1 = at("2026-01-01T01:00:00Z");
    let admitted_status = workload_status(None, &state(admitted(), None), &t0, None);
    let finished = workload_status(
        Some(&admitted_status),
        &state(EngineStatus::Finished, None),
        &t1,
        None,
    );
    assert_eq!(finished, admitted_status);
    let evicted = workload_status(
        Some(&admitted_status),
        &state(waiting(), Some(preempted())),
        &t1,
        None,
    );
    assert_eq!(evicted.admission, None);
    assert_eq!(
        summary(&evicted),
        vec![
            "QuotaReserved=False WaitingForQuota at 2026-01-01T01:00:00Z",
            "Admitted=False NoReservation at 2026-01-01T01:00:00Z",
            "Evicted=True Preempted at 2026-01-01T01:00:00Z",
            "Preempted=True InClusterQueue at 2026-01-01T01:00:00Z",
            "Requeued=True Preempted at 2026-01-01T01:00:00Z",
        ]
    );
}

#[test]
fn each_new_eviction_is_counted_once_in_scheduling_stats() {
    let t0 = at("2026-01-01T00:00:00Z");
    let t1 = at("2026-01-01T01:00:00Z");
    let t2 = at("2026-01-01T02:00:00Z");
    let t3 = at("2026-01-01T03:00:00Z");
    let counts = |status: &WorkloadStatus| -> Vec<(String, String, i32)> {
        status
            .scheduling_stats
            .iter()
            .flat_map(|s| &s.evictions)
            .map(|e| (e.reason.clone(), e.underlying_cause.clone(), e.count))
            .collect()
    };
    let admitted_status = workload_status(None, &state(admitted(), None), &t0, None);
    assert!(counts(&admitted_status).is_empty());
    let evicted = workload_status(
        Some(&admitted_status),
        &state(waiting(), Some(preempted())),
        &t1,
        None,
    );
    assert_eq!(counts(&evicted), [("Preempted".into(), String::new(), 1)]);
    // The same eviction computed again, later, is not a second one.
    let again = workload_status(
        Some(&evicted),
        &state(waiting(), Some(preempted())),
        &t2,
        None,
    );
    assert_eq!(counts(&again), [("Preempted".into(), String::new(), 1)]);
    // Admitted again, then preempted again: two.
    let readmitted = workload_status(
        Some(&again),
        &state(admitted(), Some(preempted())),
        &t2,
        None,
    );
    let second = workload_status(
        Some(&readmitted),
        &state(waiting(), Some(preempted())),
        &t3,
        None,
    );
    assert_eq!(counts(&second), [("Preempted".into(), String::new(), 2)]);
}

#[test]
fn admission_turns_an_eviction_still_shown_as_true_false() {
    let t0 = at("2026-01-01T00:00:00Z");
    let t1 = at("2026-01-01T01:00:00Z");
    // Written by an earlier run whose eviction the engine no longer remembers.
    let evicted = workload_status(None, &state(waiting(), Some(preempted())), &t0, None);
    let readmitted = workload_status(Some(&evicted), &state(admitted(), None), &t1, None);
    for type_ in ["Evicted", "Preempted"] {
        let c = condition(&readmitted, type_);
        assert_eq!(
            (
                c.status.as_str(),
                c.reason.as_str(),
                c.message.as_str(),
                &c.last_transition_time
            ),
            (
                "False",
                "QuotaReserved",
                "Previously: Preempted to accommodate a workload",
                &t1
            )
        );
    }
    let again = workload_status(Some(&readmitted), &state(admitted(), None), &t1, None);
    assert_eq!(again, readmitted);
}

#[test]
fn a_node_failure_eviction_waits_or_is_shown_as_past_once_admitted_again() {
    let t0 = at("2026-01-01T00:00:00Z");
    let t1 = at("2026-01-01T01:00:00Z");
    let message = "no replacement for node-1";
    let before = workload_status(None, &state(admitted(), None), &t0, None);

    let waiting_state = state(waiting(), None);
    let mut waits = workload_status(Some(&before), &waiting_state, &t1, None);
    node_failure_eviction(&mut waits, &waiting_state, message, &t1, None);
    assert_eq!(
        summary(&waits),
        vec![
            "QuotaReserved=False WaitingForQuota at 2026-01-01T01:00:00Z",
            "Admitted=False NoReservation at 2026-01-01T01:00:00Z",
            "Evicted=True NodeFailures at 2026-01-01T01:00:00Z",
            "Requeued=True NodeFailures at 2026-01-01T01:00:00Z",
        ]
    );

    let admitted_state = state(admitted(), None);
    let mut back = workload_status(Some(&before), &admitted_state, &t1, None);
    node_failure_eviction(&mut back, &admitted_state, message, &t1, None);
    assert_eq!(
        summary(&back),
        vec![
            "QuotaReserved=True QuotaReserved at 2026-01-01T01:00:00Z",
            "Admitted=True Admitted at 2026-01-01T01:00:00Z",
            "Evicted=False QuotaReserved at 2026-01-01T01:00:00Z",
        ]
    );
    assert_eq!(
        condition(&back, "Evicted").message,
        format!("Previously: {message}")
    );

    // A later eviction by the engine itself keeps its own conditions.
    let preempted_state = state(waiting(), Some(preempted()));
    let mut later = workload_status(Some(&before), &preempted_state, &t1, None);
    let expected = later.clone();
    node_failure_eviction(&mut later, &preempted_state, message, &t1, None);
    assert_eq!(later, expected);
}

fn deactivated() -> EvictionRecord {
    EvictionRecord {
        reason: EvictionReason::Deactivated,
        message: "The workload is deactivated".into(),
        preemption: None,
    }
}

/// Evicted as deactivated, and still inactive.
fn inactive() -> WorkloadState {
    let mut state = state(waiting(), Some(deactivated()));
    state.active = false;
    state
}

#[test]
fn a_deactivation_target_names_the_eviction_and_is_dropped() {
    let t0 = at("2026-01-01T00:00:00Z");
    let t1 = at("2026-01-01T01:00:00Z");
    let mut admitted_status = workload_status(None, &state(admitted(), None), &t0, None);
    admitted_status.requeue_state = Some(Box::new(RequeueState {
        count: Some(2),
        requeue_at: None,
    }));
    let marked = crate::status::deactivation::deactivation_target(
        &admitted_status,
        "RequeuingLimitExceeded",
        "exceeding the maximum number of re-queuing retries",
        &t0,
        None,
    );
    let evicted = workload_status(Some(&marked), &inactive(), &t1, None);
    let condition_of = |type_| condition(&evicted, type_);
    assert_eq!(
        (
            condition_of("Evicted").reason.as_str(),
            condition_of("Evicted").message.as_str()
        ),
        (
            "DeactivatedDueToRequeuingLimitExceeded",
            "The workload is deactivated due to exceeding the maximum number of re-queuing retries"
        )
    );
    assert_eq!(
        (
            condition_of("Requeued").status.as_str(),
            condition_of("Requeued").reason.as_str()
        ),
        ("False", "Deactivated")
    );
    assert!(
        !evicted
            .conditions
            .iter()
            .any(|c| c.type_ == "DeactivationTarget"),
        "{:?}",
        evicted.conditions
    );
    assert_eq!(evicted.requeue_state, None);
    let counted: Vec<_> = evicted
        .scheduling_stats
        .iter()
        .flat_map(|s| &s.evictions)
        .map(|e| (e.reason.as_str(), e.underlying_cause.as_str(), e.count))
        .collect();
    assert_eq!(counted, [("Deactivated", "RequeuingLimitExceeded", 1)]);
    // Computed again from what was written, the eviction keeps its words: nothing to write.
    let again = workload_status(
        Some(&evicted),
        &inactive(),
        &at("2026-01-01T02:00:00Z"),
        None,
    );
    assert_eq!(again, evicted);
}

#[test]
fn a_deactivation_without_target_is_plainly_deactivated() {
    let t0 = at("2026-01-01T00:00:00Z");
    let admitted_status = workload_status(None, &state(admitted(), None), &t0, None);
    let evicted = workload_status(
        Some(&admitted_status),
        &inactive(),
        &at("2026-01-01T01:00:00Z"),
        None,
    );
    let evicted_condition = condition(&evicted, "Evicted");
    assert_eq!(
        (
            evicted_condition.reason.as_str(),
            evicted_condition.message.as_str()
        ),
        ("Deactivated", "The workload is deactivated")
    );
}

#[test]
fn a_reactivated_workload_is_requeued_whether_it_waits_or_is_admitted_at_once() {
    let t0 = at("2026-01-01T00:00:00Z");
    let admitted_status = workload_status(None, &state(admitted(), None), &t0, None);
    let evicted = workload_status(Some(&admitted_status), &inactive(), &t0, None);
    assert_eq!(condition(&evicted, "Requeued").reason, "Deactivated");

    let t1 = at("2026-01-01T01:00:00Z");
    let waits = workload_status(
        Some(&evicted),
        &state(waiting(), Some(deactivated())),
        &t1,
        None,
    );
    let requeued = condition(&waits, "Requeued");
    assert_eq!(
        (
            requeued.status.as_str(),
            requeued.reason.as_str(),
            requeued.message.as_str()
        ),
        ("True", "Reactivated", "The workload was reactivated")
    );
    assert_eq!(
        workload_status(
            Some(&waits),
            &state(waiting(), Some(deactivated())),
            &t1,
            None
        ),
        waits,
        "computed again, nothing changes"
    );

    let admitted_again = workload_status(Some(&evicted), &state(admitted(), None), &t1, None);
    assert_eq!(
        (
            condition(&admitted_again, "Requeued").status.as_str(),
            condition(&admitted_again, "Requeued").reason.as_str()
        ),
        ("True", "Reactivated")
    );
}

fn waiting_with(reason: PendingReason, message: &str) -> WorkloadState {
    state(
        EngineStatus::Pending {
            reason,
            message: message.into(),
        },
        None,
    )
}

#[test]
fn a_waiting_message_that_changed_only_in_its_numbers_is_kept() {
    let t0 = at("2026-01-01T00:00:00Z");
    let needed = |n: &str| {
        format!(
            "couldn't assign flavors to pod set main: insufficient unused quota for cpu in \
             flavor rf-1, {n} more needed"
        )
    };
    let first = workload_status(
        None,
        &waiting_with(PendingReason::WaitingForQuota, &needed("5")),
        &t0,
        None,
    );
    let fewer = workload_status(
        Some(&first),
        &waiting_with(PendingReason::WaitingForQuota, &needed("1500m")),
        &t0,
        None,
    );
    assert_eq!(fewer, first);

    // New words, or a new reason, are written.
    let other_flavor = needed("5").replace("rf-1", "rf-2");
    let moved = workload_status(
        Some(&first),
        &waiting_with(PendingReason::WaitingForQuota, &other_flavor),
        &t0,
        None,
    );
    assert_eq!(condition(&moved, "QuotaReserved").message, other_flavor);
    let behind = |name: &str| format!("waiting behind workload ns/{name}");
    let head = workload_status(
        None,
        &waiting_with(PendingReason::PendingEvaluation, &behind("w-00012")),
        &t0,
        None,
    );
    let next_head = workload_status(
        Some(&head),
        &waiting_with(PendingReason::PendingEvaluation, &behind("w-00013")),
        &t0,
        None,
    );
    assert_eq!(
        condition(&next_head, "QuotaReserved").message,
        behind("w-00013")
    );
    let exceeds = workload_status(
        Some(&first),
        &waiting_with(PendingReason::ExceedsMaxQuota, &needed("5")),
        &t0,
        None,
    );
    assert_eq!(
        condition(&exceeds, "QuotaReserved").reason,
        "ExceedsMaxQuota"
    );
}

/// Kueue adds the time of each admission to `accumulatedPastExecutionTimeSeconds` when the
/// Workload stops being admitted (whole seconds), once however often the status is computed.
#[test]
fn an_eviction_adds_the_admissions_time_to_the_accumulated_execution_time() {
    let t0 = at("2026-01-01T00:00:00Z");
    let mut old = workload_status(None, &state(admitted(), None), &t0, None);
    old.accumulated_past_execution_time_seconds = Some(30);
    let evicted_at = at("2026-01-01T00:00:45.900Z");
    let evicted = workload_status(
        Some(&old),
        &state(waiting(), Some(preempted())),
        &evicted_at,
        None,
    );
    assert_eq!(evicted.accumulated_past_execution_time_seconds, Some(75));
    let again = workload_status(
        Some(&evicted),
        &state(waiting(), Some(preempted())),
        &at("2026-01-01T00:01:00Z"),
        None,
    );
    assert_eq!(again.accumulated_past_execution_time_seconds, Some(75));

    let first = workload_status(None, &state(admitted(), None), &t0, None);
    let evicted = workload_status(
        Some(&first),
        &state(waiting(), Some(preempted())),
        &at("2026-01-01T00:00:10Z"),
        None,
    );
    assert_eq!(evicted.accumulated_past_execution_time_seconds, Some(10));
}

/// A Workload an integration put on hold keeps the hold's message as written: the engine's
/// decision to keep it waiting on hold writes nothing new.
#[test]
fn a_workload_on_hold_keeps_the_message_of_its_hold() {
    let t0 = at("2026-01-01T00:00:00Z");
    let mut held = WorkloadStatus::default();
    held.conditions.push(Condition {
        last_transition_time: t0.clone(),
        message: "StatefulSet scaled to zero; workload on hold".into(),
        observed_generation: None,
        reason: "OnHold".into(),
        status: "False".into(),
        type_: "QuotaReserved".into(),
    });
    let on_hold = EngineStatus::Pending {
        reason: PendingReason::OnHold,
        message: "The workload is on hold".into(),
    };
    let written = workload_status(
        Some(&held),
        &state(on_hold, None),
        &at("2026-01-01T01:00:00Z"),
        None,
    );
    assert_eq!(written, held);
}
