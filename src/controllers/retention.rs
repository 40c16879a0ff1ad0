//! Kueue's `objectRetentionPolicies.workloads` as a task of its own, fed by the shared Workload
//! watch. While this replica leads it deletes each Workload whose `Finished` condition has been
//! true for `afterFinished` (fenced on the Workload read, UID and resource version, so one that
//! changed meanwhile is looked at again), and the Job of each Workload Kueue deactivated once
//! `afterDeactivatedByKueue` has passed since the eviction (fenced on the Job's UID), recording
//! Kueue's `Deleted` event on what it deleted. It runs in the [`WorkQueue`], each Workload's
//! deadline its own. The Job and pod integrations neither stop nor recreate anything for a
//! finished job whose Workload is gone.

mod schedule;

use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::ResourceExt;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use self::schedule::{Expired, Schedule};
use super::events::{EventSink, WorkloadEvent};
use super::watches::{Change, SharedWorkload, shared::SharedWatches};
use super::work_queue::{Dirty, Task, Verdict, WorkQueue, Writes};
use super::writer::{WriteError, Writer};
use crate::api::ObjectKey;
use crate::backoff::{jittered, random_unit};
use crate::clock::{Clock, Reading};
use crate::config::WorkloadRetention;

/// Watch changes waiting for the task.
const INPUT_DEPTH: usize = 1024;
/// Wait before a deletion that failed for a transient reason or a conflict is tried again.
const RETRY_AFTER: Duration = Duration::from_secs(1);
/// Wait before a deletion the API server refused is tried again.
const REFUSED_RETRY_AFTER: Duration = Duration::from_secs(60);
/// Each retry's wait is lengthened by up to this part of itself at random, so deletions that
/// failed together (Workloads whose periods ended together) are not all tried again together.
const RETRY_JITTER: f64 = 0.2;

/// Kueue's event on what was deleted at the end of a retention period.
fn deleted_event(expired: &Expired) -> WorkloadEvent {
    let note = match expired {
        Expired::Workload => "Deleted finished workload due to elapsed retention",
        Expired::Job { .. } => "Deleted job: deactivation retention period expired",
    };
    WorkloadEvent {
        warning: false,
        reason: "Deleted".to_owned(),
        note: note.to_owned(),
    }
}

/// Subscribes to the Workload watch and returns the task, which keeps Workloads that ended for
/// the periods of `policy`.
pub fn start(
    policy: WorkloadRetention,
    writer: Writer,
    events: EventSink,
    leading: watch::Receiver<bool>,
    watches: &mut SharedWatches,
    clock: Clock,
) -> impl Future<Output = ()> + use<> {
    let (inputs, received) = mpsc::channel(INPUT_DEPTH);
    watches.workloads.subscribe(&inputs, std::convert::identity);
    let task = RetentionTask {
        schedule: Schedule::new(policy),
        writer,
        events,
        listed: false,
        jitter: random_unit,
    };
    WorkQueue::new(task, leading, clock).run(received)
}

/// The rules: a Workload whose retention period ended is deleted, or its Job.
struct RetentionTask {
    schedule: Schedule,
    writer: Writer,
    events: EventSink,
    /// Whether the Workload watch delivered its first list.
    listed: bool,
    /// The random draw (in `[0, 1)`) that lengthens each retry's wait.
    jitter: fn() -> f64,
}

impl Task for RetentionTask {
    type Input = Change<SharedWorkload>;
    type Key = ObjectKey;
    type Write = (SharedWorkload, Expired);
    type Answer = (SharedWorkload, Expired, Result<(), WriteError>);

    /// Deletions in flight at once; the rest wait for their turn.
    const MAX_IN_FLIGHT: usize = 16;

    fn take(
        &mut self,
        change: Change<SharedWorkload>,
        _now: Reading,
        _dirty: &mut Dirty<ObjectKey>,
    ) {
        self.listed |= matches!(change, Change::Reset(_));
        // What the change makes due is marked by `due`, at its time.
        self.schedule.take(change);
    }

    fn listed(&self) -> bool {
        self.listed
    }

    fn keys(&self) -> Vec<ObjectKey> {
        self.schedule.keys()
    }

    fn due(&mut self, now: Reading, dirty: &mut Dirty<ObjectKey>) -> Option<Instant> {
        dirty.extend(self.schedule.due_keys(now.wall));
        let next = self.schedule.next_after(now.wall)?;
        let wait = Duration::try_from(next.duration_since(now.wall)).unwrap_or(Duration::ZERO);
        Some(now.instant + wait)
    }

    fn decide(
        &mut self,
        key: &ObjectKey,
        now: Reading,
        writes: &mut Writes<'_, ObjectKey, (SharedWorkload, Expired)>,
    ) {
        if let Some(due) = self.schedule.due(key, now.wall) {
            writes.send(key.clone(), due);
        }
    }

    fn write(
        &self,
        (workload, expired): (SharedWorkload, Expired),
    ) -> BoxFuture<'static, Self::Answer> {
        let writer = self.writer.clone();
        async move {
            let result = match &expired {
                Expired::Workload => writer.delete_workload(&workload).await,
                Expired::Job { name, uid } => {
                    let namespace = workload.namespace().unwrap_or_default();
                    writer.delete_job(&namespace, name, uid).await
                }
            };
            (workload, expired, result)
        }
        .boxed()
    }

    /// Done once deleted or gone; otherwise the Workload's deadline moves to the retry (the
    /// schedule keeps the retries, each after its own wait).
    fn answered(
        &mut self,
        key: &ObjectKey,
        (workload, expired, result): Self::Answer,
        now: Reading,
        _dirty: &mut Dirty<ObjectKey>,
    ) -> Verdict {
        let retry_after = deletion_answered(&self.events, &workload, &expired, result);
        let retry_at = retry_after.map(|after| {
            let after = jittered(after, RETRY_JITTER, (self.jitter)());
            now.wall
                .checked_add(SignedDuration::try_from(after).unwrap_or_default())
                .unwrap_or(Timestamp::MAX)
        });
        self.schedule.answered(key, retry_at);
        Verdict::Settled
    }
}

/// Logs and records the answer to a deletion; returns when to try again, if at all.
fn deletion_answered(
    events: &EventSink,
    workload: &SharedWorkload,
    expired: &Expired,
    result: Result<(), WriteError>,
) -> Option<Duration> {
    let namespace = workload.namespace().unwrap_or_default();
    match result {
        Ok(()) => {
            match expired {
                Expired::Workload => {
                    tracing::info!(workload = %ObjectKey::of(&**workload), "finished Workload deleted after its retention period");
                    events.record(workload, vec![deleted_event(expired)]);
                }
                Expired::Job { name, uid } => {
                    tracing::info!(job = %ObjectKey::new(namespace.clone(), name.clone()), "Job of a deactivated Workload deleted after its retention period");
                    let job = ObjectReference {
                        api_version: Some("batch/v1".to_owned()),
                        kind: Some("Job".to_owned()),
                        namespace: Some(namespace),
                        name: Some(name.clone()),
                        uid: Some(uid.clone()),
                        ..ObjectReference::default()
                    };
                    events.record_on(job, vec![deleted_event(expired)]);
                }
            }
            None
        }
        Err(WriteError::NotFound(_)) => None,
        Err(error @ WriteError::Refused { .. }) => {
            tracing::warn!(%error, "a deletion at the end of a retention period was refused");
            Some(REFUSED_RETRY_AFTER)
        }
        Err(error) => {
            tracing::debug!(%error, "not deleted at the end of its retention period yet");
            Some(RETRY_AFTER)
        }
    }
}

#[cfg(test)]
mod tests;
