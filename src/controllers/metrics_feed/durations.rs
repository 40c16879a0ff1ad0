//! Durations between a Workload's conditions, as Kueue measures them for its histograms.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::super::events::queued_at;
use super::super::metrics::ReadyTimes;
use crate::api::HasConditions;
use crate::api::keys::{condition_types, pods_ready_reasons};
use crate::api::{Condition, Workload, WorkloadStatus};

fn seconds_between(from: &Time, to: &Time) -> f64 {
    (to.0.as_millisecond() - from.0.as_millisecond()) as f64 / 1000.0
}

/// A finished Workload's execution time, as Kueue's `TotalExecutionTime`: from its `Admitted`
/// condition to its `Finished` one, plus `accumulatedPastExecutionTimeSeconds` (what it ran
/// before earlier evictions). `None` unless both conditions are true.
pub(super) fn execution(status: Option<&WorkloadStatus>) -> Option<f64> {
    let admitted = status.true_condition(condition_types::ADMITTED)?;
    let finished = status.true_condition(condition_types::FINISHED)?;
    let past = status
        .and_then(|s| s.accumulated_past_execution_time_seconds)
        .unwrap_or(0);
    Some(
        f64::from(past)
            + seconds_between(
                &admitted.last_transition_time,
                &finished.last_transition_time,
            ),
    )
}

/// Whether the Workload's pods are ready for the first time since its admission: `PodsReady`
/// true with reason `Started` (a recovery, `Recovered`, is not counted, as in Kueue).
fn started(status: Option<&WorkloadStatus>) -> Option<&Condition> {
    status?
        .true_condition(condition_types::PODS_READY)
        .filter(|c| c.reason == pods_ready_reasons::STARTED)
}

/// The ready times of a Workload whose pods just became ready (`previous` showed them not yet
/// started): from its queueing (creation or last requeue) and from its admission to its
/// `PodsReady` condition.
pub(super) fn ready(previous: &Workload, current: &Workload) -> Option<ReadyTimes> {
    if started(previous.status.as_ref()).is_some() {
        return None;
    }
    let ready_at = &started(current.status.as_ref())?.last_transition_time;
    let queued_for = queued_at(current).map_or(0.0, |at| seconds_between(&at, ready_at));
    let admitted_for = current
        .true_condition(condition_types::ADMITTED)
        .map(|c| seconds_between(&c.last_transition_time, ready_at));
    Some(ReadyTimes {
        queued_for,
        admitted_for,
    })
}

/// How long an evicted Workload's pods had been ready when it was evicted: `PodsReady` and
/// `Evicted` both true, as Kueue reads them at the eviction.
pub(super) fn ready_until_evicted(status: &WorkloadStatus) -> Option<f64> {
    let ready = status.true_condition(condition_types::PODS_READY)?;
    let evicted = status.true_condition(condition_types::EVICTED)?;
    Some(seconds_between(
        &ready.last_transition_time,
        &evicted.last_transition_time,
    ))
}

/// An evicted Workload whose quota was just released (it held an admission in `previous`, holds
/// none now, is still `Evicted` and not finished): the ClusterQueue it left, the eviction's reason
/// and the seconds from the eviction to `now`, as Kueue's `EvictionPendingLatency`.
pub(super) fn eviction_released(
    previous: &Workload,
    current: &Workload,
    now: &Time,
) -> Option<(String, String, f64)> {
    let left = previous.status.as_ref()?.admission.as_ref()?;
    let status = current.status.as_ref();
    if left.cluster_queue.is_empty()
        || status.is_some_and(|s| s.admission.is_some())
        || status.true_condition(condition_types::FINISHED).is_some()
    {
        return None;
    }
    let evicted = status.true_condition(condition_types::EVICTED)?;
    Some((
        left.cluster_queue.clone(),
        evicted.reason.to_string(),
        seconds_between(&evicted.last_transition_time, now),
    ))
}
