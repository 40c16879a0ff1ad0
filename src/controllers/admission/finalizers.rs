//! Kueue's `resource-in-use` finalizer on ClusterQueues and ResourceFlavors: a ClusterQueue being
//! deleted goes once no workload holds quota in it, a ResourceFlavor being deleted once no
//! ClusterQueue names it. Until then the object stays, so quota in use never loses its queue or
//! flavor.

use kube::ResourceExt;

use super::AdmissionLoop;
use super::WriteRequest;
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

fn key_of(target: &FinalizerTarget) -> String {
    format!("{}/{}", target.kind.as_str(), target.name)
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
            .any(|cq| cq.name == target.name && cq.admitted > 0);
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

impl AdmissionLoop {
    /// Asks for the finalizer removals that are due and not already asked for.
    /// An object is asked for once per version read, so a removal that landed is not asked for
    /// again before the watch brings the object without it.
    pub(super) fn release_finalizers(&mut self, report: &QueueReport) {
        let due = releasable(&self.queues, report);
        self.finalizing
            .retain(|key, _| due.iter().any(|t| key_of(t) == *key));
        for target in due {
            let key = key_of(&target);
            if self.finalizing.get(&key) == Some(&target.resource_version) {
                continue;
            }
            self.finalizing
                .insert(key.clone(), target.resource_version.clone());
            tracing::info!(object = %key, "no longer in use; its resource-in-use finalizer is removed");
            let request = WriteRequest::Finalizers {
                key,
                target: Box::new(target),
            };
            if self.requests.send(request).is_err() {
                tracing::error!("the writer stopped; finalizers are no longer removed");
            }
        }
    }
}

#[cfg(test)]
mod tests;
