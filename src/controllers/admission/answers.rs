//! What the API tells the admission loop about its writes: answers, and newer versions read,
//! settle what the ledger holds; retries come due.

use super::AdmissionLoop;
use super::ledger::{Answer, Reads};
use super::plan::{Effect, Planned};
use super::read::answered;
use crate::api::Workload;
use crate::backoff::random_unit;
use crate::clock::Reading;
use crate::controllers::events::for_change;
use crate::controllers::watches::SharedWorkload;
use crate::controllers::writer::{WorkloadWriteError, WriteError};
use crate::engine::WorkloadKey;

impl AdmissionLoop {
    pub(super) fn workload_written(
        &mut self,
        key: WorkloadKey,
        before: SharedWorkload,
        planned: Planned,
        result: Result<Box<Workload>, WorkloadWriteError>,
        now: &Reading,
    ) {
        self.ledger.answer_arrived(&key);
        let result = result.map_err(|WorkloadWriteError { error, stored }| {
            // What the requests before the failed one stored is read; the failed one was fenced
            // on it.
            let fenced_on = match stored {
                Some(stored) => {
                    let version = stored.metadata.resource_version.clone();
                    if self.workloads.read(&key).is_some() {
                        self.seen(answered(*stored), now);
                    }
                    version
                }
                None => before.metadata.resource_version.clone(),
            };
            (error, fenced_on)
        });
        // Only a write tried again counts toward its backoff.
        let retry_at = match &result {
            Ok(_) => {
                self.ledger.write_landed(&key);
                now.instant
            }
            Err((error, _)) if error.is_transient() || error.may_have_landed() => {
                now.instant + self.ledger.retry_wait(&key, random_unit())
            }
            Err(_) => now.instant,
        };
        match result {
            Ok(stored) => {
                let time = now.time();
                let landed =
                    self.ledger
                        .answered(&key, &planned, Answer::Stored, &self.workloads, retry_at);
                let events = match &landed.replaced {
                    // A replacement keeps the reservation: no new admission to record.
                    Some(replacing) if planned.effect == Effect::Claim => {
                        self.replacement_written(replacing, &before, &stored, &time);
                        Vec::new()
                    }
                    _ => for_change(&before, &planned.status, &time, &landed.placement),
                };
                self.node_failure_eviction_written(&before, &planned.status);
                if landed.replaced.is_none() || planned.effect != Effect::Claim {
                    self.metrics.written(
                        &before,
                        &planned.status,
                        &time,
                        &landed.placement,
                        self.state.engine().structure(),
                        &self.reports.objects.local_queues,
                    );
                }
                self.events.record(&before, events);
                tracing::debug!(workload = %key, effect = ?planned.effect, "status written");
                // A Workload deleted while its write was in flight stays deleted.
                if self.workloads.read(&key).is_some() {
                    self.seen(answered(*stored), now);
                }
            }
            Err((error, fenced_on))
                if planned.effect == Effect::Claim && error.may_have_landed() =>
            {
                // As if still in flight: the admission may be stored, so what was decided for the
                // workload since stays decided and is written at the retry, and until a newer
                // version is read the workload is seen with that admission.
                tracing::info!(workload = %key, %error, "admission may have been written; it is tried again");
                self.ledger.answered(
                    &key,
                    &planned,
                    Answer::MayHaveLanded { fenced_on },
                    &self.workloads,
                    retry_at,
                );
                if self.ledger.assumed(&key).is_none()
                    && let Some(seen) = self.ledger.as_api_may_show(&key, &self.workloads)
                {
                    self.restore(&seen);
                }
            }
            Err((error, fenced_on)) => {
                tracing::info!(workload = %key, %error, effect = ?planned.effect, "write failed; the decision is undone");
                let answer = Answer::Refused {
                    transient: error.is_transient(),
                    fenced_on,
                    retry_at,
                };
                self.ledger
                    .answered(&key, &planned, answer, &self.workloads, retry_at);
                self.back_to_read(&key);
            }
        }
        self.resolve_held();
    }

    /// The answer to a `spec.active: false` write.
    pub(super) fn deactivation_written(
        &mut self,
        key: WorkloadKey,
        fenced_on: Option<String>,
        result: Result<Box<Workload>, WriteError>,
        now: &Reading,
    ) {
        self.ledger.answer_arrived(&key);
        match result {
            Ok(stored) => {
                self.ledger.write_landed(&key);
                tracing::debug!(workload = %key, "deactivated");
                if self.workloads.read(&key).is_some() {
                    self.seen(answered(*stored), now);
                }
            }
            Err(error) => {
                tracing::info!(workload = %key, %error, "deactivation not written; tried again");
                if error.is_transient() {
                    let wait = self.ledger.retry_wait(&key, random_unit());
                    self.ledger.retry_at(key, now.instant + wait);
                } else if self
                    .workloads
                    .read(&key)
                    .is_some_and(|read| read.metadata.resource_version == fenced_on)
                {
                    // A newer version read before this answer settles the conflict already.
                    self.ledger.conflicted(key, fenced_on);
                }
            }
        }
    }

    /// `read`, a version of `key` just read, settles a conflict or an admission that may have
    /// been stored at another version.
    pub(super) fn settled_by(&mut self, key: &WorkloadKey, read: &Workload) {
        self.ledger.seen(key, read);
    }

    /// `key` was deleted: nothing decided about it holds any more, and claims held behind it
    /// may go.
    pub(super) fn forget_decisions(&mut self, key: &WorkloadKey) {
        self.ledger.forget(key);
        self.resolve_held();
    }

    /// Marks the workloads whose retry is due at `now`, and ends the backoffs that ran out.
    pub(super) fn due_retries(&mut self, now: &Reading) {
        self.ledger.retries_due(now.instant);
        self.end_backoffs(&now.time());
    }
}
