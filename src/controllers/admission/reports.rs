//! The queue objects as read and the pacing of what is written of them: one report at most every
//! [`REPORT_PERIOD`], each queue's status at most every [`QUEUE_STATUS_PERIOD`] within a budget
//! across queues, and each finalizer removal asked for once per version read.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::time::Instant;

use super::requests::FinalizedObject;
use crate::controllers::queue_status::{Conflicts, Pacer, QueueKey, QueueObjects, QueueWrite};
use crate::controllers::writer::FinalizerTarget;

/// How often queue status and gauges are refreshed at most, and retries and deferred waiting
/// reasons looked at.
pub const REPORT_PERIOD: Duration = Duration::from_millis(500);

/// The shortest time between two status writes of one queue.
pub const QUEUE_STATUS_PERIOD: Duration = Duration::from_secs(1);
/// Queue status writes a second, across all queues: with many queues changing at once (a
/// status write each per period would be one request per queue and second), each is written
/// less often rather than taking API server capacity from admissions.
const QUEUE_STATUS_WRITES_PER_SECOND: u32 = 10;
/// Queue status writes that may go out at once after a quiet spell: one second's budget, so
/// that up to that many queues changing together (an admission changes its ClusterQueue,
/// LocalQueue and cohorts) are written at the next report as without a budget, reports being
/// [`REPORT_PERIOD`] apart; the long-run rate stays [`QUEUE_STATUS_WRITES_PER_SECOND`].
pub const QUEUE_STATUS_BURST: u32 = 10;

/// The queue objects as read and what is being written of them.
pub(super) struct Reports {
    /// Queues and flavors as read, for merging their status and releasing their finalizers.
    pub objects: QueueObjects,
    /// Whether something changed that the next report shows.
    pub due: bool,
    /// When the last report ran.
    pub last: Option<Instant>,
    /// Queue status writes in flight, with the object as it was before.
    pub in_flight: BTreeMap<QueueKey, QueueWrite>,
    pub pacer: Pacer<QueueKey>,
    /// Queues whose status write conflicted, waiting for the watch to bring a newer version.
    pub conflicts: Conflicts,
    /// Finalizer removals asked for, with the version they were asked at.
    pub finalizing: BTreeMap<FinalizedObject, Option<String>>,
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
            conflicts: Conflicts::default(),
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
    pub fn finalizers_to_ask(&mut self, due: Vec<FinalizerTarget>) -> Vec<FinalizerTarget> {
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
