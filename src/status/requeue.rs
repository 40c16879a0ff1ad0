//! Kueue's requeue backoff: a Workload evicted with a backoff (`status.requeueState.requeueAt`,
//! after a PodsReady timeout or an AdmissionCheck retry) stays out of its queue until that time,
//! then is marked `Requeued=True` with reason `BackoffFinished` and queues again.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::conditions::{Desired, is_true, set_condition};
use crate::api::keys::{condition_types, requeued_reasons};
use crate::api::{Workload, WorkloadStatus};

/// Kueue's message when the backoff ends.
const BACKOFF_FINISHED_MESSAGE: &str = "The workload backoff was finished";

/// Until when `workload` waits out a requeue backoff: its `requeueAt`, while it holds no
/// admission and is not requeued yet.
pub fn waiting_until(workload: &Workload) -> Option<&Time> {
    let status = workload.status.as_ref()?;
    if status.admission.is_some() || is_true(&status.conditions, condition_types::REQUEUED) {
        return None;
    }
    status.requeue_state.as_ref()?.requeue_at.as_ref()
}

/// The status once the backoff ended at `now`: `requeueAt` cleared (the count stays, for the
/// next backoff), `Requeued=True` with reason `BackoffFinished`.
pub fn backoff_finished(
    old: &WorkloadStatus,
    now: &Time,
    generation: Option<i64>,
) -> WorkloadStatus {
    let mut status = old.clone();
    if let Some(state) = status.requeue_state.as_mut() {
        state.requeue_at = None;
    }
    set_condition(
        &mut status.conditions,
        Desired {
            type_: condition_types::REQUEUED,
            status: true,
            reason: requeued_reasons::BACKOFF_FINISHED,
            message: BACKOFF_FINISHED_MESSAGE.to_string(),
            observed_generation: generation,
        },
        now,
    );
    status
}

#[cfg(test)]
mod tests;
