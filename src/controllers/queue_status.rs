//! ClusterQueue, LocalQueue and Cohort status as the engine's queue report gives it, merged into
//! the status each object has, and kept only where it differs, so an unchanged queue costs no
//! write.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;
use tokio::time::Instant;

use crate::api::{ClusterQueue, Cohort, LocalQueue, ResourceFlavor};
use crate::engine::queue_report::QueueReport;
use crate::status::queues::{cluster_queue_status, cohort_status, local_queue_status};

/// The queue objects as last read, by name (LocalQueues by `namespace/name`), and the
/// ResourceFlavors, whose deletion waits on the queues that name them.
#[derive(Default)]
pub struct QueueObjects {
    pub cluster_queues: BTreeMap<String, ClusterQueue>,
    pub local_queues: BTreeMap<String, LocalQueue>,
    pub cohorts: BTreeMap<String, Cohort>,
    pub resource_flavors: BTreeMap<String, ResourceFlavor>,
}

impl QueueObjects {
    /// Stores the object `write` carries; returns the one it replaces.
    pub fn put(&mut self, write: QueueWrite) -> Option<QueueWrite> {
        match write {
            QueueWrite::ClusterQueue(q) => self
                .cluster_queues
                .insert(q.name_any(), q)
                .map(QueueWrite::ClusterQueue),
            QueueWrite::LocalQueue(q) => self
                .local_queues
                .insert(local_queue_key(&q), q)
                .map(QueueWrite::LocalQueue),
            QueueWrite::Cohort(c) => self.cohorts.insert(c.name_any(), c).map(QueueWrite::Cohort),
        }
    }

    /// Puts back the object as it was before a status write that failed, unless the watch has
    /// since removed it: a queue deleted while its write was in flight stays deleted (else a
    /// ClusterQueue brought back would keep naming its flavors, whose deletion would wait on
    /// it forever).
    pub fn restore(&mut self, before: QueueWrite) {
        fn back<K>(objects: &mut BTreeMap<String, K>, key: String, object: K) {
            if let Some(slot) = objects.get_mut(&key) {
                *slot = object;
            }
        }
        match before {
            QueueWrite::ClusterQueue(q) => back(&mut self.cluster_queues, q.name_any(), q),
            QueueWrite::LocalQueue(q) => back(&mut self.local_queues, local_queue_key(&q), q),
            QueueWrite::Cohort(c) => back(&mut self.cohorts, c.name_any(), c),
        }
    }
}

/// A LocalQueue's key: `namespace/name`.
pub fn local_queue_key(queue: &LocalQueue) -> String {
    format!(
        "{}/{}",
        queue.namespace().unwrap_or_default(),
        queue.name_any()
    )
}

/// A queue object with the status to write.
#[derive(Clone, Debug, PartialEq)]
pub enum QueueWrite {
    ClusterQueue(ClusterQueue),
    LocalQueue(LocalQueue),
    Cohort(Cohort),
}

/// Every queue whose status differs from what `report` says, with its new status.
pub fn changed(objects: &QueueObjects, report: &QueueReport, now: &Time) -> Vec<QueueWrite> {
    let mut writes = Vec::new();
    for cq in &report.cluster_queues {
        let Some(object) = objects.cluster_queues.get(&cq.name) else {
            continue;
        };
        let status =
            cluster_queue_status(object.status.as_ref(), cq, now, object.metadata.generation);
        if object.status.as_ref() != Some(&status) {
            let mut object = object.clone();
            object.status = Some(status);
            writes.push(QueueWrite::ClusterQueue(object));
        }
    }
    for lq in &report.local_queues {
        let key = format!("{}/{}", lq.namespace, lq.name);
        let Some(object) = objects.local_queues.get(&key) else {
            continue;
        };
        let status = local_queue_status(
            object.status.as_ref(),
            report,
            lq,
            now,
            object.metadata.generation,
        );
        if object.status.as_ref() != Some(&status) {
            let mut object = object.clone();
            object.status = Some(status);
            writes.push(QueueWrite::LocalQueue(object));
        }
    }
    for cohort in &report.cohorts {
        let Some(object) = objects.cohorts.get(&cohort.name) else {
            continue;
        };
        let status = cohort_status(object.status.as_ref(), cohort);
        if object.status.as_ref() != Some(&status) {
            let mut object = object.clone();
            object.status = Some(status);
            writes.push(QueueWrite::Cohort(object));
        }
    }
    writes
}

/// At most one status write per queue per period. Kueue's queue controllers batch their
/// updates too (`UpdatesBatchPeriod`, 1 s); a queue whose status changes again meanwhile is
/// written once the period is over, with the status computed then, so it ends correct.
pub struct Pacer {
    period: Duration,
    /// When each queue's status was last sent, by `Kind/name`.
    last: BTreeMap<String, Instant>,
}

impl Pacer {
    pub fn new(period: Duration) -> Self {
        Pacer {
            period,
            last: BTreeMap::new(),
        }
    }

    /// Whether the status of `key` may be sent at `now`; if so, it counts as sent then.
    pub fn admit(&mut self, key: &str, now: Instant) -> bool {
        let period = self.period;
        // Queues not written for a period are forgotten: the map holds only recent ones.
        self.last
            .retain(|_, at| now.saturating_duration_since(*at) < period);
        if self.last.contains_key(key) {
            return false;
        }
        self.last.insert(key.to_string(), now);
        true
    }

    /// Moves every recorded send `by` into the past, as if that much time had gone by.
    #[cfg(test)]
    pub fn age(&mut self, by: Duration) {
        for at in self.last.values_mut() {
            *at = at.checked_sub(by).unwrap_or(*at);
        }
    }
}

#[cfg(test)]
mod tests;
