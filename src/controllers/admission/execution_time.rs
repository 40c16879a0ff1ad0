//! Kueue's maximum execution time in the admission loop: each admitted Workload with
//! `spec.maximumExecutionTimeSeconds` has a deadline read from its own status (see
//! [`crate::status::execution_time`]), so a restart finds the same one; once it passes, the
//! Workload is marked `DeactivationTarget` with `MaximumExecutionTimeExceeded`, and the
//! deactivation flow of [`super::deactivation`] makes it inactive and the engine evicts it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::AdmissionLoop;
use super::plan::{Effect, Planned};
use crate::api::Workload;
use crate::status::execution_time::{execution_deadline, execution_time_exceeded};

impl AdmissionLoop {
    /// Notes when a Workload just read runs out of execution time, if it can.
    pub(super) fn track_execution_time(&mut self, key: &str, workload: &Workload) {
        match execution_deadline(workload) {
            Some(deadline) => {
                self.execution_deadlines.insert(key.to_string(), deadline);
            }
            None => {
                self.execution_deadlines.remove(key);
            }
        }
    }

    /// Marks every Workload whose execution time ran out by `now` and that has no write in
    /// flight, no retry pending and no conflict at the version read. The deadline stays until a
    /// version showing the mark is read, so a mark that is not written is asked for again.
    pub(super) fn execution_times_run_out(&mut self, now: &Time) {
        let due: Vec<String> = self
            .execution_deadlines
            .iter()
            .filter(|(key, deadline)| {
                **deadline <= now.0
                    && !self.in_flight.contains_key(*key)
                    && !self.assumed.contains_key(*key)
                    && !self.retries.contains_key(*key)
            })
            .map(|(key, _)| key.clone())
            .collect();
        for key in due {
            let Some(read) = self.workloads.get(&key).cloned() else {
                continue;
            };
            if self
                .stale
                .get(&key)
                .is_some_and(|rv| *rv == read.metadata.resource_version)
            {
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
