//! The Workload of a plain pod or a pod group, and the pods' life under it, as Kueue's `pod`
//! integration runs them: built once the group is complete, admitted all or nothing, started by
//! removing the admission gate (with the pod set info merged into each pod), finished when the
//! pod ends or the group's pods have succeeded.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use crate::api::HasConditions;
use crate::api::common::DEFAULT_POD_SET_NAME;
use crate::api::keys::{annotations, core_condition_types, finalizers, labels, scheduling_gates};
use crate::api::rare_list::RareList;
use crate::api::workload::PodSet;
use crate::api::{Workload, WorkloadSpec};

use super::names::owner_workload_name;
use super::pod_group::{label, pod_group_name, pod_group_total_count, role_hash};
use super::pod_set_info::{PodSetInfo, PodSetInfoError, gate_names};
use super::priority::{MissingClass, PriorityLookup};
use super::topology_request::{TopologyAnnotationError, topology_request};

/// Most pod sets a Workload may have; a group with more roles cannot be admitted.
const MAX_POD_SETS: usize = 8;

/// Why pods have no Workload (yet).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PodWorkloadError {
    #[error("no pods given")]
    NoPods,
    #[error("pod {pod}: not managed: it has no {} label", labels::QUEUE_NAME)]
    NotManaged { pod: String },
    #[error("pod {pod}: metadata.name, metadata.namespace and metadata.uid must be set")]
    MissingIdentity { pod: String },
    /// Pods of several groups, or a grouped pod with a single pod's.
    #[error("pods {first:?} and {other:?} are not in the same pod group")]
    MixedGroups { first: String, other: String },
    /// The group's total count is missing or not a positive integer.
    #[error(
        "pod {pod}: annotation {} must be a positive integer",
        annotations::POD_GROUP_TOTAL_COUNT
    )]
    TotalCount { pod: String },
    /// Kueue's wording; recorded as an `ErrWorkloadCompose` warning on the pod.
    #[error("pods '{first}' and '{other}' has different queue names: {first_queue}!={other_queue}")]
    QueueMismatch {
        first: String,
        other: String,
        first_queue: String,
        other_queue: String,
    },
    #[error(
        "pods '{first}' and '{other}' has different '{}' values: {first_count}!={other_count}",
        annotations::POD_GROUP_TOTAL_COUNT
    )]
    TotalCountMismatch {
        first: String,
        other: String,
        first_count: u32,
        other_count: u32,
    },
    /// Kueue's wording; the group waits for more pods (`ErrWorkloadCompose` warning).
    #[error("'{group}' group has fewer runnable pods than expected")]
    FewerRunnablePods { group: String },
    #[error("'{group}' group has {roles} pod roles; at most {MAX_POD_SETS} are allowed")]
    TooManyRoles { group: String, roles: usize },
    #[error("pod {pod}: {problem}")]
    Topology {
        pod: String,
        problem: TopologyAnnotationError,
    },
    #[error("pod {pod}: {missing} does not exist")]
    PriorityClassNotFound { pod: String, missing: String },
}

/// The Workload of a single pod or a complete group, and the surplus pods of the group.
#[derive(Clone, Debug, PartialEq)]
pub struct PodWorkload {
    pub workload: Workload,
    /// Runnable pods beyond the group's total count, to delete (`ExcessPodDeleted`): the newest,
    /// gated ones and those without the managed finalizer go first, as in Kueue.
    pub excess: Vec<String>,
}

/// The Workload `pods` become. One pod without a group name: `pod-<name>-<hash>`, pod set
/// `main` of 1, the Pod as controller owner. A group: named after the group, marked
/// `kueue.x-k8s.io/is-group-workload`, one pod set per role hash (sorted, each counting its
/// pods; with `pod-group-fast-admission` the first runnable pod's role counts the total), built
/// only once the group has its total count of runnable pods. The caller adds an owner reference
/// to the created Workload on every pod of a group.
pub fn workload_for_pods(
    pods: &[Pod],
    priorities: &PriorityLookup,
) -> Result<PodWorkload, PodWorkloadError> {
    let first = pods.first().ok_or(PodWorkloadError::NoPods)?;
    let name_of = |pod: &Pod| pod.metadata.name.clone().unwrap_or_default();
    let group = pod_group_name(first);
    if let Some(other) = pods.iter().find(|p| pod_group_name(p) != group) {
        return Err(PodWorkloadError::MixedGroups {
            first: name_of(first),
            other: name_of(other),
        });
    }
    let namespace = first.metadata.namespace.clone().unwrap_or_default();
    let queue = label(first, labels::QUEUE_NAME)
        .filter(|q| !q.is_empty())
        .ok_or_else(|| PodWorkloadError::NotManaged {
            pod: name_of(first),
        })?;
    let (name, pod_sets, excess, owner) = match group {
        None => {
            let (pod_name, uid) = match (&first.metadata.name, &first.metadata.uid) {
                (Some(n), Some(u)) if pods.len() == 1 && !namespace.is_empty() => (n, u),
                _ => {
                    return Err(PodWorkloadError::MissingIdentity {
                        pod: name_of(first),
                    });
                }
            };
            let mut pod_set = pod_set_of(first)?;
            pod_set.name = DEFAULT_POD_SET_NAME.to_owned();
            let owner = OwnerReference {
                api_version: "v1".to_owned(),
                kind: "Pod".to_owned(),
                name: pod_name.clone(),
                uid: uid.clone(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            };
            (
                owner_workload_name("Pod", "", pod_name, uid),
                vec![pod_set],
                Vec::new(),
                Some(owner),
            )
        }
        Some(group) => {
            let (pod_sets, excess) = group_pod_sets(group, first, pods)?;
            (group.to_owned(), pod_sets, excess, None)
        }
    };
    let priority_class = pod_sets
        .iter()
        .find_map(|ps| ps.template.spec.as_ref()?.priority_class_name.as_deref())
        .filter(|n| !n.is_empty());
    let priority = priorities
        .resolve(label(first, labels::PRIORITY_CLASS), priority_class)
        .map_err(|missing| PodWorkloadError::PriorityClassNotFound {
            pod: name_of(first),
            missing: match missing {
                MissingClass::WorkloadPriorityClass(n) => format!("WorkloadPriorityClass {n:?}"),
                MissingClass::PriorityClass(n) => format!("PriorityClass {n:?}"),
            },
        })?;
    let mut workload = Workload::new(
        &name,
        WorkloadSpec {
            pod_sets,
            queue_name: Some(queue.to_owned()),
            priority_class_ref: priority.class.map(Box::new),
            priority: Some(priority.value),
            active: Some(true),
            maximum_execution_time_seconds: None,
            preemption_gates: RareList::new(),
        },
    );
    workload.metadata = ObjectMeta {
        namespace: Some(namespace),
        labels: first
            .metadata
            .uid
            .clone()
            .filter(|_| owner.is_some())
            .map(|uid| BTreeMap::from([(labels::JOB_UID.to_owned(), uid)])),
        annotations: group.map(|_| {
            BTreeMap::from([(annotations::IS_GROUP_WORKLOAD.to_owned(), "true".to_owned())])
        }),
        owner_references: owner.map(|o| vec![o]),
        finalizers: Some(vec![finalizers::RESOURCE_IN_USE.to_owned()]),
        ..workload.metadata
    };
    Ok(PodWorkload { workload, excess })
}

/// The pod sets of a group and its surplus pods.
fn group_pod_sets(
    group: &str,
    first: &Pod,
    pods: &[Pod],
) -> Result<(Vec<PodSet>, Vec<String>), PodWorkloadError> {
    let name_of = |pod: &Pod| pod.metadata.name.clone().unwrap_or_default();
    let mut runnable: Vec<&Pod> = pods.iter().filter(|p| runnable_or_succeeded(p)).collect();
    let reference = runnable.first().copied().unwrap_or(first);
    let total = pod_group_total_count(reference).ok_or_else(|| PodWorkloadError::TotalCount {
        pod: name_of(reference),
    })?;
    let queue = label(reference, labels::QUEUE_NAME).unwrap_or_default();
    for pod in pods.iter().filter(|p| phase(p) != Some("Failed")) {
        let other_queue = label(pod, labels::QUEUE_NAME).unwrap_or_default();
        if other_queue != queue {
            return Err(PodWorkloadError::QueueMismatch {
                first: name_of(reference),
                other: name_of(pod),
                first_queue: queue.to_owned(),
                other_queue: other_queue.to_owned(),
            });
        }
        let count = pod_group_total_count(pod)
            .ok_or_else(|| PodWorkloadError::TotalCount { pod: name_of(pod) })?;
        if count != total {
            return Err(PodWorkloadError::TotalCountMismatch {
                first: name_of(reference),
                other: name_of(pod),
                first_count: total,
                other_count: count,
            });
        }
    }
    let fast = super::pod_group::annotation(reference, annotations::POD_GROUP_FAST_ADMISSION)
        == Some("true");
    let total_usize = usize::try_from(total).unwrap_or(usize::MAX);
    if !fast && runnable.len() < total_usize {
        return Err(PodWorkloadError::FewerRunnablePods {
            group: group.to_owned(),
        });
    }
    // Keep pods with the managed finalizer, then ungated ones, then older ones.
    runnable.sort_by_key(|p| {
        (
            !has_finalizer(p),
            has_gate(p, scheduling_gates::ADMISSION),
            p.metadata.creation_timestamp.as_ref().map(|t| t.0),
            name_of(p),
        )
    });
    let excess = runnable
        .split_off(total_usize.min(runnable.len()))
        .into_iter()
        .map(name_of)
        .collect();
    let mut pod_sets: Vec<PodSet> = Vec::new();
    if fast {
        if let Some(pod) = runnable.first() {
            let mut pod_set = pod_set_of(pod)?;
            pod_set.count = i32::try_from(total).unwrap_or(i32::MAX);
            pod_sets.push(pod_set);
        }
    } else {
        for pod in &runnable {
            let hash = role_hash(pod);
            match pod_sets.iter_mut().find(|ps| ps.name == hash) {
                Some(pod_set) => pod_set.count += 1,
                None => pod_sets.push(pod_set_of(pod)?),
            }
        }
        pod_sets.sort_by(|a, b| a.name.cmp(&b.name));
    }
    if pod_sets.len() > MAX_POD_SETS {
        return Err(PodWorkloadError::TooManyRoles {
            group: group.to_owned(),
            roles: pod_sets.len(),
        });
    }
    Ok((pod_sets, excess))
}

/// A pod set of 1 named after the pod's role: the pod's spec (not its metadata) and the
/// topology request of its annotations, ranked by the group index label.
fn pod_set_of(pod: &Pod) -> Result<PodSet, PodWorkloadError> {
    let no_annotations = BTreeMap::new();
    let annotations = pod.metadata.annotations.as_ref().unwrap_or(&no_annotations);
    let topology =
        topology_request(annotations, 1, labels::POD_GROUP_POD_INDEX).map_err(|problem| {
            PodWorkloadError::Topology {
                pod: pod.metadata.name.clone().unwrap_or_default(),
                problem,
            }
        })?;
    Ok(PodSet {
        name: role_hash(pod),
        template: std::sync::Arc::new(PodTemplateSpec {
            metadata: None,
            spec: pod.spec.clone(),
        }),
        count: 1,
        min_count: None,
        topology_request: Some(Box::new(topology)),
    })
}

/// The pods to patch at start: every pod still holding the admission gate, with its pod set's
/// info merged in (a single pod takes the only info; a group member the info named after its
/// role), the admission gate removed, and the topology gate removed too when its pod set was
/// not placed by topology.
pub fn start_pods(pods: &[Pod], infos: &[PodSetInfo]) -> Result<Vec<Pod>, PodSetInfoError> {
    let mut started = Vec::new();
    for pod in pods
        .iter()
        .filter(|p| has_gate(p, scheduling_gates::ADMISSION))
    {
        let info = if pod_group_name(pod).is_none() {
            match infos {
                [info] => info,
                _ => {
                    return Err(PodSetInfoError::PodSetCount {
                        want: 1,
                        got: infos.len(),
                    });
                }
            }
        } else {
            let hash = role_hash(pod);
            infos
                .iter()
                .find(|i| i.name == hash)
                .ok_or(PodSetInfoError::MissingPodSet { pod_set: hash })?
        };
        let mut pod = pod.clone();
        let spec = pod.spec.get_or_insert_default();
        info.merge_into(&mut pod.metadata, spec)?;
        let keep_topology = info
            .scheduling_gates
            .iter()
            .any(|g| g == scheduling_gates::TOPOLOGY);
        let gates: Vec<String> = gate_names(spec)
            .into_iter()
            .filter(|g| g != scheduling_gates::ADMISSION)
            .filter(|g| keep_topology || g != scheduling_gates::TOPOLOGY)
            .collect();
        spec.scheduling_gates = (!gates.is_empty()).then(|| {
            gates
                .into_iter()
                .map(|name| k8s_openapi::api::core::v1::PodSchedulingGate { name })
                .collect()
        });
        started.push(pod);
    }
    Ok(started)
}

/// How the pods ended, when they have: a single pod once it terminated (success when it
/// succeeded, its status message); a group once all its pods succeeded, or none is running
/// and one is marked `retriable-in-group: "false"` ("Pods succeeded: n/total.").
pub fn pods_finished(pods: &[Pod]) -> Option<(bool, String)> {
    let first = pods.first()?;
    if pod_group_name(first).is_none() {
        let phase = phase(first)?;
        let message = first
            .status
            .as_ref()
            .and_then(|s| s.message.clone())
            .unwrap_or_default();
        return match phase {
            "Succeeded" => Some((true, message)),
            "Failed" => Some((false, message)),
            _ => None,
        };
    }
    if super::pod_group::annotation(first, annotations::POD_GROUP_SERVING) == Some("true") {
        return None;
    }
    let total = pod_group_total_count(first)?;
    let succeeded = pods
        .iter()
        .filter(|p| phase(p) == Some("Succeeded"))
        .count();
    let active = pods
        .iter()
        .any(|p| !matches!(phase(p), Some("Succeeded" | "Failed")));
    let unretriable = pods
        .iter()
        .any(|p| super::pod_group::annotation(p, annotations::RETRIABLE_IN_GROUP) == Some("false"));
    let all = usize::try_from(total).is_ok_and(|t| succeeded == t);
    (all || (!active && unretriable))
        .then(|| (true, format!("Pods succeeded: {succeeded}/{total}.")))
}

/// Whether the pods are all ready: a single pod's `Ready` condition; a group needs its total
/// count of pods, each ready.
pub fn pods_ready(pods: &[Pod]) -> bool {
    let Some(first) = pods.first() else {
        return false;
    };
    let ready = |pod: &Pod| pod.condition_is_true(core_condition_types::READY);
    if pod_group_name(first).is_none() {
        return ready(first);
    }
    pod_group_total_count(first)
        .and_then(|t| usize::try_from(t).ok())
        .is_some_and(|total| pods.len() >= total && pods.iter().all(ready))
}

pub(super) fn runnable_or_succeeded(pod: &Pod) -> bool {
    let deleting_unbound = pod.metadata.deletion_timestamp.is_some()
        && pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .is_none_or(str::is_empty);
    !deleting_unbound && phase(pod) != Some("Failed")
}

pub(super) fn phase(pod: &Pod) -> Option<&str> {
    pod.status.as_ref()?.phase.as_deref()
}

pub(super) fn has_finalizer(pod: &Pod) -> bool {
    pod.metadata
        .finalizers
        .iter()
        .flatten()
        .any(|f| f == finalizers::MANAGED)
}

pub(super) fn has_gate(pod: &Pod, gate: &str) -> bool {
    pod.spec
        .as_ref()
        .is_some_and(|s| gate_names(s).iter().any(|g| g == gate))
}

#[cfg(test)]
mod tests;
