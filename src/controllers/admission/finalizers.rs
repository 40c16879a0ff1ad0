//! Kueue's `resource-in-use` finalizer on ClusterQueues and ResourceFlavors: a ClusterQueue being
//! deleted goes once no workload holds quota in it, a ResourceFlavor being deleted once no
//! ClusterQueue names it. Until then the object stays, so quota in use never loses its queue or
//! flavor.

use kube::ResourceExt;

use crate::api::keys::finalizers::RESOURCE_IN_USE;
use crate::controllers::queue_status::QueueObjects;
use crate::controllers::writer::{FinalizedKind, FinalizerTarget};
use crate::engine::queue_report::QueueReport;

fn target<K: ResourceExt>(kind: FinalizedKind, object: &K) -> Option<FinalizerTarget> {
    object.meta().deletion_timestamp.as_ref()?;
    let finalizers = object.finalizers();
    if !finalizers.iter().any(|f| f == RESOURCE_IN_USE) {
        return None;
    }
    Some(FinalizerTarget {
        kind,
        name: object.name_any(),
        resource_version: object.resource_version(),
        keep: finalizers
            .iter()
            .filter(|f| *f != RESOURCE_IN_USE)
            .cloned()
            .collect(),
    })
}

/// The objects being deleted whose finalizer can go now.
pub fn releasable(objects: &QueueObjects, report: &QueueReport) -> Vec<FinalizerTarget> {
    let mut out = Vec::new();
    for queue in objects.cluster_queues.values() {
        let Some(target) = target(FinalizedKind::ClusterQueue, queue) else {
            continue;
        };
        // A queue the engine does not know (refused as invalid) holds no quota.
        let holds_quota = report
            .cluster_queues
            .iter()
            .any(|cq| cq.name == target.name && cq.reserving > 0);
        if !holds_quota {
            out.push(target);
        }
    }
    for flavor in objects.resource_flavors.values() {
        let Some(target) = target(FinalizedKind::ResourceFlavor, flavor) else {
            continue;
        };
        let named = objects.cluster_queues.values().any(|queue| {
            queue
                .spec
                .resource_groups
                .iter()
                .flat_map(|group| &group.flavors)
                .any(|f| f.name == target.name)
        });
        if !named {
            out.push(target);
        }
    }
    out
}

#[cfg(test)]
mod tests;
