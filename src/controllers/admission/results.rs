//! What the admission loop does when a write lands or fails, and with the retries and requeue
//! backoffs whose time has come.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use tokio::time::Instant;

use super::plan::{Effect, Planned};
use super::read::answered;
use super::{AdmissionLoop, RETRY_AFTER, Written, fallback};
use crate::api::Workload;
use crate::controllers::events::for_change;
use crate::controllers::watches::SharedWorkload;
use crate::controllers::writer::WorkloadWriteError;
use crate::status::requeue::{backoff_finished, waiting_until};

impl AdmissionLoop {
    pub(super) fn written(&mut self, written: Written) {
        match written {
            Written::Workload {
                key,
                before,
                planned,
                result,
            } => self.workload_written(key, before, *planned, result),
            Written::Deactivated { key, result } => self.deactivation_written(key, result),
            Written::Finalizers { key, result } => {
                if let Err(error) = result {
                    tracing::warn!(object = %key, %error, "finalizer not removed; tried again");
                    self.finalizing.remove(&key);
                    self.report_due = true;
                }
            }
            Written::Queue { key, result } => {
                let before = self.queue_writes_in_flight.remove(&key);
                if let Err(error) = result {
                    tracing::warn!(%error, "queue status not written; it is computed again");
                    if let Some(before) = before {
                        self.queues.restore(before);
                    }
                    self.report_due = true;
                }
            }
        }
    }

    pub(super) fn workload_written(
        &mut self,
        key: String,
        before: SharedWorkload,
        planned: Planned,
        result: Result<Box<Workload>, WorkloadWriteError>,
    ) {
        self.in_flight.remove(&key);
        let result = result.map_err(|WorkloadWriteError { error, stored }| {
            // What the requests before the failed one stored is read; the failed one was fenced
            // on it.
            let fenced_on = match stored {
                Some(stored) => {
                    let version = stored.metadata.resource_version.clone();
                    if self.workloads.contains_key(&key) {
                        self.seen(answered(*stored));
                    }
                    version
                }
                None => before.metadata.resource_version.clone(),
            };
            (error, fenced_on)
        });
        match result {
            Ok(stored) => {
                let now = Time(k8s_openapi::jiff::Timestamp::now());
                let placement = if planned.effect == Effect::Claim {
                    self.placements.remove(&key).unwrap_or_default()
                } else {
                    Vec::new()
                };
                let replaced = self.replacing.remove(&key);
                let events = match &replaced {
                    // A replacement keeps the reservation: no new admission to record.
                    Some(replacing) if planned.effect == Effect::Claim => {
                        self.replacement_written(replacing, &before, &stored, &now);
                        Vec::new()
                    }
                    _ => for_change(&before, &planned.status, &now, &placement),
                };
                self.node_failure_eviction_written(&before, &planned.status);
                if replaced.is_none() || planned.effect != Effect::Claim {
                    self.metrics.written(
                        &before,
                        &planned.status,
                        &now,
                        &placement,
                        self.state.engine().structure(),
                        &self.queues.local_queues,
                    );
                }
                self.events.record(&before, events);
                if self
                    .assumed
                    .get(&key)
                    .is_some_and(|a| a.status == planned.status)
                {
                    self.assumed.remove(&key);
                }
                tracing::debug!(workload = %key, effect = ?planned.effect, "status written");
                // A Workload deleted while its write was in flight stays deleted.
                if self.workloads.contains_key(&key) {
                    self.seen(answered(*stored));
                }
            }
            Err((error, fenced_on))
                if planned.effect == Effect::Claim && error.may_have_landed() =>
            {
                // As if still in flight: the admission may be stored, so what was decided for the
                // workload since stays decided and is written at the retry, and until a newer
                // version is read the workload is seen with that admission.
                tracing::info!(workload = %key, %error, "admission may have been written; it is tried again");
                self.may_be_stored(&key, fenced_on, &planned);
                if !self.assumed.contains_key(&key)
                    && let Some(seen) = self.as_api_may_show(&key)
                {
                    self.state.restore_workload(&seen, fallback());
                }
                self.retries
                    .insert(key.clone(), Instant::now() + RETRY_AFTER);
            }
            Err((error, fenced_on)) => {
                tracing::info!(workload = %key, %error, effect = ?planned.effect, "write failed; the decision is undone");
                self.replacing.remove(&key);
                let dropped = self.assumed.remove(&key);
                if planned.effect == Effect::Release || dropped.is_some_and(|a| a.frees) {
                    self.release_failed = true;
                }
                if error.is_transient() {
                    self.retries
                        .insert(key.clone(), Instant::now() + RETRY_AFTER);
                } else {
                    self.stale.insert(key.clone(), fenced_on);
                }
                if let Some(read) = self.as_api_may_show(&key) {
                    match waiting_until(&read).cloned() {
                        Some(until) => {
                            self.backoff.insert(key, until);
                        }
                        None => {
                            // A backoff the failed write would have started does not apply.
                            self.backoff.remove(&key);
                            self.state.restore_workload(&read, fallback());
                        }
                    }
                }
            }
        }
        self.resolve_held();
    }

    pub(super) fn due_retries(&mut self) {
        let now = Instant::now();
        let due: Vec<String> = self
            .retries
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(key, _)| key.clone())
            .collect();
        for key in due {
            self.retries.remove(&key);
            self.dirty.insert(key);
        }
        self.end_backoffs();
    }

    /// Ends the backoffs that ran out by marking those workloads requeued; the write's answer
    /// brings them into the engine.
    pub(super) fn end_backoffs(&mut self) {
        let now = Time(k8s_openapi::jiff::Timestamp::now());
        let due: Vec<String> = self
            .backoff
            .iter()
            .filter(|(key, until)| **until <= now && !self.in_flight.contains_key(*key))
            .map(|(key, _)| key.clone())
            .collect();
        for key in due {
            self.backoff.remove(&key);
            let Some(read) = self.workloads.get(&key) else {
                continue;
            };
            let status = backoff_finished(
                &read.status.clone().unwrap_or_default(),
                &now,
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
