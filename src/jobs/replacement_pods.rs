//! Kueue's `WaitingForReplacementPods` condition on a pod group's Workload. A group's pod that
//! fails is not recreated by anyone but its owner; until the replacement exists, the group has
//! fewer runnable or succeeded pods of that role than its pod set counts, and the condition says
//! so: True with reason `PodsFailed`, or with the reason and message of the eviction the Workload
//! is under. It turns False (`PodsReady`) once every counted pod is there again. As in Kueue, it
//! is written only when that changes it; a True condition keeps the reason it has until the
//! Workload is evicted. The pod reconciler asks only while the Workload is neither finished nor
//! being deleted (Kueue asks then too), since those pods are let go of, not replaced.

use k8s_openapi::api::core::v1::Pod;

use super::pod_group::{annotation, role_hash};
use super::pod_workload::runnable_or_succeeded;
use crate::api::Workload;
use crate::api::keys::{annotations, condition_types, replacement_pods_reasons};
use crate::api::{ConditionEntry, HasConditions};

/// Kueue's message while a failed pod waits for its replacement.
const PODS_FAILED_MESSAGE: &str = "Some Failed pods need replacement";
/// Kueue's message once no pod is missing.
const NONE_MISSING_MESSAGE: &str = "No pods need replacement";

/// The `WaitingForReplacementPods` condition to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplacementPods {
    pub status: bool,
    pub reason: String,
    pub message: String,
}

/// Pods the group's pod sets count that are not there as runnable or succeeded. A
/// fast-admission group (its pods come one by one) misses a pod only when a pod set has none
/// at all, as Kueue counts it.
fn missing_pods(pods: &[Pod], workload: &Workload) -> usize {
    let fast = pods
        .first()
        .is_some_and(|p| annotation(p, annotations::POD_GROUP_FAST_ADMISSION) == Some("true"));
    workload
        .spec
        .pod_sets
        .iter()
        .map(|pod_set| {
            let count = usize::try_from(pod_set.count).unwrap_or(0);
            let present = pods
                .iter()
                .filter(|p| role_hash(p) == pod_set.name && runnable_or_succeeded(p))
                .count();
            if fast {
                usize::from(count > 0 && present == 0)
            } else {
                count.saturating_sub(present)
            }
        })
        .sum()
}

/// The condition the group `pods` give their `workload`, when it differs from the one carried.
pub fn replacement_pods(pods: &[Pod], workload: &Workload) -> Option<ReplacementPods> {
    let current = workload.condition(condition_types::WAITING_FOR_REPLACEMENT_PODS);
    let missing = missing_pods(pods, workload) > 0;
    let wanted = if missing {
        let evicted = workload.true_condition(condition_types::EVICTED);
        match (evicted, current) {
            (Some(evicted), _) => ReplacementPods {
                status: true,
                reason: evicted.reason.to_string(),
                message: evicted.message.to_string(),
            },
            (None, Some(current)) if current.is_true() => return None,
            (None, _) => ReplacementPods {
                status: true,
                reason: replacement_pods_reasons::PODS_FAILED.to_owned(),
                message: PODS_FAILED_MESSAGE.to_owned(),
            },
        }
    } else {
        match current {
            None => return None,
            Some(current) if current.is_false() => return None,
            Some(_) => ReplacementPods {
                status: false,
                reason: replacement_pods_reasons::PODS_READY.to_owned(),
                message: NONE_MISSING_MESSAGE.to_owned(),
            },
        }
    };
    let carried = current.is_some_and(|c| {
        c.has_status(wanted.status) && c.reason == wanted.reason && c.message == wanted.message
    });
    (!carried).then_some(wanted)
}

#[cfg(test)]
mod tests;
