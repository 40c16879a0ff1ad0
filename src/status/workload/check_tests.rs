//! Two-phase admission: quota reserved, then admitted once every admission check said Ready.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;
use crate::api::workload_status::{AdmissionCheckState, CheckState};
use crate::engine::model::{DelayedTopologyRequestState, PodSetAssignment};
use crate::engine::{CarriedState, PendingReason, WorkloadKey};
use crate::small_map::SmallMap;

fn at(text: &str) -> Time {
    Time(text.parse().unwrap())
}

const RESERVED_MS: i64 = 1_795_000_000_000;

fn reserved_at() -> Time {
    Time(Timestamp::from_millisecond(RESERVED_MS).unwrap())
}

fn state(status: EngineStatus, checks: &[&str]) -> WorkloadState {
    let holds = matches!(status, EngineStatus::Admitted(_));
    WorkloadState {
        workload: WorkloadKey::new("ns", "job"),
        uid: "uid".into(),
        status,
        last_eviction: None,
        active: true,
        carried: CarriedState {
            quota_reserved_at: holds.then_some(RESERVED_MS),
            ..CarriedState::default()
        },
        admission_checks: checks.iter().map(|c| c.to_string()).collect(),
    }
}

fn admitted() -> EngineStatus {
    EngineStatus::Admitted(Admission {
        cluster_queue: "team".into(),
        pod_set_assignments: vec![PodSetAssignment {
            name: "main".into(),
            flavors: SmallMap::from([("cpu".to_string(), "default".to_string())]),
            count: 1,
            ..Default::default()
        }],
    })
}

fn summary(status: &WorkloadStatus) -> Vec<String> {
    status
        .conditions
        .iter()
        .map(|c| format!("{}={} {}", c.type_, c.status, c.reason))
        .collect()
}

fn set_state(status: &mut WorkloadStatus, name: &str, state: CheckState) {
    let entries: Vec<AdmissionCheckState> = status
        .admission_checks
        .iter()
        .cloned()
        .map(|mut e| {
            if e.name == name {
                e.state = state;
            }
            e
        })
        .collect();
    status.admission_checks = entries.into();
}

#[test]
fn a_reservation_with_checks_lists_them_pending_and_is_not_admitted() {
    let now = at("2026-11-29T10:00:00Z");
    let status = workload_status(None, &state(admitted(), &["a", "b"]), &now, None);
    assert!(status.admission.is_some());
    assert_eq!(
        summary(&status),
        [
            "QuotaReserved=True QuotaReserved",
            "Admitted=False UnsatisfiedAdmissionChecks"
        ]
    );
    let listed: Vec<(&str, CheckState, &Time)> = status
        .admission_checks
        .iter()
        .map(|e| (e.name.as_str(), e.state, &e.last_transition_time))
        .collect();
    let reserved = reserved_at();
    assert_eq!(
        listed,
        [
            ("a", CheckState::Pending, &reserved),
            ("b", CheckState::Pending, &reserved)
        ]
    );
}

#[test]
fn the_workload_is_admitted_when_its_last_check_says_ready_at_that_time() {
    let t0 = at("2026-11-29T10:00:00Z");
    let decision = state(admitted(), &["a", "b"]);
    let mut status = workload_status(None, &decision, &t0, None);
    set_state(&mut status, "a", CheckState::Ready);
    let one_ready = workload_status(Some(&status), &decision, &at("2026-11-29T10:01:00Z"), None);
    assert_eq!(one_ready, status, "one check of two Ready changes nothing");
    set_state(&mut status, "b", CheckState::Ready);
    let t2 = at("2026-11-29T10:02:00Z");
    let all_ready = workload_status(Some(&status), &decision, &t2, None);
    let admitted = all_ready
        .condition(condition_types::ADMITTED)
        .expect("Admitted");
    assert!(admitted.is_true());
    assert_eq!(admitted.last_transition_time, t2);
    let reserved = all_ready
        .condition(condition_types::QUOTA_RESERVED)
        .expect("QuotaReserved");
    assert_eq!(reserved.last_transition_time, reserved_at());
}

#[test]
fn an_admitted_workload_stays_admitted_when_a_check_is_added_or_goes_back_to_pending() {
    let t0 = at("2026-11-29T10:00:00Z");
    let decision = state(admitted(), &["a"]);
    let mut status = workload_status(None, &decision, &t0, None);
    set_state(&mut status, "a", CheckState::Ready);
    let mut status = workload_status(Some(&status), &decision, &t0, None);
    set_state(&mut status, "a", CheckState::Pending);
    let later = at("2026-11-29T10:10:00Z");
    let status = workload_status(Some(&status), &decision, &later, None);
    assert_eq!(
        summary(&status),
        ["QuotaReserved=True QuotaReserved", "Admitted=True Admitted"]
    );
    // Its ClusterQueue names a new check: listed Pending, the Workload runs on.
    let status = workload_status(Some(&status), &state(admitted(), &["a", "b"]), &later, None);
    assert_eq!(status.admission_checks.len(), 2);
    assert!(status.condition_is_true(condition_types::ADMITTED));
    assert_eq!(status.accumulated_past_execution_time_seconds, None);
}

#[test]
fn without_checks_a_reservation_is_admitted_at_once() {
    let now = at("2026-11-29T10:00:00Z");
    let status = workload_status(None, &state(admitted(), &[]), &now, None);
    assert_eq!(
        summary(&status),
        ["QuotaReserved=True QuotaReserved", "Admitted=True Admitted"]
    );
    assert!(status.admission_checks.is_empty());
}

#[test]
fn losing_the_reservation_sets_the_checks_back_to_pending() {
    let t0 = at("2026-11-29T10:00:00Z");
    let mut status = workload_status(None, &state(admitted(), &["a"]), &t0, None);
    set_state(&mut status, "a", CheckState::Ready);
    let waiting = EngineStatus::Pending {
        reason: PendingReason::WaitingForQuota,
        message: "no room".into(),
    };
    let t1 = at("2026-11-29T10:05:00Z");
    let status = workload_status(Some(&status), &state(waiting, &["a"]), &t1, None);
    assert!(status.admission.is_none());
    let entry = &status.admission_checks[0];
    assert_eq!(entry.state, CheckState::Pending);
    assert_eq!(
        entry.message,
        "Reset to Pending after eviction. Previously: Ready"
    );
    assert_eq!(entry.last_transition_time, t1);
}

#[test]
fn checks_all_ready_with_a_topology_still_to_place_is_not_admitted_yet() {
    let mut delayed = admitted();
    if let EngineStatus::Admitted(admission) = &mut delayed {
        admission.pod_set_assignments[0].delayed_topology =
            Some(DelayedTopologyRequestState::Pending);
    }
    let decision = state(delayed, &["prov"]);
    let t0 = at("2026-11-29T10:00:00Z");
    let mut status = workload_status(None, &decision, &t0, None);
    set_state(&mut status, "prov", CheckState::Ready);
    let status = workload_status(Some(&status), &decision, &t0, None);
    assert_eq!(
        summary(&status),
        [
            "QuotaReserved=True QuotaReserved",
            "Admitted=False PendingDelayedTopologyRequests"
        ]
    );
    let written = status.admission.as_ref().unwrap();
    assert_eq!(
        written.pod_set_assignments[0].delayed_topology_request,
        Some(DelayedTopologyRequestState::Pending)
    );
    assert!(admission_checks::awaits_placement(&status));

    let mut placed = admitted();
    if let EngineStatus::Admitted(admission) = &mut placed {
        admission.pod_set_assignments[0].delayed_topology =
            Some(DelayedTopologyRequestState::Ready);
    }
    let status = workload_status(Some(&status), &state(placed, &["prov"]), &t0, None);
    assert_eq!(
        summary(&status),
        ["QuotaReserved=True QuotaReserved", "Admitted=True Admitted"]
    );
    assert!(!admission_checks::awaits_placement(&status));
}
