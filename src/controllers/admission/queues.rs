//! Queue status and gauges from the engine's queue report, written only where they changed.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use tokio::time::Instant;

use super::{AdmissionLoop, REPORT_PERIOD, WriteRequest};
use crate::controllers::queue_status::{self, QueueWrite};

impl AdmissionLoop {
    /// Queue status and gauges, at most every [`REPORT_PERIOD`].
    pub(super) fn report(&mut self) {
        if !self.report_due
            || self
                .last_report
                .is_some_and(|at| at.elapsed() < REPORT_PERIOD)
        {
            return;
        }
        self.report_due = false;
        self.last_report = Some(Instant::now());
        let now = Time(k8s_openapi::jiff::Timestamp::now());
        let report = self.state.engine().queue_report();
        self.metrics
            .queues(&report, self.state.engine(), &self.queues.local_queues);
        let differing: Vec<(String, QueueWrite)> =
            queue_status::changed(&self.queues, &report, &now)
                .into_iter()
                .map(|write| (write.key(), write))
                .collect();
        let count = differing.len();
        // A queue whose write is still in flight waits for its answer, and takes no budget.
        let candidates: Vec<(String, QueueWrite)> = differing
            .into_iter()
            .filter(|(key, _)| !self.queue_writes_in_flight.contains_key(key))
            .collect();
        let picked = self.queue_pacer.pick(candidates, Instant::now());
        if picked.len() < count {
            // Computed again at a later report, with what has changed by then.
            self.report_due = true;
        }
        for (key, write) in picked {
            self.send_queue(key, write);
        }
        self.release_finalizers(&report);
    }

    fn send_queue(&mut self, key: String, write: QueueWrite) {
        // The status is taken as written until the watch says otherwise, so the next report
        // does not write it again; a failed write puts the object back as it was.
        let Some(before) = self.queues.put(write.clone()) else {
            return;
        };
        self.queue_writes_in_flight.insert(key.clone(), before);
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
}
