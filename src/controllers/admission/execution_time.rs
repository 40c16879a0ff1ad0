//! Kueue's maximum execution time in the admission loop: each admitted Workload with
//! `spec.maximumExecutionTimeSeconds` has a deadline read from its own status (see
//! [`crate::status::execution_time`]), so a restart finds the same one; once it passes, the
//! Workload is marked `DeactivationTarget` with `MaximumExecutionTimeExceeded`, and the
//! deactivation flow of [`super::deactivation`] makes it inactive and the engine evicts it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::AdmissionLoop;
use super::ledger::Reads;
use super::plan::{Effect, Planned};
use crate::engine::WorkloadKey;
use crate::status::execution_time::execution_time_exceeded;

impl AdmissionLoop {
    /// Marks every Workload whose execution time ran out by `now` and that has no write in
    /// flight, no retry pending and no conflict at the version read. The deadline stays until a
    /// version showing the mark is read, so a mark that is not written is asked for again.
    pub(super) fn execution_times_run_out(&mut self, now: &Time) {
        let due: Vec<WorkloadKey> = self
            .watched
            .execution_deadlines
            .iter()
            .filter(|(key, deadline)| {
                **deadline <= now.0
                    && !self.ledger.in_flight(key)
                    && self.ledger.assumed(key).is_none()
                    && !self.ledger.retry_pending(key)
            })
            .map(|(key, _)| key.clone())
            .collect();
        for key in due {
            let Some(read) = self.workloads.read(&key).cloned() else {
                continue;
            };
            if self.ledger.stale_at(&key, &read.metadata.resource_version) {
                continue;
            }
            tracing::info!(workload = %key, "maximum execution time exceeded; the Workload is deactivated");
            let status = execution_time_exceeded(
                &read.status.clone().unwrap_or_default(),
                now,
                read.metadata.generation,
            );
            let planned = Planned {
                effect: Effect::Update,
                status,
                annotations: None,
            };
            self.send(key, planned);
        }
    }
}
