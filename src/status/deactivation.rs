//! Kueue's two-step deactivation: a controller that gives up on a Workload (the requeuing limit of
//! `waitForPodsReady`, a rejected admission check) marks it `DeactivationTarget=True`; the
//! workload controller then sets `spec.active: false`, and the eviction that follows names the
//! target's reason (see [`super::workload`]).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::conditions::{Desired, is_true, set_condition};
use crate::api::keys::condition_types;
use crate::api::{Workload, WorkloadStatus};

/// The status with `DeactivationTarget=True` and this reason and message.
pub fn deactivation_target(
    old: &WorkloadStatus,
    reason: &str,
    message: &str,
    now: &Time,
    generation: Option<i64>,
) -> WorkloadStatus {
    let mut status = old.clone();
    set_condition(
        &mut status.conditions,
        Desired {
            type_: condition_types::DEACTIVATION_TARGET,
            status: true,
            reason,
            message: message.to_string(),
            observed_generation: generation,
        },
        now,
    );
    status
}

/// Whether `workload` is marked for deactivation.
pub fn is_deactivation_target(workload: &Workload) -> bool {
    workload
        .status
        .as_ref()
        .is_some_and(|s| is_true(&s.conditions, condition_types::DEACTIVATION_TARGET))
}

/// Whether `workload` is still active though marked for deactivation: `spec.active: false` is
/// due.
pub fn awaits_deactivation(workload: &Workload) -> bool {
    workload.spec.active.unwrap_or(true) && is_deactivation_target(workload)
}

#[cfg(test)]
mod tests;
