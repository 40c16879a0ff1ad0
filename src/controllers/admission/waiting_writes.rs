//! The admission loop's side of waiting reasons: which are sent now and which wait for a later
//! period of the budget in `waiting_reasons.rs`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use tokio::time::Instant;

use super::AdmissionLoop;
use super::waiting_reasons::queue_order;

impl AdmissionLoop {
    /// Sends the waiting reasons the period's budget allows, front of the queue first (higher
    /// priority, then older), and keeps the rest due. Their statuses are planned again only
    /// when sent, so a deep queue holds no planned status for each of its Workloads.
    pub(super) fn send_waiting_reasons(&mut self, waiting: Vec<String>, now: &Time) {
        let mut waiting: Vec<_> = waiting
            .into_iter()
            .filter_map(|key| Some((queue_order(self.workloads.get(&key)?), key)))
            .collect();
        waiting.sort();
        let granted = self
            .waiting_reasons
            .take_room(waiting.len(), Instant::now());
        let later = waiting.split_off(granted);
        for (_, key) in waiting {
            if let Some(planned) = self.plan_write(&key, now) {
                self.send(key, planned);
            }
        }
        if !later.is_empty() {
            tracing::debug!(
                deferred = later.len(),
                "waiting reasons beyond this period's budget wait for the next"
            );
        }
        self.waiting_reasons.defer(later);
    }

    /// Makes the front of the deferred waiting reasons due again once a new period has room.
    pub(super) fn due_waiting_reasons(&mut self) {
        let due = self.waiting_reasons.take_due(Instant::now());
        self.dirty.extend(due);
    }
}
