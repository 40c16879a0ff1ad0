use super::*;
use crate::api::Condition;

fn at(text: &str) -> Time {
    Time(text.parse().unwrap())
}

fn entry(name: &str, state: CheckState, since: &str) -> AdmissionCheckState {
    AdmissionCheckState {
        name: name.into(),
        state,
        last_transition_time: at(since),
        message: String::new(),
        requeue_after_seconds: None,
        retry_count: None,
        pod_set_updates: Vec::new(),
    }
}

#[test]
fn sync_adds_missing_checks_pending_drops_stale_ones_and_keeps_what_controllers_wrote() {
    let now = at("2026-11-29T10:00:00Z");
    let mut ready = entry("b", CheckState::Ready, "2026-11-29T09:00:00Z");
    ready.message = "capacity found".into();
    let mut entries: RareList<AdmissionCheckState> = vec![
        entry("stale", CheckState::Retry, "2026-11-29T09:00:00Z"),
        ready.clone(),
    ]
    .into();
    sync(&mut entries, &["a".into(), "b".into()], &now);
    assert_eq!(
        &entries[..],
        &[
            entry("a", CheckState::Pending, "2026-11-29T10:00:00Z"),
            ready
        ]
    );
    sync(&mut entries, &[], &now);
    assert!(entries.is_empty());
}

#[test]
fn all_ready_needs_every_check_ready() {
    let since = "2026-11-29T09:00:00Z";
    assert!(all_ready(&[]));
    assert!(all_ready(&[entry("a", CheckState::Ready, since)]));
    assert!(!all_ready(&[
        entry("a", CheckState::Ready, since),
        entry("b", CheckState::Pending, since),
    ]));
}

#[test]
fn an_eviction_sets_every_check_back_to_pending_and_counts_a_retry() {
    let now = at("2026-11-29T10:00:00Z");
    let since = "2026-11-29T09:00:00Z";
    let mut retry = entry("r", CheckState::Retry, since);
    retry.retry_count = Some(2);
    retry.requeue_after_seconds = Some(30);
    let pending = entry("p", CheckState::Pending, since);
    let mut entries: RareList<AdmissionCheckState> = vec![
        pending.clone(),
        entry("ok", CheckState::Ready, since),
        retry,
    ]
    .into();
    reset_on_eviction(&mut entries, &now);
    assert_eq!(entries[0], pending);
    assert_eq!(entries[1].state, CheckState::Pending);
    assert_eq!(
        entries[1].message,
        "Reset to Pending after eviction. Previously: Ready"
    );
    assert_eq!(entries[1].retry_count, None);
    assert_eq!(entries[1].last_transition_time, now);
    assert_eq!(entries[2].retry_count, Some(3));
    assert_eq!(entries[2].requeue_after_seconds, Some(30));
}

fn status(entries: Vec<AdmissionCheckState>) -> WorkloadStatus {
    WorkloadStatus {
        admission_checks: entries.into(),
        ..Default::default()
    }
}

#[test]
fn a_rejected_check_deactivates_before_a_retry_evicts() {
    let since = "2026-11-29T09:00:00Z";
    let mut rejected = entry("budget", CheckState::Rejected, since);
    rejected.message = "over budget".into();
    let both = status(vec![rejected, entry("prov", CheckState::Retry, since)]);
    assert_eq!(
        outcome(&both),
        Some(CheckOutcome::Reject {
            message: "AdmissionCheck in Rejected state: \"budget\" (over budget)".into()
        })
    );
}

#[test]
fn retries_are_named_together_and_wait_for_the_latest_retry_time() {
    let mut early = entry("a", CheckState::Retry, "2026-11-29T09:00:00Z");
    early.requeue_after_seconds = Some(600);
    let mut late = entry("b", CheckState::Retry, "2026-11-29T09:05:00Z");
    late.requeue_after_seconds = Some(60);
    late.message = "no capacity".into();
    assert_eq!(
        outcome(&status(vec![late, early])),
        Some(CheckOutcome::Retry {
            message: "Evicted due to AdmissionChecks in Retry state: \"a\"; \"b\" (no capacity)"
                .into(),
            until: Some(at("2026-11-29T09:10:00Z")),
        })
    );
    let no_wait = status(vec![entry("a", CheckState::Retry, "2026-11-29T09:00:00Z")]);
    assert!(matches!(
        outcome(&no_wait),
        Some(CheckOutcome::Retry { until: None, .. })
    ));
}

#[test]
fn an_evicted_workload_or_one_whose_checks_did_not_fail_needs_nothing() {
    let since = "2026-11-29T09:00:00Z";
    let mut evicted = status(vec![entry("a", CheckState::Retry, since)]);
    evicted.conditions.push(Condition {
        type_: condition_types::EVICTED.into(),
        status: "True".into(),
        reason: "AdmissionCheck".into(),
        message: Default::default(),
        last_transition_time: at(since),
        observed_generation: None,
    });
    assert_eq!(outcome(&evicted), None);
    let waiting = status(vec![
        entry("a", CheckState::Pending, since),
        entry("b", CheckState::Ready, since),
    ]);
    assert_eq!(outcome(&waiting), None);
}
