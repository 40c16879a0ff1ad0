//! The quota objects a long-lived engine holds, by name, so that each can be replaced or removed
//! on its own and the engine re-indexed from them.

use std::collections::BTreeMap;

use super::model::{ClusterQueue, Cohort, LocalQueue, Namespace, ResourceFlavor, Snapshot};
use crate::api::ObjectKey;

/// The quota objects an engine holds, by name. Ordered by name, as the API server lists them, so
/// the same objects give the same engine whatever order they arrived in.
#[derive(Clone, Debug, Default)]
pub struct Structure {
    pub resource_flavors: BTreeMap<String, ResourceFlavor>,
    pub cluster_queues: BTreeMap<String, ClusterQueue>,
    pub cohorts: BTreeMap<String, Cohort>,
    pub local_queues: BTreeMap<ObjectKey, LocalQueue>,
    pub namespaces: BTreeMap<String, Namespace>,
}

impl Structure {
    pub(super) fn from_snapshot(snapshot: &Snapshot) -> Self {
        Structure {
            resource_flavors: by_name(&snapshot.resource_flavors, |f| f.name.clone()),
            cluster_queues: by_name(&snapshot.cluster_queues, |c| c.name.clone()),
            cohorts: by_name(&snapshot.cohorts, |c| c.name.clone()),
            local_queues: by_name(&snapshot.local_queues, |q| {
                ObjectKey::new(q.namespace.as_str(), q.name.as_str())
            }),
            namespaces: by_name(&snapshot.namespaces, |n| n.name.clone()),
        }
    }

    /// The quota objects as a snapshot without workloads.
    pub(super) fn snapshot(&self) -> Snapshot {
        Snapshot {
            resource_flavors: self.resource_flavors.values().cloned().collect(),
            cluster_queues: self.cluster_queues.values().cloned().collect(),
            cohorts: self.cohorts.values().cloned().collect(),
            local_queues: self.local_queues.values().cloned().collect(),
            namespaces: self.namespaces.values().cloned().collect(),
            workloads: Vec::new(),
        }
    }
}

fn by_name<K: Ord, T: Clone>(items: &[T], key: impl Fn(&T) -> K) -> BTreeMap<K, T> {
    items.iter().map(|i| (key(i), i.clone())).collect()
}
