//! ClusterQueue, LocalQueue and Cohort status as the engine's queue report gives it, merged into
//! the status each object has, and kept only where it differs, so an unchanged queue costs no
//! write.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::{Resource, ResourceExt};

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
    /// since removed it or brought another version: a queue deleted while its write was in
    /// flight stays deleted (else a ClusterQueue brought back would keep naming its flavors,
    /// whose deletion would wait on it forever), and a newer version stays.
    pub fn restore(&mut self, before: QueueWrite) {
        let version = before.resource_version().map(str::to_owned);
        self.replace_at(before, version.as_deref());
    }

    /// Takes the object a status write stored in place of the one it was computed from (at
    /// version `fenced_on`), so the next write is fenced on the stored version; a version the
    /// watch brought meanwhile stays.
    pub fn written(&mut self, stored: QueueWrite, fenced_on: Option<&str>) {
        self.replace_at(stored, fenced_on);
    }

    /// The resource version of the queue `key` names, if it is held.
    pub fn version(&self, key: &QueueKey) -> Option<Option<&str>> {
        match key {
            QueueKey::ClusterQueue(name) => self.cluster_queues.get(name).map(|q| q.meta()),
            QueueKey::LocalQueue(key) => self.local_queues.get(key).map(|q| q.meta()),
            QueueKey::Cohort(name) => self.cohorts.get(name).map(|c| c.meta()),
        }
        .map(|meta| meta.resource_version.as_deref())
    }

    /// Replaces the object `object` names with it if the one held is at `version`.
    fn replace_at(&mut self, object: QueueWrite, version: Option<&str>) {
        fn swap<K: Ord, T: kube::Resource>(
            objects: &mut BTreeMap<K, T>,
            key: K,
            object: T,
            version: Option<&str>,
        ) {
            if let Some(slot) = objects.get_mut(&key)
                && slot.meta().resource_version.as_deref() == version
            {
                *slot = object;
            }
        }
        match object {
            QueueWrite::ClusterQueue(q) => {
                swap(&mut self.cluster_queues, q.name_any(), q, version);
            }
            QueueWrite::LocalQueue(q) => {
                swap(&mut self.local_queues, ObjectKey::of(&q), q, version);
            }
            QueueWrite::Cohort(c) => swap(&mut self.cohorts, c.name_any(), c, version),
        }
    }
}

/// Queues whose status write was refused because the queue changed since it was read, with
/// the version the write was fenced on: none is written again until the watch brings another
/// version (a status computed from the same version would be refused again).
#[derive(Debug, Default)]
pub struct Conflicts(BTreeMap<QueueKey, Option<String>>);

impl Conflicts {
    /// Notes that the write of `key` fenced on `version` conflicted.
    pub fn insert(&mut self, key: QueueKey, version: Option<String>) {
        self.0.insert(key, version);
    }

    /// Forgets the queues the watch has brought another version of, or removed.
    pub fn retain_current(&mut self, objects: &QueueObjects) {
        self.0
            .retain(|key, version| objects.version(key) == Some(version.as_deref()));
    }

    /// Whether `key`'s status waits for a newer version.
    pub fn holds(&self, key: &QueueKey) -> bool {
        self.0.contains_key(key)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
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
    /// The resource version of the object, which its status write is fenced on.
    pub fn resource_version(&self) -> Option<&str> {
        match self {
            QueueWrite::ClusterQueue(q) => q.meta(),
            QueueWrite::LocalQueue(q) => q.meta(),
            QueueWrite::Cohort(c) => c.meta(),
        }
        .resource_version
        .as_deref()
    }

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
