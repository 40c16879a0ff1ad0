//! ClusterQueue, LocalQueue and Cohort status as the engine's queue report gives it, merged into
//! the status each object has, and kept only where it differs, so an unchanged queue costs no
//! write.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;

use crate::api::{ClusterQueue, Cohort, LocalQueue, ObjectKey, ResourceFlavor};
use crate::engine::queue_report::QueueReport;
use crate::status::queues::{cluster_queue_status, cohort_status, local_queue_status};

mod pacer;
pub use self::pacer::Pacer;

/// The queue objects as last read, by name (LocalQueues by namespace and name), and the
/// ResourceFlavors, whose deletion waits on the queues that name them.
#[derive(Default)]
pub struct QueueObjects {
    pub cluster_queues: BTreeMap<String, ClusterQueue>,
    pub local_queues: BTreeMap<ObjectKey, LocalQueue>,
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
                .insert(ObjectKey::of(&q), q)
                .map(QueueWrite::LocalQueue),
            QueueWrite::Cohort(c) => self.cohorts.insert(c.name_any(), c).map(QueueWrite::Cohort),
        }
    }

    /// Puts back the object as it was before a status write that failed, unless the watch has
    /// since removed it: a queue deleted while its write was in flight stays deleted (else a
    /// ClusterQueue brought back would keep naming its flavors, whose deletion would wait on
    /// it forever).
    pub fn restore(&mut self, before: QueueWrite) {
        fn back<K: Ord, T>(objects: &mut BTreeMap<K, T>, key: K, object: T) {
            if let Some(slot) = objects.get_mut(&key) {
                *slot = object;
            }
        }
        match before {
            QueueWrite::ClusterQueue(q) => back(&mut self.cluster_queues, q.name_any(), q),
            QueueWrite::LocalQueue(q) => back(&mut self.local_queues, ObjectKey::of(&q), q),
            QueueWrite::Cohort(c) => back(&mut self.cohorts, c.name_any(), c),
        }
    }
}

/// A queue's identity, for pacing its status writes and keeping one in flight at a time.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QueueKey {
    ClusterQueue(String),
    LocalQueue(ObjectKey),
    Cohort(String),
}

/// A queue object with the status to write.
#[derive(Clone, Debug, PartialEq)]
pub enum QueueWrite {
    ClusterQueue(ClusterQueue),
    LocalQueue(LocalQueue),
    Cohort(Cohort),
}

impl QueueWrite {
    /// The queue's key for pacing and writes in flight.
    pub fn key(&self) -> QueueKey {
        match self {
            QueueWrite::ClusterQueue(q) => QueueKey::ClusterQueue(q.name_any()),
            QueueWrite::LocalQueue(q) => QueueKey::LocalQueue(ObjectKey::of(q)),
            QueueWrite::Cohort(c) => QueueKey::Cohort(c.name_any()),
        }
    }
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
        let key = ObjectKey::new(lq.namespace.as_str(), lq.name.as_str());
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

#[cfg(test)]
mod tests;
