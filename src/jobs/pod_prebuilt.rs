//! A pod group that names a prebuilt Workload (`kueue.x-k8s.io/prebuilt-workload-name`, as the
//! StatefulSet integration labels its pods) runs under that Workload instead of one kuota builds
//! from the pods. As in Kueue's `ensureOneWorkload` for such a group: without the Workload the
//! pods wait (running ones are stopped) and nothing is created; with it, every pod of the group
//! becomes an owner of the Workload (no surplus pods are deleted, no replaced pods let go of),
//! and a Workload that no longer matches the pods is finished as `OutOfSync`.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use super::pod_group::{annotation, pod_group_total_count, role_hash};
use super::pod_step::PodStep;
use super::prebuilt::{OUT_OF_SYNC_MESSAGE, prebuilt_workload_name};
use crate::api::keys::{annotations, condition_types, finished_reasons};
use crate::api::{HasConditions, Workload};

/// Whether the group `pods` runs under a prebuilt Workload (its first pod names one).
pub(super) fn names_prebuilt(pods: &[Pod]) -> bool {
    pods.first()
        .is_some_and(|p| prebuilt_workload_name(&p.metadata).is_some())
}

/// The step that keeps a prebuilt group's Workload its own: the pods it does not name yet
/// become owners (`OwnerReferencesAdded`), then a Workload out of sync with the pods is finished.
/// As Kueue's `SetOwnerReference`, an owner is matched by kind and name: a pod recreated under
/// its name (a StatefulSet's or a LeaderWorkerSet's) replaces its predecessor's reference, so the
/// list stays the size of the group.
pub(super) fn prebuilt_members(pods: &[Pod], workload: &Workload) -> PodStep {
    let mut owners = workload
        .metadata
        .owner_references
        .clone()
        .unwrap_or_default();
    let mut added = 0;
    for pod in pods {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let same_pod =
            |o: &&mut OwnerReference| o.api_version == "v1" && o.kind == "Pod" && o.name == name;
        match owners.iter_mut().find(same_pod) {
            Some(owner) if owner.uid == uid => {}
            Some(owner) => {
                owner.uid = uid;
                added += 1;
            }
            None => {
                owners.push(OwnerReference {
                    api_version: "v1".to_owned(),
                    kind: "Pod".to_owned(),
                    name,
                    uid,
                    controller: None,
                    block_owner_deletion: None,
                });
                added += 1;
            }
        }
    }
    if added > 0 {
        let mut adopting = workload.clone();
        adopting.metadata.owner_references = Some(owners);
        return PodStep::AdoptPods {
            workload: Box::new(adopting),
            added,
        };
    }
    if !in_sync(pods, workload) {
        return PodStep::FinishWorkload {
            workload: Box::new(workload.clone()),
            reason: finished_reasons::OUT_OF_SYNC,
            message: OUT_OF_SYNC_MESSAGE.to_owned(),
        };
    }
    PodStep::Idle
}

/// Kueue's `equivalentToWorkload` for a group: the Workload has the prebuilt name, and a pod set
/// for every role of the pods counting at least as many pods (the counts unchecked once it is
/// finished). A fast-admission group is one role of its total count, read from its first pod.
fn in_sync(pods: &[Pod], workload: &Workload) -> bool {
    let Some(first) = pods.first() else {
        return true;
    };
    if workload.metadata.name.as_deref() != prebuilt_workload_name(&first.metadata) {
        return false;
    }
    let finished = workload.condition_is_true(condition_types::FINISHED);
    let fast = annotation(first, annotations::POD_GROUP_FAST_ADMISSION) == Some("true");
    let mut roles: Vec<(String, i32)> = Vec::new();
    if fast {
        let total = pod_group_total_count(first).unwrap_or(0);
        roles.push((role_hash(first), i32::try_from(total).unwrap_or(i32::MAX)));
    } else {
        for pod in pods
            .iter()
            .filter(|p| super::pod_workload::runnable_or_succeeded(p))
        {
            let hash = role_hash(pod);
            match roles.iter_mut().find(|(name, _)| *name == hash) {
                Some((_, count)) => *count += 1,
                None => roles.push((hash, 1)),
            }
        }
    }
    roles.iter().all(|(name, count)| {
        workload
            .spec
            .pod_sets
            .iter()
            .find(|ps| ps.name == *name)
            .is_some_and(|ps| finished || ps.count >= *count)
    })
}

#[cfg(test)]
mod tests;
