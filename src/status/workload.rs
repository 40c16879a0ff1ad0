//! A Workload's `status` (admission and conditions) from the engine's final state for it, merged
//! into the status it had.

use crate::api::Condition;
use crate::api::{ConditionEntry, HasConditions};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::admission_checks;
use super::api_quantity;
use super::conditions::{Desired, is_true, message_of, set_condition};
use super::execution_time::accumulate;
use crate::api::WorkloadStatus;
use crate::api::keys::{
    admitted_reasons, condition_types, evicted_reasons, quota_reserved_reasons, requeued_reasons,
};
use crate::api::workload_status::{
    Admission as ApiAdmission, PodSetAssignment as ApiAssignment, WorkloadEviction,
};
use crate::engine::model::{Admission, PodSetAssignment};
use crate::engine::{
    EvictionReason, EvictionRecord, WorkloadState, WorkloadStatus as EngineStatus,
};

/// The API form of an engine admission.
pub fn admission(admission: &Admission) -> ApiAdmission {
    ApiAdmission {
        cluster_queue: admission.cluster_queue.clone(),
        pod_set_assignments: admission
            .pod_set_assignments
            .iter()
            .map(|a| ApiAssignment {
                name: a.name.clone(),
                flavors: a.flavors.clone(),
                resource_usage: a
                    .resource_usage
                    .iter()
                    .map(|(name, amount)| (name.clone(), api_quantity(*amount, name)))
                    .collect(),
                count: Some(a.count),
                topology_assignment: a.topology_assignment.clone().map(Box::new),
                delayed_topology_request: a.delayed_topology,
            })
            .collect(),
    }
}

/// Sets conditions on one Workload status, all at `now` and the Workload's generation.
struct Writer<'a> {
    status: &'a mut WorkloadStatus,
    now: &'a Time,
    generation: Option<i64>,
}

impl Writer<'_> {
    fn set(&mut self, type_: &str, status: bool, reason: &str, message: String) {
        let desired = Desired {
            type_,
            status,
            reason,
            message,
            observed_generation: self.generation,
        };
        set_condition(&mut self.status.conditions, desired, self.now);
    }

    /// Kueue's quota reservation turns a condition of `type_` that is still True False, keeping
    /// what happened in the message.
    fn reset_if_true(&mut self, type_: &str) {
        if !is_true(&self.status.conditions, type_) {
            return;
        }
        let previously = format!(
            "Previously: {}",
            message_of(&self.status.conditions, type_).unwrap_or_default()
        );
        self.set(
            type_,
            false,
            quota_reserved_reasons::QUOTA_RESERVED,
            previously,
        );
    }

    /// `Admitted` turns False; the admission's time joins the accumulated execution time.
    fn no_reservation(&mut self) {
        accumulate(self.status, self.now);
        self.set(
            condition_types::ADMITTED,
            false,
            admitted_reasons::NO_RESERVATION,
            "The workload has no reservation".to_string(),
        );
    }

    /// Counts an eviction in `schedulingStats` when the Workload is newly evicted, so a status
    /// computed again for the same eviction counts it once.
    fn count_eviction(&mut self, reason: &str, cause: &str) {
        if is_true(&self.status.conditions, condition_types::EVICTED) {
            return;
        }
        let stats = self
            .status
            .scheduling_stats
            .get_or_insert_with(Default::default);
        match stats
            .evictions
            .iter_mut()
            .find(|e| e.reason == reason && e.underlying_cause == cause)
        {
            Some(counted) => counted.count = counted.count.saturating_add(1),
            None => stats.evictions.push(WorkloadEviction {
                reason: reason.to_string(),
                underlying_cause: cause.to_string(),
                count: 1,
            }),
        }
    }

    fn eviction(&mut self, eviction: &EvictionRecord) {
        let (reason, cause, message) = match eviction.reason {
            EvictionReason::Deactivated => {
                // Kueue forgets the requeue backoff of a deactivated workload; reactivation
                // starts over.
                self.status.requeue_state = None;
                self.deactivation(&eviction.message)
            }
            other => (other.as_str().to_string(), None, eviction.message.clone()),
        };
        self.count_eviction(
            eviction.reason.as_str(),
            cause.as_deref().unwrap_or_default(),
        );
        self.set(condition_types::EVICTED, true, &reason, message.clone());
        if let Some(preemption) = eviction.preemption {
            self.set(
                condition_types::PREEMPTED,
                true,
                preemption.as_str(),
                eviction.message.clone(),
            );
        }
        let (requeued, reason) = match eviction.reason {
            EvictionReason::Preempted => (true, requeued_reasons::PREEMPTED),
            EvictionReason::ClusterQueueStopped => (false, requeued_reasons::CLUSTER_QUEUE_STOPPED),
            EvictionReason::LocalQueueStopped => (false, requeued_reasons::LOCAL_QUEUE_STOPPED),
            EvictionReason::Deactivated => (false, requeued_reasons::DEACTIVATED),
            EvictionReason::NodeFailures => (true, requeued_reasons::NODE_FAILURES),
            // Requeued only once the backoff in `requeueState` has run out.
            EvictionReason::PodsReadyTimeout => (false, requeued_reasons::PODS_READY_TIMEOUT),
            EvictionReason::AdmissionCheck => (false, requeued_reasons::ADMISSION_CHECK),
        };
        self.set(condition_types::REQUEUED, requeued, reason, message);
    }

    /// Kueue's workload controller marks a Workload deactivated earlier and active again
    /// `Requeued=True` with reason `Reactivated`.
    fn reactivated(&mut self) {
        let deactivated = self
            .status
            .condition(condition_types::REQUEUED)
            .is_some_and(|c| c.is_false() && c.reason == requeued_reasons::DEACTIVATED);
        if deactivated {
            self.set(
                condition_types::REQUEUED,
                true,
                requeued_reasons::REACTIVATED,
                "The workload was reactivated".to_string(),
            );
        }
    }

    /// The `Evicted` reason, underlying cause and message of a deactivation. Kueue's workload
    /// controller turns a `DeactivationTarget` condition (the requeuing limit, a rejected
    /// admission check) into reason `DeactivatedDueTo<its reason>` and drops that condition; an
    /// eviction already written that way keeps its words when the status is computed again.
    fn deactivation(&mut self, message: &str) -> (String, Option<String>, String) {
        let conditions = &mut self.status.conditions;
        let target = conditions
            .iter()
            .position(|c| c.type_ == condition_types::DEACTIVATION_TARGET && c.is_true());
        if let Some(index) = target {
            let target = conditions.remove(index);
            return (
                format!("{}DueTo{}", evicted_reasons::DEACTIVATED, target.reason),
                Some(target.reason.into()),
                format!("{message} due to {}", target.message),
            );
        }
        let deactivated_with_cause = format!("{}DueTo", evicted_reasons::DEACTIVATED);
        if let Some(written) = conditions.iter().find(|c| {
            c.type_ == condition_types::EVICTED
                && c.is_true()
                && c.reason.starts_with(&deactivated_with_cause)
        }) {
            let cause = written.reason[deactivated_with_cause.len()..].to_string();
            return (
                written.reason.to_string(),
                Some(cause),
                written.message.to_string(),
            );
        }
        (
            evicted_reasons::DEACTIVATED.to_string(),
            None,
            message.to_string(),
        )
    }
}

/// Whether two messages say the same but for numbers: words (runs of letters, digits and `.-_/`)
/// that start with a digit, such as counts and quantities, are compared as equal.
fn same_but_numbers(a: &str, b: &str) -> bool {
    fn words(text: &str) -> impl Iterator<Item = &str> {
        let is_word = |c: char| c.is_ascii_alphanumeric() || ".-_/".contains(c);
        let mut rest = text;
        std::iter::from_fn(move || {
            let first = rest.chars().next()?;
            let split = rest
                .find(|c: char| is_word(c) != is_word(first))
                .unwrap_or(rest.len());
            let (word, tail) = rest.split_at(split);
            rest = tail;
            Some(if word.starts_with(|c: char| c.is_ascii_digit()) {
                "#"
            } else {
                word
            })
        })
    }
    words(a).eq(words(b))
}

/// The message of a waiting Workload's `QuotaReserved=False`. Kueue rewrites it only when it tries
/// the Workload again as the head of its queue; kuota evaluates every waiting Workload whenever its
/// cohort changes, so a message that changed only in its numbers ("5 more needed" → "3 more
/// needed") keeps the one shown, which saves a status write and a Warning event per waiting
/// Workload and quota change. A new reason or new words are written.
fn pending_message(conditions: &[Condition], reason: &str, message: &str) -> String {
    match conditions.condition(condition_types::QUOTA_RESERVED) {
        // Kueue keeps the message of the hold as the integration wrote it.
        Some(shown)
            if reason == quota_reserved_reasons::ON_HOLD
                && shown.is_false()
                && shown.reason == reason =>
        {
            shown.message.to_string()
        }
        Some(shown)
            if shown.is_false()
                && shown.reason == reason
                && same_but_numbers(&shown.message, message) =>
        {
            shown.message.to_string()
        }
        _ => message.to_string(),
    }
}

/// The status a Workload has after the engine's decisions, merged into `old`: the engine owns
/// `admission` and the conditions it decides; every other field, and every other condition, stays
/// as `old` has it. A condition's `lastTransitionTime` moves only when its status flips: to the
/// reservation time ([`crate::engine::CarriedState::quota_reserved_at`]) for what an admission
/// sets, so the API shows the time the engine orders preemption candidates by, else to `now`.
pub fn workload_status(
    old: Option<&WorkloadStatus>,
    state: &WorkloadState,
    now: &Time,
    generation: Option<i64>,
) -> WorkloadStatus {
    let mut status = old.cloned().unwrap_or_default();
    let reserved = reservation_time(state);
    let mut w = Writer {
        status: &mut status,
        now,
        generation,
    };
    match &state.status {
        EngineStatus::Admitted(admitted) => {
            // Kueue decides `Admitted` only for a Workload not admitted yet: once admitted, a
            // check that changes its mind evicts it (Retry) or deactivates it (Rejected), and a
            // check added to its ClusterQueue later is listed but does not stop it.
            let mut stays_admitted = is_true(&w.status.conditions, condition_types::ADMITTED);
            // What the admission changes, changed when quota was reserved: the engine orders
            // preemption candidates by that time and a restarted one reads it back from here.
            if let Some(at) = &reserved {
                // Reserved again after a reservation the status still shows (evicted and
                // admitted again before a write): the conditions start over at the new one.
                let reserved_again = w.status.conditions.iter().any(|c| {
                    c.type_ == condition_types::QUOTA_RESERVED
                        && c.is_true()
                        && c.last_transition_time != *at
                });
                if reserved_again {
                    accumulate(w.status, at);
                    restamp_reservation(&mut w.status.conditions, at);
                    stays_admitted = false;
                }
                w.now = at;
            }
            let cq = &admitted.cluster_queue;
            w.status.admission = Some(admission(admitted));
            w.set(
                condition_types::QUOTA_RESERVED,
                true,
                quota_reserved_reasons::QUOTA_RESERVED,
                format!("Quota reserved in ClusterQueue {cq}"),
            );
            // Admitted at the reservation without checks; with checks, once all said Ready and
            // every delayed topology request is placed.
            admission_checks::sync(
                &mut w.status.admission_checks,
                &state.admission_checks,
                w.now,
            );
            let checks_ready = admission_checks::all_ready(&w.status.admission_checks);
            let placing = admitted
                .pod_set_assignments
                .iter()
                .any(PodSetAssignment::awaits_placement);
            if stays_admitted || checks_ready && !placing {
                if !state.admission_checks.is_empty() {
                    w.now = now;
                }
                w.set(
                    condition_types::ADMITTED,
                    true,
                    admitted_reasons::ADMITTED,
                    format!("The workload is admitted by ClusterQueue {cq}"),
                );
            } else {
                let (reason, message) = if checks_ready {
                    (
                        admitted_reasons::PENDING_DELAYED_TOPOLOGY_REQUESTS,
                        "There are pending delayed topology requests",
                    )
                } else {
                    (
                        admitted_reasons::UNSATISFIED_ADMISSION_CHECKS,
                        "The workload has not all checks ready",
                    )
                };
                w.set(
                    condition_types::ADMITTED,
                    false,
                    reason,
                    message.to_string(),
                );
            }
            // Re-admission after an eviction turns the old conditions off, keeping what happened.
            if let Some(eviction) = &state.last_eviction {
                let previously = format!("Previously: {}", eviction.message);
                w.set(
                    condition_types::EVICTED,
                    false,
                    quota_reserved_reasons::QUOTA_RESERVED,
                    previously.clone(),
                );
                if eviction.preemption.is_some() {
                    w.set(
                        condition_types::PREEMPTED,
                        false,
                        quota_reserved_reasons::QUOTA_RESERVED,
                        previously,
                    );
                }
            }
            for type_ in [
                condition_types::EVICTED,
                condition_types::PREEMPTED,
                condition_types::BLOCKED_ON_PREEMPTION_GATES,
            ] {
                w.reset_if_true(type_);
            }
            w.reactivated();
        }
        EngineStatus::Pending { reason, message } => {
            if w.status.admission.take().is_some() {
                admission_checks::reset_on_eviction(&mut w.status.admission_checks, now);
            }
            admission_checks::sync(&mut w.status.admission_checks, &state.admission_checks, now);
            let message = pending_message(&w.status.conditions, reason.as_str(), message);
            w.set(
                condition_types::QUOTA_RESERVED,
                false,
                reason.as_str(),
                message,
            );
            if state.last_eviction.is_some()
                || is_true(&w.status.conditions, condition_types::ADMITTED)
            {
                w.no_reservation();
            }
            match &state.last_eviction {
                // The deactivation is over: the Workload waits again, requeued.
                Some(eviction)
                    if eviction.reason == EvictionReason::Deactivated && state.active =>
                {
                    w.reactivated();
                }
                Some(eviction) => w.eviction(eviction),
                None => {}
            }
        }
        EngineStatus::Finished => {}
    }
    status
}

/// When the engine reserved quota for the workload, as a condition time.
fn reservation_time(state: &WorkloadState) -> Option<Time> {
    let at = state.carried.quota_reserved_at?;
    Timestamp::from_millisecond(at).ok().map(Time)
}

/// Moves the `lastTransitionTime` of `QuotaReserved` and `Admitted` to `at`.
fn restamp_reservation(conditions: &mut [Condition], at: &Time) {
    for c in conditions {
        if c.type_ == condition_types::QUOTA_RESERVED || c.type_ == condition_types::ADMITTED {
            c.last_transition_time = at.clone();
        }
    }
}

/// Adds what Kueue's hot swap leaves on a Workload whose failed nodes had no replacement and that
/// was evicted with `message`: `Evicted=True` and `Requeued=True` with reason `NodeFailures` while
/// it waits again, or `Evicted=False` with the previous message once it was admitted again. When
/// the engine evicted it later itself (`state` records that), its conditions stand.
pub fn node_failure_eviction(
    status: &mut WorkloadStatus,
    state: &WorkloadState,
    message: &str,
    now: &Time,
    generation: Option<i64>,
) {
    if state.last_eviction.is_some() {
        return;
    }
    let mut w = Writer {
        status,
        now,
        generation,
    };
    if w.status.admission.is_some() {
        // It lost its reservation and got one again: both conditions changed then, even though
        // they end as they began.
        let reserved = reservation_time(state);
        let reserved = reserved.as_ref().unwrap_or(now);
        accumulate(w.status, reserved);
        restamp_reservation(&mut w.status.conditions, reserved);
        w.now = reserved;
        w.set(
            condition_types::EVICTED,
            false,
            quota_reserved_reasons::QUOTA_RESERVED,
            format!("Previously: {message}"),
        );
        return;
    }
    w.no_reservation();
    w.count_eviction(evicted_reasons::NODE_FAILURES, "");
    w.set(
        condition_types::EVICTED,
        true,
        evicted_reasons::NODE_FAILURES,
        message.to_string(),
    );
    w.set(
        condition_types::REQUEUED,
        true,
        requeued_reasons::NODE_FAILURES,
        message.to_string(),
    );
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod check_tests;
