//! Pods of a TAS-admitted Workload on a host its assignment no longer names: a failed node was
//! replaced in its `topologyAssignment`. They are deleted, so the Job controller creates their
//! replacements, which the topology ungater releases onto the new hosts. Kueue leaves such pods
//! to the node's own eviction and fails only the ones not started yet; kuota removes both, since
//! the replacement was decided for them.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Pod;

use crate::api::HasConditions;
use crate::api::Workload;
use crate::api::keys::{condition_types, labels, scheduling_gates};
use crate::engine::topology::decode;
use crate::engine::topology::model::HOSTNAME_LABEL;

/// The names of `workload`'s pods that sit on a host its assignment no longer names, and are
/// neither finished nor being deleted already. Pods created before the Workload's last eviction
/// (or re-admission) belong to an earlier admission: stopping the Job removes those.
pub fn pods_off_assignment(workload: &Workload, pods: &[&Pod]) -> Vec<String> {
    let Some(status) = workload.status.as_ref() else {
        return Vec::new();
    };
    let admitted = status.condition_is_true(condition_types::ADMITTED);
    let Some(admission) = status.admission.as_ref().filter(|_| admitted) else {
        return Vec::new();
    };
    let admitted_since = status
        .condition(condition_types::EVICTED)
        .map(|c| c.last_transition_time.0);
    let hosts: BTreeMap<&str, BTreeSet<String>> = admission
        .pod_set_assignments
        .iter()
        .filter_map(|a| {
            let encoded = a.topology_assignment.as_ref()?;
            if encoded.levels != [HOSTNAME_LABEL] {
                return None;
            }
            let list = decode(encoded, a.count.unwrap_or_default()).ok()?;
            let hosts = list
                .domains
                .into_iter()
                .filter_map(|d| d.values.last().cloned())
                .collect();
            Some((a.name.as_str(), hosts))
        })
        .collect();
    pods.iter()
        .filter(|pod| pod.metadata.deletion_timestamp.is_none())
        .filter(|pod| {
            let created = pod.metadata.creation_timestamp.as_ref().map(|t| t.0);
            !matches!((admitted_since, created), (Some(since), Some(created)) if created < since)
        })
        .filter(|pod| {
            let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
            !matches!(phase, Some("Succeeded" | "Failed"))
        })
        .filter(|pod| {
            let spec = pod.spec.as_ref();
            let gated = spec
                .and_then(|s| s.scheduling_gates.as_ref())
                .is_some_and(|gates| gates.iter().any(|g| g.name == scheduling_gates::TOPOLOGY));
            let pod_set = pod
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(labels::POD_SET));
            let host = spec
                .and_then(|s| s.node_selector.as_ref())
                .and_then(|s| s.get(HOSTNAME_LABEL));
            match (gated, pod_set.and_then(|p| hosts.get(p.as_str())), host) {
                (false, Some(assigned), Some(host)) => !assigned.contains(host),
                _ => false,
            }
        })
        .filter_map(|pod| pod.metadata.name.clone())
        .collect()
}

#[cfg(test)]
mod tests;
