//! Queue status and `resource-in-use` finalizers from the engine's queue report, written only
//! where they changed, at the rate [`super::reports::Reports`] paces them to.

use super::finalizers::releasable;
use super::requests::FinalizedObject;
use super::{AdmissionLoop, WriteRequest};
use crate::clock::Reading;
use crate::controllers::queue_status::{self, QueueKey, QueueWrite};
use crate::controllers::writer::WriteError;
use crate::engine::queue_report::QueueReport;

impl AdmissionLoop {
    /// Writes the queue status `report` shows where it changed, as the pacer allows, and asks
    /// for the finalizer removals that are due.
    pub(super) fn write_report(&mut self, report: &QueueReport, now: &Reading) {
        let time = now.time();
        self.reports.conflicts.retain_current(&self.reports.objects);
        // A queue whose write conflicted waits for the watch to bring the newer version, whose
        // arrival makes a report due.
        let differing: Vec<(QueueKey, QueueWrite)> =
            queue_status::changed(&self.reports.objects, report, &time)
                .into_iter()
                .map(|write| (write.key(), write))
                .filter(|(key, _)| !self.reports.conflicts.holds(key))
                .collect();
        let count = differing.len();
        // A queue whose write is still in flight waits for its answer, and takes no budget.
        let candidates: Vec<(QueueKey, QueueWrite)> = differing
            .into_iter()
            .filter(|(key, _)| !self.reports.in_flight.contains_key(key))
            .collect();
        let picked = self.reports.pacer.pick(candidates, now.instant);
        if picked.len() < count {
            // Computed again at a later report, with what has changed by then.
            self.reports.due = true;
        }
        for (key, write) in picked {
            self.send_queue(key, write);
        }
        let due = releasable(&self.reports.objects, report);
        for target in self.reports.finalizers_to_ask(due) {
            let object = FinalizedObject::of(&target);
            tracing::info!(%object, "no longer in use; its resource-in-use finalizer is removed");
            let request = WriteRequest::Finalizers {
                object,
                target: Box::new(target),
            };
            if self.requests.send(request).is_err() {
                tracing::error!("the writer stopped; finalizers are no longer removed");
            }
        }
    }

    fn send_queue(&mut self, key: QueueKey, write: QueueWrite) {
        // The status is taken as written until the watch says otherwise, so the next report
        // does not write it again; a failed write puts the object back as it was.
        let Some(before) = self.reports.objects.put(write.clone()) else {
            return;
        };
        self.reports.in_flight.insert(key.clone(), before);
        if self
            .requests
            .send(WriteRequest::Queue {
                key,
                write: Box::new(write),
            })
            .is_err()
        {
            tracing::error!("the writer stopped; queue status is no longer written");
        }
    }

    /// The answer to a queue status write fenced on version `fenced_on`. One that landed leaves
    /// the queue as stored, so the next write is fenced on that; one that conflicted waits for
    /// the newer version the watch brings, and its status is then computed from that.
    pub(super) fn queue_written(
        &mut self,
        key: QueueKey,
        fenced_on: Option<String>,
        result: Result<Box<QueueWrite>, WriteError>,
    ) {
        let before = self.reports.in_flight.remove(&key);
        match result {
            Ok(stored) => self.reports.objects.written(*stored, fenced_on.as_deref()),
            Err(error) => {
                if let Some(before) = before {
                    self.reports.objects.restore(before);
                }
                if matches!(error, WriteError::Conflict(_)) {
                    tracing::debug!(%error, "queue status computed again from the newer version");
                    self.reports.conflicts.insert(key, fenced_on);
                } else {
                    tracing::warn!(%error, "queue status not written; it is computed again");
                }
                self.reports.due = true;
            }
        }
    }

    /// Forgets what is held of queues that were deleted: their series, as Kueue's
    /// `ClearClusterQueueMetrics` and `ClearLocalQueueMetrics` drop them, and their pacing and
    /// conflicts. A write still in flight is answered and then finds the queue gone.
    pub(super) fn queues_deleted(&mut self, deleted: &[QueueKey]) {
        for queue in deleted {
            self.metrics.queue_deleted(queue);
            self.reports.pacer.forget(queue);
        }
        if !deleted.is_empty() {
            self.reports.conflicts.retain_current(&self.reports.objects);
        }
    }

    /// The answer to a finalizer removal: one that failed is asked for again.
    pub(super) fn finalizers_written(
        &mut self,
        object: FinalizedObject,
        result: Result<(), WriteError>,
    ) {
        if let Err(error) = result {
            tracing::warn!(%object, %error, "finalizer not removed; tried again");
            self.reports.finalizing.remove(&object);
            self.reports.due = true;
        }
    }
}
