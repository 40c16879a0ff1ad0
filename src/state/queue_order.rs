//! A Workload's place in its queue in time: Kueue's queue-order timestamp. The engine orders
//! pending workloads of equal priority by it (in a ClusterQueue, across ClusterQueues in a cycle,
//! in fair sharing's tournament) and compares it in `LowerOrNewerEqualPriority` preemption.
//!
//! It is read from the Workload's conditions only, so a restarted controller orders the queues
//! as the one before it.

use crate::api::ConditionEntry;
use crate::api::keys::{condition_types, evicted_reasons, preempted_reasons};
use crate::api::{Condition, WorkloadStatus};
use crate::engine::model::RequeuingTimestamp;

/// What decides the queue-order time besides the Workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueOrdering {
    /// `waitForPodsReady.requeuingStrategy.timestamp`.
    pub requeuing_timestamp: RequeuingTimestamp,
    /// Gate `PrioritySortingWithinCohort`.
    pub priority_sorting_within_cohort: bool,
}

impl Default for QueueOrdering {
    /// Kueue's defaults.
    fn default() -> Self {
        QueueOrdering {
            requeuing_timestamp: RequeuingTimestamp::Eviction,
            priority_sorting_within_cohort: true,
        }
    }
}

impl QueueOrdering {
    /// The queue-order time, in milliseconds, of a Workload created at `creation`, as Kueue's
    /// `GetQueueOrderTimestamp` picks it: while it is evicted by a PodsReady timeout (strategy
    /// `Eviction` only) or by an AdmissionCheck, the eviction's time, so it queues behind what
    /// waited meanwhile; with `PrioritySortingWithinCohort` off, a Workload preempted to reclaim
    /// quota while borrowing queues a millisecond after its preemption, behind its preemptor;
    /// otherwise its creation.
    pub fn time(&self, status: Option<&WorkloadStatus>, creation: i64) -> i64 {
        let true_condition = |type_: &str| {
            status?
                .conditions
                .iter()
                .find(|c| c.type_ == type_ && c.is_true())
        };
        let at = |c: &Condition| c.last_transition_time.0.as_millisecond();
        if let Some(evicted) = true_condition(condition_types::EVICTED) {
            let by_timeout = evicted.reason == evicted_reasons::PODS_READY_TIMEOUT
                && self.requeuing_timestamp == RequeuingTimestamp::Eviction;
            if by_timeout || evicted.reason == evicted_reasons::ADMISSION_CHECK {
                return at(evicted);
            }
        }
        if !self.priority_sorting_within_cohort
            && let Some(preempted) = true_condition(condition_types::PREEMPTED)
            && preempted.reason == preempted_reasons::IN_COHORT_RECLAIM_WHILE_BORROWING
        {
            return at(preempted).saturating_add(1);
        }
        creation
    }
}

#[cfg(test)]
mod tests;
