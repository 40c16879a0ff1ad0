//! Waiting reasons written at a bounded rate, front of the queue first.
//!
//! kuota evaluates every waiting Workload whenever its cohort changes, so in a burst of thousands
//! nearly every one would get a `QuotaReserved=False` write (and its event) before it is admitted,
//! one API request per Workload. Kueue shows a waiting reason only on the queue heads it tried.
//! Here every waiting Workload gets its reason, but at most [`PER_PERIOD`] of them per period,
//! those showing none yet first, then highest priority and oldest; the others stay due, in that order, and each period takes
//! only as many of them as it has room for, so thousands deferred are not planned again every
//! period. One admitted meanwhile is written once, with its admission.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::time::Duration;

use crate::api::Condition;
use k8s_openapi::jiff::Timestamp;
use tokio::time::Instant;

use crate::api::keys::condition_types::QUOTA_RESERVED;
use crate::api::{HasConditions, Workload, WorkloadStatus};
use crate::engine::WorkloadKey;

/// How many waiting reasons may be written per period.
pub(super) const PER_PERIOD: usize = 10;
/// The period [`PER_PERIOD`] counts over.
pub(super) const PERIOD: Duration = Duration::from_secs(1);

/// Where a Workload stands in its queue for its waiting reason: one that shows no reason yet
/// first, so rewrites of reasons already shown (their messages change as usage does) never
/// starve it; then higher priority, then older.
pub(super) type QueueOrder = (bool, Reverse<i32>, Option<Timestamp>);

pub(super) fn queue_order(workload: &Workload) -> QueueOrder {
    (
        workload.condition(QUOTA_RESERVED).is_some(),
        Reverse(workload.spec.priority.unwrap_or(0)),
        workload.metadata.creation_timestamp.as_ref().map(|t| t.0),
    )
}

/// The budget of the current period and the Workloads whose waiting reason is due.
#[derive(Default)]
pub(super) struct WaitingReasons {
    period_start: Option<Instant>,
    sent: usize,
    /// Workloads whose waiting reason did not fit a period's budget, each with its place in the
    /// queue.
    deferred: BTreeMap<WorkloadKey, QueueOrder>,
}

impl WaitingReasons {
    /// How many more waiting reasons may be written at `now`.
    fn room(&mut self, now: Instant) -> usize {
        let expired = self
            .period_start
            .is_none_or(|start| now.saturating_duration_since(start) >= PERIOD);
        if expired {
            self.period_start = Some(now);
            self.sent = 0;
        }
        PER_PERIOD.saturating_sub(self.sent)
    }

    /// Takes up to `wanted` of the period's room at `now`; returns how many were granted.
    pub(super) fn take_room(&mut self, wanted: usize, now: Instant) -> usize {
        let granted = wanted.min(self.room(now));
        self.sent += granted;
        granted
    }

    /// Keeps `waiting` due for a later period.
    pub(super) fn defer(&mut self, waiting: impl IntoIterator<Item = (QueueOrder, WorkloadKey)>) {
        self.deferred
            .extend(waiting.into_iter().map(|(order, key)| (key, order)));
    }

    /// The front of the deferred Workloads, as many as the period at `now` has room for. Picked
    /// once a period, so one pass over them costs less than keeping a second, ordered index.
    pub(super) fn take_due(&mut self, now: Instant) -> Vec<WorkloadKey> {
        if self.deferred.is_empty() {
            return Vec::new();
        }
        let room = self.room(now);
        if room == 0 {
            // Runs every pass: a spent budget must not cost a walk over thousands deferred.
            return Vec::new();
        }
        let mut front: Vec<(&QueueOrder, &WorkloadKey)> = self
            .deferred
            .iter()
            .map(|(key, order)| (order, key))
            .collect();
        if front.len() > room {
            front.select_nth_unstable(room);
            front.truncate(room);
        }
        let due: Vec<WorkloadKey> = front.into_iter().map(|(_, key)| key.clone()).collect();
        for key in &due {
            self.deferred.remove(key);
        }
        due
    }

    /// Forgets `key` (deleted, or written some other way).
    pub(super) fn forget(&mut self, key: &WorkloadKey) {
        self.deferred.remove(key);
    }

    /// Whether any Workload waits for its reason to be written.
    pub(super) fn any(&self) -> bool {
        !self.deferred.is_empty()
    }

    /// How many Workloads wait for their reason to be written.
    #[cfg(test)]
    pub(super) fn deferred(&self) -> usize {
        self.deferred.len()
    }
}

/// Whether going from `old` to `new` changes nothing but the `QuotaReserved` condition, and leaves
/// it `False`: the write only tells why the Workload waits. Compared in place: this runs for
/// every waiting Workload of a pass.
pub(super) fn only_waiting_reason(old: Option<&WorkloadStatus>, new: &WorkloadStatus) -> bool {
    let empty = WorkloadStatus::default();
    let old = old.unwrap_or(&empty);
    let waiting = new.condition_is_false(QUOTA_RESERVED);
    // Every field but the conditions, named so that a field added later is compared too.
    let WorkloadStatus {
        conditions: _,
        admission,
        requeue_state,
        reclaimable_pods,
        admission_checks,
        resource_requests,
        accumulated_past_execution_time_seconds,
        scheduling_stats,
        nominated_cluster_names,
        cluster_name,
        unhealthy_nodes,
        preemption_gates,
    } = new;
    waiting
        && other_conditions(old).eq(other_conditions(new))
        && *admission == old.admission
        && *requeue_state == old.requeue_state
        && *reclaimable_pods == old.reclaimable_pods
        && *admission_checks == old.admission_checks
        && *resource_requests == old.resource_requests
        && *accumulated_past_execution_time_seconds == old.accumulated_past_execution_time_seconds
        && *scheduling_stats == old.scheduling_stats
        && *nominated_cluster_names == old.nominated_cluster_names
        && *cluster_name == old.cluster_name
        && *unhealthy_nodes == old.unhealthy_nodes
        && *preemption_gates == old.preemption_gates
}

fn other_conditions(status: &WorkloadStatus) -> impl Iterator<Item = &Condition> {
    status
        .conditions
        .iter()
        .filter(|c| c.type_ != QUOTA_RESERVED)
}
