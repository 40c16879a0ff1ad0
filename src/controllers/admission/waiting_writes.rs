//! The admission loop's side of waiting reasons: which are sent now and which wait for a later
//! period of the budget in `waiting_reasons.rs`.

use std::cmp::Reverse;

use tokio::time::Instant;

use super::AdmissionLoop;
use super::plan::Planned;
use crate::api::Workload;

impl AdmissionLoop {
    /// Sends the waiting reasons the period's budget allows, front of the queue first (higher
    /// priority, then older), and keeps the rest due.
    pub(super) fn send_waiting_reasons(&mut self, mut waiting: Vec<(String, Planned)>) {
        let order = |workload: Option<&Workload>| {
            workload.map(|w| {
                (
                    Reverse(w.spec.priority.unwrap_or(0)),
                    w.metadata.creation_timestamp.clone().map(|t| t.0),
                )
            })
        };
        waiting.sort_by_cached_key(|(key, _)| (order(self.workloads.get(key)), key.clone()));
        let granted = self
            .waiting_reasons
            .take_room(waiting.len(), Instant::now());
        let later = waiting.split_off(granted);
        for (key, planned) in waiting {
            self.send(key, planned);
        }
        if !later.is_empty() {
            tracing::debug!(
                deferred = later.len(),
                "waiting reasons beyond this period's budget wait for the next"
            );
        }
        self.waiting_reasons
            .defer(later.into_iter().map(|(key, _)| key));
    }

    /// Makes the deferred waiting reasons due again once a new period has room for them.
    pub(super) fn due_waiting_reasons(&mut self) {
        let due = self.waiting_reasons.take_due(Instant::now());
        self.dirty.extend(due);
    }
}
