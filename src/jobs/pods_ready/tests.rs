use serde_json::{Value, json};

use super::*;
use crate::config::{RequeuingStrategy, RequeuingTimestamp};
use crate::jobs::fixtures::{condition, workload};

const ADMITTED_AT: &str = "2026-01-01T00:00:00Z";

fn config(timeout: u64, recovery: Option<u64>, limit: Option<u32>) -> WaitForPodsReady {
    WaitForPodsReady {
        timeout: Duration::from_secs(timeout),
        block_admission: false,
        recovery_timeout: recovery.map(Duration::from_secs),
        requeuing_strategy: RequeuingStrategy {
            timestamp: RequeuingTimestamp::Eviction,
            backoff_limit_count: limit,
            backoff_base_seconds: 60,
            backoff_max_seconds: 3600,
        },
    }
}

fn at(text: &str) -> Time {
    Time(text.parse().unwrap())
}

/// The admitted sample Workload with these extra conditions (and status fields).
fn with(conditions: &[Value], status: Value) -> Workload {
    let mut all = vec![
        condition("QuotaReserved", true, "QuotaReserved", ADMITTED_AT),
        condition("Admitted", true, "Admitted", ADMITTED_AT),
    ];
    all.extend(conditions.iter().cloned());
    let mut patch = json!({"status": {"conditions": all}});
    crate::jobs::fixtures::merge(&mut patch, json!({"status": status}));
    workload(patch)
}

fn pods_ready_cond(status: bool, reason: &str, time: &str) -> Value {
    condition("PodsReady", status, reason, time)
}

#[test]
fn an_admitted_workload_waits_for_its_pods_then_starts() {
    let fresh = with(&[], json!({}));
    let waiting = pods_ready_condition(&fresh, false);
    assert_eq!(
        waiting,
        PodsReadyCondition {
            status: false,
            reason: pods_ready_reasons::WAIT_FOR_START,
            message: "Not all pods are ready or succeeded"
        }
    );
    assert!(!waiting.is_current(&fresh));
    let started = pods_ready_condition(&fresh, true);
    assert_eq!(
        (started.status, started.reason, started.message),
        (
            true,
            pods_ready_reasons::STARTED,
            "All pods reached readiness and the workload is running"
        )
    );
}

#[test]
fn a_workload_that_loses_a_ready_pod_waits_for_recovery_then_recovers() {
    let running = with(&[pods_ready_cond(true, "Started", ADMITTED_AT)], json!({}));
    let lost = pods_ready_condition(&running, false);
    assert_eq!(
        (lost.status, lost.reason, lost.message),
        (
            false,
            pods_ready_reasons::WAIT_FOR_RECOVERY,
            "At least one pod has failed, waiting for recovery"
        )
    );
    assert!(pods_ready_condition(&running, true).is_current(&running));

    let recovering = with(
        &[pods_ready_cond(false, "WaitForRecovery", ADMITTED_AT)],
        json!({}),
    );
    assert_eq!(
        pods_ready_condition(&recovering, false).reason,
        pods_ready_reasons::WAIT_FOR_RECOVERY
    );
    assert_eq!(
        pods_ready_condition(&recovering, true).reason,
        pods_ready_reasons::RECOVERED
    );
    let recovered = with(
        &[pods_ready_cond(true, "Recovered", ADMITTED_AT)],
        json!({}),
    );
    assert_eq!(
        pods_ready_condition(&recovered, true).reason,
        pods_ready_reasons::RECOVERED
    );
}

#[test]
fn a_workload_not_admitted_any_more_waits_for_the_start() {
    let evicted = workload(json!({"status": {"conditions": [
        condition("Admitted", false, "NoReservation", ADMITTED_AT),
        pods_ready_cond(true, "Started", ADMITTED_AT)
    ]}}));
    let condition = pods_ready_condition(&evicted, true);
    assert_eq!(
        (condition.status, condition.reason),
        (false, pods_ready_reasons::WAIT_FOR_START)
    );
    let desired = condition.desired(Some(3));
    assert_eq!(desired.type_, condition_types::PODS_READY);
    assert_eq!(desired.observed_generation, Some(3));
}

#[test]
fn the_start_timer_runs_from_admission() {
    let waiting = with(
        &[pods_ready_cond(false, "WaitForStart", ADMITTED_AT)],
        json!({}),
    );
    assert_eq!(
        pods_ready_timeout(
            &waiting,
            &config(300, None, None),
            &at("2026-01-01T00:04:00Z")
        ),
        PodsReadyTimeout::RunsOutAt(at("2026-01-01T00:05:00Z"))
    );
    // No PodsReady condition yet counts as waiting for the start.
    assert_eq!(
        pods_ready_timeout(
            &with(&[], json!({})),
            &config(300, None, None),
            &at(ADMITTED_AT)
        ),
        PodsReadyTimeout::RunsOutAt(at("2026-01-01T00:05:00Z"))
    );
}

#[test]
fn a_timed_out_start_evicts_with_kueues_reason_message_and_backoff() {
    let waiting = with(
        &[pods_ready_cond(false, "WaitForStart", ADMITTED_AT)],
        json!({}),
    );
    let now = at("2026-01-01T00:05:00Z");
    assert_eq!(
        pods_ready_timeout(&waiting, &config(300, None, None), &now),
        PodsReadyTimeout::Evict {
            message: "Exceeded the PodsReady timeout team-a/job-sample-0a1b2".to_owned(),
            underlying_cause: pods_ready_reasons::WAIT_FOR_START,
            requeue_state: RequeueState {
                count: Some(1),
                requeue_at: Some(at("2026-01-01T00:06:00Z")),
            },
        }
    );
    // The third requeue waits 60 s × 2².
    let third = with(
        &[pods_ready_cond(false, "WaitForStart", ADMITTED_AT)],
        json!({"requeueState": {"count": 2}}),
    );
    let PodsReadyTimeout::Evict { requeue_state, .. } =
        pods_ready_timeout(&third, &config(300, None, None), &now)
    else {
        panic!("not evicted");
    };
    assert_eq!(requeue_state.count, Some(3));
    assert_eq!(requeue_state.requeue_at, Some(at("2026-01-01T00:09:00Z")));
}

#[test]
fn a_lost_readiness_is_timed_only_with_a_recovery_timeout() {
    let recovering = with(
        &[pods_ready_cond(
            false,
            "WaitForRecovery",
            "2026-01-01T01:00:00Z",
        )],
        json!({}),
    );
    let now = at("2026-01-01T01:02:00Z");
    assert_eq!(
        pods_ready_timeout(&recovering, &config(300, None, None), &now),
        PodsReadyTimeout::NotTiming
    );
    assert_eq!(
        pods_ready_timeout(&recovering, &config(300, Some(180), None), &now),
        PodsReadyTimeout::RunsOutAt(at("2026-01-01T01:03:00Z"))
    );
    let PodsReadyTimeout::Evict {
        underlying_cause, ..
    } = pods_ready_timeout(&recovering, &config(300, Some(60), None), &now)
    else {
        panic!("not evicted");
    };
    assert_eq!(underlying_cause, pods_ready_reasons::WAIT_FOR_RECOVERY);
}

#[test]
fn the_requeue_limit_deactivates_instead() {
    let waiting = with(
        &[pods_ready_cond(false, "WaitForStart", ADMITTED_AT)],
        json!({"requeueState": {"count": 2}}),
    );
    let now = at("2026-01-01T01:00:00Z");
    assert_eq!(
        pods_ready_timeout(&waiting, &config(300, None, Some(2)), &now),
        PodsReadyTimeout::Deactivate {
            message: "exceeding the maximum number of re-queuing retries"
        }
    );
    assert!(matches!(
        pods_ready_timeout(&waiting, &config(300, None, Some(3)), &now),
        PodsReadyTimeout::Evict { .. }
    ));
}

#[test]
fn ready_evicted_inactive_or_pending_workloads_are_not_timed() {
    let cfg = config(1, Some(1), None);
    let now = at("2026-01-02T00:00:00Z");
    let ready = with(&[pods_ready_cond(true, "Started", ADMITTED_AT)], json!({}));
    assert_eq!(
        pods_ready_timeout(&ready, &cfg, &now),
        PodsReadyTimeout::NotTiming
    );
    let evicted = with(
        &[condition("Evicted", true, "PodsReadyTimeout", ADMITTED_AT)],
        json!({}),
    );
    assert_eq!(
        pods_ready_timeout(&evicted, &cfg, &now),
        PodsReadyTimeout::NotTiming
    );
    let mut inactive = with(&[], json!({}));
    inactive.spec.active = Some(false);
    assert_eq!(
        pods_ready_timeout(&inactive, &cfg, &now),
        PodsReadyTimeout::NotTiming
    );
    let pending = workload(json!({"status": {"admission": null, "conditions": []}}));
    assert_eq!(
        pods_ready_timeout(&pending, &cfg, &now),
        PodsReadyTimeout::NotTiming
    );
}

#[test]
fn a_later_requeue_time_set_elsewhere_is_kept() {
    let waiting = with(
        &[pods_ready_cond(false, "WaitForStart", ADMITTED_AT)],
        json!({"requeueState": {"requeueAt": "2026-01-01T05:00:00Z"}}),
    );
    let PodsReadyTimeout::Evict { requeue_state, .. } = pods_ready_timeout(
        &waiting,
        &config(300, None, None),
        &at("2026-01-01T00:05:00Z"),
    ) else {
        panic!("not evicted");
    };
    assert_eq!(requeue_state.requeue_at, Some(at("2026-01-01T05:00:00Z")));
}

#[test]
fn the_backoff_doubles_up_to_its_cap() {
    assert_eq!(requeue_backoff(1, 60, 3600), Duration::from_secs(60));
    assert_eq!(requeue_backoff(2, 60, 3600), Duration::from_secs(120));
    assert_eq!(requeue_backoff(6, 60, 3600), Duration::from_secs(1920));
    assert_eq!(requeue_backoff(7, 60, 3600), Duration::from_secs(3600));
    assert_eq!(requeue_backoff(200, 60, 3600), Duration::from_secs(3600));
}
