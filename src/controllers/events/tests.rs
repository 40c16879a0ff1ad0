use crate::api::Condition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;
use crate::api::workload_status::Admission;

fn at(text: &str) -> Time {
    Time(text.parse().unwrap())
}

fn condition(type_: &str, status: &str, reason: &str, message: &str) -> Condition {
    Condition {
        type_: type_.into(),
        status: status.into(),
        reason: reason.into(),
        message: message.into(),
        last_transition_time: at("2026-11-23T10:00:00Z"),
        observed_generation: None,
    }
}

fn created_at(text: &str) -> Workload {
    let mut w = Workload::new("job", Default::default());
    w.metadata.name = Some("job".into());
    w.metadata.creation_timestamp = Some(at(text));
    w
}

#[test]
fn an_admission_records_quota_reserved_and_admitted_with_the_wait() {
    let before = created_at("2026-11-23T09:59:30Z");
    let after = WorkloadStatus {
        admission: Some(Admission {
            cluster_queue: "team".into(),
            pod_set_assignments: Vec::new(),
        }),
        conditions: vec![
            condition("QuotaReserved", "True", "QuotaReserved", ""),
            condition("Admitted", "True", "Admitted", ""),
        ],
        ..WorkloadStatus::default()
    };
    let events = for_change(&before, &after, &at("2026-11-23T10:00:00Z"), &[]);
    assert_eq!(
        events,
        [
            WorkloadEvent::normal(
                "QuotaReserved",
                "Quota reserved in ClusterQueue team, wait time since queued was 30s".into()
            ),
            WorkloadEvent::normal(
                "Admitted",
                "Admitted by ClusterQueue team, wait time since reservation was 0s".into()
            ),
        ]
    );
}

#[test]
fn a_reservation_waiting_for_checks_is_admitted_later_with_the_wait_since_it() {
    let mut before = created_at("2026-11-23T09:59:30Z");
    let reserved = WorkloadStatus {
        admission: Some(Admission {
            cluster_queue: "team".into(),
            pod_set_assignments: Vec::new(),
        }),
        conditions: vec![
            condition("QuotaReserved", "True", "QuotaReserved", ""),
            condition("Admitted", "False", "UnsatisfiedAdmissionChecks", ""),
        ],
        ..WorkloadStatus::default()
    };
    let events = for_change(&before, &reserved, &at("2026-11-23T10:00:00Z"), &[]);
    let reasons: Vec<&str> = events.iter().map(|e| e.reason.as_str()).collect();
    assert_eq!(reasons, ["QuotaReserved"]);

    before.status = Some(reserved.clone());
    let mut admitted = reserved;
    admitted.conditions[1] = condition("Admitted", "True", "Admitted", "");
    let events = for_change(&before, &admitted, &at("2026-11-23T10:00:45Z"), &[]);
    assert_eq!(
        events,
        [WorkloadEvent::normal(
            "Admitted",
            "Admitted by ClusterQueue team, wait time since reservation was 45s".into()
        )]
    );
}

#[test]
fn a_rejecting_check_is_a_warning() {
    let before = created_at("2026-11-23T09:59:30Z");
    let after = WorkloadStatus {
        conditions: vec![condition(
            "DeactivationTarget",
            "True",
            "AdmissionCheck",
            "AdmissionCheck in Rejected state: \"budget\"",
        )],
        ..WorkloadStatus::default()
    };
    let events = for_change(&before, &after, &at("2026-11-23T10:00:00Z"), &[]);
    assert_eq!(
        events,
        [WorkloadEvent {
            warning: true,
            reason: "AdmissionCheckRejected".into(),
            note: "Deactivated due to AdmissionCheck in Rejected state: \"budget\"".into(),
        }]
    );
}

#[test]
fn the_wait_counts_from_the_last_requeue() {
    let mut before = created_at("2026-11-23T09:00:00Z");
    let mut requeued = condition("Requeued", "True", "Preempted", "");
    requeued.last_transition_time = at("2026-11-23T09:59:50Z");
    before.status = Some(WorkloadStatus {
        conditions: vec![requeued],
        ..WorkloadStatus::default()
    });
    assert_eq!(queued_at(&before), Some(at("2026-11-23T09:59:50Z")));
}

#[test]
fn a_preemption_records_preempted_and_evicted_due_to_preempted() {
    let before = created_at("2026-11-23T09:00:00Z");
    let after = WorkloadStatus {
        conditions: vec![
            condition(
                "Evicted",
                "True",
                "Preempted",
                "Preempted to accommodate a workload",
            ),
            condition(
                "Preempted",
                "True",
                "InClusterQueue",
                "Preempted to accommodate a workload",
            ),
        ],
        ..WorkloadStatus::default()
    };
    let events = for_change(&before, &after, &at("2026-11-23T10:00:00Z"), &[]);
    let reasons: Vec<&str> = events.iter().map(|e| e.reason.as_str()).collect();
    assert_eq!(reasons, ["Preempted", "EvictedDueToPreempted"]);
    assert!(events.iter().all(|e| !e.warning));
}

#[test]
fn a_new_pending_reason_is_a_warning_and_an_unchanged_one_is_not_repeated() {
    let waiting = condition("QuotaReserved", "False", "WaitingForQuota", "no room");
    let before = created_at("2026-11-23T09:00:00Z");
    let after = WorkloadStatus {
        conditions: vec![waiting.clone()],
        ..WorkloadStatus::default()
    };
    let events = for_change(&before, &after, &at("2026-11-23T10:00:00Z"), &[]);
    assert_eq!(
        events,
        [WorkloadEvent {
            warning: true,
            reason: "WaitingForQuota".into(),
            note: "no room".into()
        }]
    );
    let mut unchanged = before.clone();
    unchanged.status = Some(after.clone());
    assert_eq!(
        for_change(&unchanged, &after, &at("2026-11-23T10:00:05Z"), &[]),
        []
    );
}

#[test]
fn long_notes_are_cut_at_kueues_limit() {
    let note = truncate("é".repeat(2000));
    assert!(note.len() <= MAX_NOTE_BYTES);
    assert!(note.ends_with(" ..."));
    assert_eq!(truncate("short".into()), "short");
}

#[test]
fn a_topology_aware_admission_says_how_compact_it_is() {
    let before = created_at("2026-11-23T10:00:00Z");
    let after = WorkloadStatus {
        admission: Some(Admission {
            cluster_queue: "team".into(),
            pod_set_assignments: Vec::new(),
        }),
        ..WorkloadStatus::default()
    };
    let quality = PlacementQuality {
        levels: vec![
            "cloud.provider.com/topology-rack".into(),
            "kubernetes.io/hostname".into(),
        ],
        domains_per_level: vec![1, 2],
    };
    let events = for_change(
        &before,
        &after,
        &at("2026-11-23T10:00:00Z"),
        &[("main".into(), quality)],
    );
    assert_eq!(
        events[0].note,
        "Quota reserved in ClusterQueue team, wait time since queued was 0s; placement of pod set \
         main: racks 1, hosts 2; lowest common level: rack"
    );
}

/// Kueue's workload controller records a gated Workload as a Normal `AdmissionGated` event
/// naming the gates, and its removal as `AdmissionGateCleared`.
#[test]
fn a_gate_and_its_removal_are_normal_events_in_kueues_words() {
    let mut before = created_at("2026-11-23T09:00:00Z");
    before.metadata.annotations = Some(
        [(
            "kueue.x-k8s.io/admission-gated-by".to_string(),
            "example.com/check".to_string(),
        )]
        .into(),
    );
    let gated = WorkloadStatus {
        conditions: vec![condition(
            "QuotaReserved",
            "False",
            "AdmissionGated",
            "Admission is gated by: example.com/check",
        )],
        ..WorkloadStatus::default()
    };
    let events = for_change(&before, &gated, &at("2026-11-23T10:00:00Z"), &[]);
    assert_eq!(
        events,
        [WorkloadEvent::normal(
            "AdmissionGated",
            "Workload admission is gated by: example.com/check".into()
        )]
    );

    before.metadata.annotations = None;
    before.status = Some(gated);
    let waiting = WorkloadStatus {
        conditions: vec![condition(
            "QuotaReserved",
            "False",
            "WaitingForQuota",
            "no room",
        )],
        ..WorkloadStatus::default()
    };
    let events = for_change(&before, &waiting, &at("2026-11-23T10:00:05Z"), &[]);
    let reasons: Vec<(&str, bool)> = events
        .iter()
        .map(|e| (e.reason.as_str(), e.warning))
        .collect();
    assert_eq!(
        reasons,
        [("AdmissionGateCleared", false), ("WaitingForQuota", true)]
    );
}

/// Kueue records the mark of a Workload past its maximum execution time as a Warning.
#[test]
fn exceeding_the_maximum_execution_time_is_a_warning() {
    let mut before = created_at("2026-11-23T09:00:00Z");
    before.spec.maximum_execution_time_seconds = Some(5);
    let marked = WorkloadStatus {
        conditions: vec![condition(
            "DeactivationTarget",
            "True",
            "MaximumExecutionTimeExceeded",
            "exceeding the maximum execution time",
        )],
        ..WorkloadStatus::default()
    };
    let events = for_change(&before, &marked, &at("2026-11-23T10:00:00Z"), &[]);
    assert_eq!(
        events,
        [WorkloadEvent {
            warning: true,
            reason: "MaximumExecutionTimeExceeded".into(),
            note: "The maximum execution time (5s) exceeded".into()
        }]
    );
}
