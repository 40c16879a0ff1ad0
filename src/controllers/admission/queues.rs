//! Queue status, gauges and `resource-in-use` finalizers from the engine's queue report, written
//! only where they changed, at a paced rate.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::time::Instant;

use super::finalizers::releasable;
use super::requests::FinalizedObject;
use super::{AdmissionLoop, REPORT_PERIOD, WriteRequest};
use crate::controllers::clock::Reading;
use crate::controllers::queue_status::{self, Pacer, QueueObjects, QueueWrite};
use crate::controllers::writer::{FinalizerTarget, WriteError};
use crate::engine::queue_report::QueueReport;

/// The shortest time between two status writes of one queue.
pub(super) const QUEUE_STATUS_PERIOD: Duration = Duration::from_secs(1);
/// Queue status writes a second, across all queues: with many queues changing at once (a
/// status write each per period would be one request per queue and second), each is written
/// less often rather than taking API server capacity from admissions.
const QUEUE_STATUS_WRITES_PER_SECOND: u32 = 10;
/// Queue status writes that may go out at once after a quiet spell: one second's budget, so
/// that up to that many queues changing together (an admission changes its ClusterQueue,
/// LocalQueue and cohorts) are written at the next report as without a budget, reports being
/// [`REPORT_PERIOD`] apart; the long-run rate stays [`QUEUE_STATUS_WRITES_PER_SECOND`].
pub(super) const QUEUE_STATUS_BURST: u32 = 10;

/// The queue objects as read and what is being written of them.
pub(super) struct Reports {
    /// Queues and flavors as read, for merging their status and releasing their finalizers.
    pub objects: QueueObjects,
    /// Whether something changed that the next report shows.
    pub due: bool,
    /// When the last report ran.
    last: Option<Instant>,
    /// Queue status writes in flight, with the object as it was before.
    in_flight: BTreeMap<String, QueueWrite>,
    pacer: Pacer,
    /// Finalizer removals asked for, with the version they were asked at.
    finalizing: BTreeMap<FinalizedObject, Option<String>>,
}

impl Reports {
    pub fn new() -> Self {
        Reports {
            objects: QueueObjects::default(),
            due: true,
            last: None,
            in_flight: BTreeMap::new(),
            pacer: Pacer::new(
                QUEUE_STATUS_PERIOD,
                QUEUE_STATUS_WRITES_PER_SECOND,
                QUEUE_STATUS_BURST,
            ),
            finalizing: BTreeMap::new(),
        }
    }

    /// When the next report may run, `period` after the last.
    pub fn next_at(&self, period: Duration) -> Option<Instant> {
        self.last.map(|at| at + period)
    }

    /// The finalizer removals of `due` not asked for yet at the version read. An object is asked
    /// for once per version read, so a removal that landed is not asked for again before the
    /// watch brings the object without it.
    fn finalizers_to_ask(&mut self, due: Vec<FinalizerTarget>) -> Vec<FinalizerTarget> {
        let due: Vec<(FinalizedObject, FinalizerTarget)> = due
            .into_iter()
            .map(|t| (FinalizedObject::of(&t), t))
            .collect();
        self.finalizing
            .retain(|key, _| due.iter().any(|(object, _)| object == key));
        let mut ask = Vec::new();
        for (object, target) in due {
            if self.finalizing.get(&object) == Some(&target.resource_version) {
                continue;
            }
            self.finalizing
                .insert(object, target.resource_version.clone());
            ask.push(target);
        }
        ask
    }

    /// Whether a report is due at `now`: something changed, and the last report is at least
    /// [`REPORT_PERIOD`] old. If so, the report is taken as made now.
    pub fn take_due(&mut self, now: Instant) -> bool {
        let recent = self
            .last
            .is_some_and(|at| now.saturating_duration_since(at) < REPORT_PERIOD);
        if !self.due || recent {
            return false;
        }
        self.due = false;
        self.last = Some(now);
        true
    }
}

impl AdmissionLoop {
    /// Writes the queue status `report` shows where it changed, as the pacer allows, and asks
    /// for the finalizer removals that are due.
    pub(super) fn write_report(&mut self, report: &QueueReport, now: &Reading) {
        let time = now.time();
        let differing: Vec<(String, QueueWrite)> =
            queue_status::changed(&self.reports.objects, report, &time)
                .into_iter()
                .map(|write| (write.key(), write))
                .collect();
        let count = differing.len();
        // A queue whose write is still in flight waits for its answer, and takes no budget.
        let candidates: Vec<(String, QueueWrite)> = differing
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

    fn send_queue(&mut self, key: String, write: QueueWrite) {
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

    /// The answer to a queue status write.
    pub(super) fn queue_written(&mut self, key: String, result: Result<(), WriteError>) {
        let before = self.reports.in_flight.remove(&key);
        if let Err(error) = result {
            tracing::warn!(%error, "queue status not written; it is computed again");
            if let Some(before) = before {
                self.reports.objects.restore(before);
            }
            self.reports.due = true;
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
