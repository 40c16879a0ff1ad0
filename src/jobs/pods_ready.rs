//! Kueue's `waitForPodsReady`: the `PodsReady` condition a job's Workload carries, and what
//! happens when the pods take too long — eviction with reason `PodsReadyTimeout` and a requeue
//! backoff, or, past `backoffLimitCount`, deactivation.
//!
//! The timer runs from the `Admitted` transition while the pods start (`WaitForStart`), or from
//! the `PodsReady=False` transition after they were ready once (`WaitForRecovery`, only with a
//! `recoveryTimeout`). Time comes in as `now`; the answer says when to look again.

use std::time::Duration;

use crate::api::Condition;
use crate::api::ConditionEntry;
use crate::api::HasConditions;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::SignedDuration;

use crate::api::Workload;
use crate::api::keys::{condition_types, pods_ready_reasons};
use crate::api::workload_status::RequeueState;
use crate::config::WaitForPodsReady;
use crate::status::conditions::Desired;

/// Kueue's message while not every pod is ready.
const NOT_READY_MESSAGE: &str = "Not all pods are ready or succeeded";
/// Kueue's message after a pod failed once the Workload was running.
const WAITING_FOR_RECOVERY_MESSAGE: &str = "At least one pod has failed, waiting for recovery";
/// Kueue's message once every pod is ready.
const READY_MESSAGE: &str = "All pods reached readiness and the workload is running";
/// Kueue's `DeactivationTarget` message when the requeue limit is reached.
const REQUEUING_LIMIT_MESSAGE: &str = "exceeding the maximum number of re-queuing retries";
/// A `PodsReady` reason older Kueue versions wrote while waiting for the start.
const LEGACY_WAIT_REASON: &str = "PodsReady";

/// The `PodsReady` condition a Workload should carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PodsReadyCondition {
    pub status: bool,
    pub reason: &'static str,
    pub message: &'static str,
}

impl PodsReadyCondition {
    /// Whether the Workload already carries this condition (type, status and reason); Kueue
    /// writes it only when not.
    pub fn is_current(&self, workload: &Workload) -> bool {
        pods_ready(workload).is_some_and(|c| c.has_status(self.status) && c.reason == self.reason)
    }

    /// The condition to merge with [`crate::status::conditions::set_condition`].
    pub fn desired(&self, observed_generation: Option<i64>) -> Desired<'static> {
        Desired {
            type_: condition_types::PODS_READY,
            status: self.status,
            reason: self.reason,
            message: self.message.to_owned(),
            observed_generation,
        }
    }
}

/// The `PodsReady` condition for `workload` given whether its job's pods are all ready now
/// (for a batch Job, [`super::job_pods_ready`]). Not admitted (yet, or any more): waiting for
/// the start. Ready: `Started`, or `Recovered` after a recovery wait. Not ready: waiting for
/// recovery once it was ready, else for the start.
pub fn pods_ready_condition(workload: &Workload, all_ready: bool) -> PodsReadyCondition {
    let waiting_for_start = PodsReadyCondition {
        status: false,
        reason: pods_ready_reasons::WAIT_FOR_START,
        message: NOT_READY_MESSAGE,
    };
    if !workload.condition_is_true(condition_types::ADMITTED) {
        return waiting_for_start;
    }
    let current = pods_ready(workload);
    let recovering = current.is_some_and(|c| {
        c.reason == pods_ready_reasons::WAIT_FOR_RECOVERY
            || (all_ready && c.reason == pods_ready_reasons::RECOVERED)
    });
    if all_ready {
        return PodsReadyCondition {
            status: true,
            reason: if recovering {
                pods_ready_reasons::RECOVERED
            } else {
                pods_ready_reasons::STARTED
            },
            message: READY_MESSAGE,
        };
    }
    let was_ready = current.is_some_and(|c| c.is_true());
    if was_ready || recovering {
        PodsReadyCondition {
            status: false,
            reason: pods_ready_reasons::WAIT_FOR_RECOVERY,
            message: WAITING_FOR_RECOVERY_MESSAGE,
        }
    } else {
        waiting_for_start
    }
}

/// What the PodsReady timer says about a Workload.
#[derive(Clone, Debug, PartialEq)]
pub enum PodsReadyTimeout {
    /// No timer runs: not admitted, ready, already evicted, inactive, or waiting for recovery
    /// without a `recoveryTimeout`.
    NotTiming,
    /// The timer runs out at this time; look again then.
    RunsOutAt(Time),
    /// Evict: `Evicted=True` with reason `PodsReadyTimeout`, this message and underlying cause
    /// (`WaitForStart` or `WaitForRecovery`), and `status.requeueState` set to this (count
    /// incremented, `requeueAt` after the backoff); the requeue waits until then.
    Evict {
        message: String,
        underlying_cause: &'static str,
        requeue_state: RequeueState,
    },
    /// The requeue limit (`backoffLimitCount`) is reached: set `DeactivationTarget=True` with
    /// reason `RequeuingLimitExceeded` and this message; the Workload is then deactivated.
    Deactivate { message: &'static str },
}

/// The PodsReady timer of `workload` at `now` under `config`.
pub fn pods_ready_timeout(
    workload: &Workload,
    config: &WaitForPodsReady,
    now: &Time,
) -> PodsReadyTimeout {
    let active = workload.spec.active.unwrap_or(true);
    if !active
        || workload.condition_is_true(condition_types::EVICTED)
        || !workload.condition_is_true(condition_types::ADMITTED)
    {
        return PodsReadyTimeout::NotTiming;
    }
    let current = pods_ready(workload);
    let (cause, since, timeout) = match current {
        Some(c) if c.is_true() => return PodsReadyTimeout::NotTiming,
        None => (
            pods_ready_reasons::WAIT_FOR_START,
            admitted_at(workload),
            config.timeout,
        ),
        Some(c)
            if c.reason == pods_ready_reasons::WAIT_FOR_START || c.reason == LEGACY_WAIT_REASON =>
        {
            (
                pods_ready_reasons::WAIT_FOR_START,
                admitted_at(workload),
                config.timeout,
            )
        }
        Some(c) if c.reason == pods_ready_reasons::WAIT_FOR_RECOVERY => {
            match config.recovery_timeout {
                Some(timeout) => (
                    pods_ready_reasons::WAIT_FOR_RECOVERY,
                    Some(&c.last_transition_time),
                    timeout,
                ),
                None => return PodsReadyTimeout::NotTiming,
            }
        }
        Some(_) => return PodsReadyTimeout::NotTiming,
    };
    // Admitted=True always has a transition time; a Workload without one is timed from now.
    let deadline = later(since.unwrap_or(now), timeout);
    if deadline.0 > now.0 {
        return PodsReadyTimeout::RunsOutAt(deadline);
    }
    let previous = workload
        .status
        .as_ref()
        .and_then(|s| s.requeue_state.as_ref());
    let count = previous.and_then(|s| s.count).unwrap_or(0);
    let strategy = &config.requeuing_strategy;
    if strategy
        .backoff_limit_count
        .is_some_and(|limit| i64::from(count) + 1 > i64::from(limit))
    {
        return PodsReadyTimeout::Deactivate {
            message: REQUEUING_LIMIT_MESSAGE,
        };
    }
    let count = count.saturating_add(1);
    let backoff = requeue_backoff(
        count,
        strategy.backoff_base_seconds,
        strategy.backoff_max_seconds,
    );
    // A later requeueAt another component set is kept, as Kueue keeps it.
    let requeue_at = later(now, backoff);
    let requeue_at = match previous.and_then(|s| s.requeue_at.clone()) {
        Some(existing) if existing.0 > requeue_at.0 => existing,
        _ => requeue_at,
    };
    PodsReadyTimeout::Evict {
        message: format!(
            "Exceeded the PodsReady timeout {}/{}",
            workload.metadata.namespace.as_deref().unwrap_or_default(),
            workload.metadata.name.as_deref().unwrap_or_default()
        ),
        underlying_cause: cause,
        requeue_state: RequeueState {
            count: Some(count),
            requeue_at: Some(requeue_at),
        },
    }
}

/// Kueue's requeue backoff before the `count`-th requeue: `base × 2^(count−1)` seconds, at most
/// `max` seconds. Kueue adds a random jitter of up to 0.01% on top; kuota leaves it out so that
/// the same Workload gets the same time on every replica and after a restart.
pub fn requeue_backoff(count: i32, base_seconds: u32, max_seconds: u32) -> Duration {
    let doublings = u32::try_from(count.saturating_sub(1)).unwrap_or(0);
    let seconds = u64::from(base_seconds)
        .saturating_mul(2u64.checked_pow(doublings).unwrap_or(u64::MAX))
        .min(u64::from(max_seconds));
    Duration::from_secs(seconds)
}

fn later(time: &Time, by: Duration) -> Time {
    let by = SignedDuration::try_from(by).unwrap_or(SignedDuration::MAX);
    Time(
        time.0
            .checked_add(by)
            .unwrap_or(k8s_openapi::jiff::Timestamp::MAX),
    )
}

fn pods_ready(workload: &Workload) -> Option<&Condition> {
    workload.condition(condition_types::PODS_READY)
}

fn admitted_at(workload: &Workload) -> Option<&Time> {
    workload
        .condition(condition_types::ADMITTED)
        .map(|c| &c.last_transition_time)
}

#[cfg(test)]
mod tests;
