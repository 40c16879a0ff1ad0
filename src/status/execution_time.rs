//! Kueue's `spec.maximumExecutionTimeSeconds`: the time a Workload ran in earlier admissions is
//! added to `status.accumulatedPastExecutionTimeSeconds` whenever it stops being admitted, and a
//! Workload whose earlier time plus the time since its current admission (its `Admitted`
//! condition's `lastTransitionTime`) reaches the maximum is marked `DeactivationTarget` (then
//! deactivated and evicted, see [`super::deactivation`]). Every time comes from the object, so a
//! restarted controller finds the same deadline.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::conditions::is_true;
use super::deactivation::{deactivation_target, is_deactivation_target};
use crate::api::ConditionEntry;
use crate::api::keys::{condition_types, deactivation_reasons};
use crate::api::{Workload, WorkloadStatus};

/// Kueue's `DeactivationTarget` message for a Workload past its maximum execution time.
pub const EXCEEDED_MESSAGE: &str = "exceeding the maximum execution time";

/// When `workload` runs out of execution time: set while it is active, admitted, not finished
/// and not yet marked for deactivation, and it has a maximum.
pub fn execution_deadline(workload: &Workload) -> Option<Timestamp> {
    let maximum = workload.spec.maximum_execution_time_seconds?;
    let status = workload.status.as_ref()?;
    if !workload.spec.is_active()
        || is_true(&status.conditions, condition_types::FINISHED)
        || is_deactivation_target(workload)
    {
        return None;
    }
    let admitted = status
        .conditions
        .iter()
        .find(|c| c.type_ == condition_types::ADMITTED && c.is_true())?;
    let past = status.accumulated_past_execution_time_seconds.unwrap_or(0);
    let left = i64::from(maximum) - i64::from(past);
    admitted
        .last_transition_time
        .0
        .checked_add(SignedDuration::from_secs(left))
        .ok()
}

/// The status marking a Workload past its maximum execution time for deactivation at `now`. Kueue
/// clears the accumulated time with it: the eviction that follows adds the last admission's.
pub fn execution_time_exceeded(
    old: &WorkloadStatus,
    now: &Time,
    generation: Option<i64>,
) -> WorkloadStatus {
    let mut status = deactivation_target(
        old,
        deactivation_reasons::MAXIMUM_EXECUTION_TIME_EXCEEDED,
        EXCEEDED_MESSAGE,
        now,
        generation,
    );
    status.accumulated_past_execution_time_seconds = None;
    status
}

/// Adds the time of the admission `status` shows (its `Admitted=True` condition's
/// `lastTransitionTime` until `until`, in whole seconds as Kueue counts it) to the accumulated
/// execution time; the caller then turns `Admitted` False or starts it again.
pub fn accumulate(status: &mut WorkloadStatus, until: &Time) {
    let Some(admitted) = status
        .conditions
        .iter()
        .find(|c| c.type_ == condition_types::ADMITTED && c.is_true())
    else {
        return;
    };
    let ran = until
        .0
        .duration_since(admitted.last_transition_time.0)
        .as_secs()
        .clamp(0, i64::from(i32::MAX));
    let ran = i32::try_from(ran).unwrap_or(i32::MAX);
    let total = status
        .accumulated_past_execution_time_seconds
        .map_or(ran, |past| past.saturating_add(ran));
    status.accumulated_past_execution_time_seconds = Some(total);
}

#[cfg(test)]
mod tests;
