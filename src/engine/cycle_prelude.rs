//! The prelude of an admission cycle: before flavors are assigned, evict what stop policies or
//! deactivation drain (Kueue's `HoldAndDrain` and `spec.active=false`) and report the workloads
//! that cannot queue.

use std::collections::HashSet;

use super::decision::{CycleOutcome, EvictionReason, PendingReason};
use super::model::StopPolicy;
use super::scheduler::Engine;
use super::state::InactiveCause;

impl Engine {
    /// Prelude of a cycle: evict what stop policies or deactivation drain, and report workloads that
    /// cannot queue. Looks at every workload after a re-index, otherwise only at those added or
    /// replaced since the last cycle.
    pub(super) fn prelude(&mut self, out: &mut CycleOutcome) {
        let pending = std::mem::take(&mut self.prelude_pending);
        if std::mem::take(&mut self.prelude_all) {
            for index in 0..self.compiled.workloads.len() as u32 {
                self.prelude_one(index, out);
            }
            for cq in 0..self.compiled.cqs.len() {
                let Some(message) = self.compiled.cqs[cq].inactive.clone() else {
                    continue;
                };
                let reason = self.inactive_reason(cq as u32);
                let pending: Vec<u32> = self.compiled.queues[cq]
                    .pending
                    .iter()
                    .map(|k| k.index)
                    .collect();
                for index in pending {
                    self.set_pending(index, reason, &message, out);
                }
            }
        } else {
            // A workload replaced more than once since the last cycle is listed once per change,
            // under its one slot: it is looked at once, where its last change puts it.
            let mut seen = HashSet::with_capacity(pending.len());
            let mut pending: Vec<u32> = pending
                .into_iter()
                .rev()
                .filter(|i| seen.insert(*i))
                .collect();
            pending.reverse();
            for index in pending {
                self.prelude_one(index, out);
                let w = &self.compiled.workloads[index as usize];
                let inactive = w
                    .cq
                    .filter(|_| w.holding.is_none() && w.blocked.is_none() && !w.finished)
                    .and_then(|cq| Some((cq, self.compiled.cqs[cq as usize].inactive.clone()?)));
                if let Some((cq, message)) = inactive {
                    let reason = self.inactive_reason(cq);
                    self.set_pending(index, reason, &message, out);
                }
            }
        }
    }

    /// Why a workload of an inactive ClusterQueue waits: a queue being deleted is Kueue's
    /// `Misconfigured`, any other inactive one holds its workloads as `Suspended`.
    fn inactive_reason(&self, cq: u32) -> PendingReason {
        if self.compiled.cqs[cq as usize]
            .inactive_causes
            .contains(&InactiveCause::Terminating)
        {
            PendingReason::Misconfigured
        } else {
            PendingReason::Suspended
        }
    }

    fn prelude_one(&mut self, index: u32, out: &mut CycleOutcome) {
        let w = &self.compiled.workloads[index as usize];
        if w.finished {
            return;
        }
        if let Some(h) = &w.holding {
            let cq_drains = h.cq.is_some_and(|cq| {
                self.compiled.cqs[cq as usize].stop_policy == StopPolicy::HoldAndDrain
            });
            let eviction = if !w.model.active {
                Some((EvictionReason::Deactivated, "The workload is deactivated"))
            } else if cq_drains {
                Some((
                    EvictionReason::ClusterQueueStopped,
                    "The ClusterQueue is stopped",
                ))
            } else if w.local_queue_stop == StopPolicy::HoldAndDrain {
                Some((
                    EvictionReason::LocalQueueStopped,
                    "The LocalQueue is stopped",
                ))
            } else {
                None
            };
            if let Some((reason, message)) = eviction {
                self.evict(index, reason, None, message.to_string(), out);
            }
        }
        let w = &self.compiled.workloads[index as usize];
        if w.holding.is_none()
            && let Some((reason, message)) = w.blocked.as_deref().cloned()
        {
            self.set_pending(index, reason, &message, out);
        }
    }
}
