//! The pod integration's next step for one managed pod or one pod group, decided from the pods
//! and the Workload they run under. One step at a time, as for a Job: the controller writes it,
//! reads the result back and asks again. Kueue's order: a pod being deleted (single) or a unit
//! without pods lets go of its Workload; a Workload being deleted or finished lets go of the
//! pods; a group's Workload adopts new members and sheds surplus ones, and says whether it waits
//! for replacements of failed pods (`WaitingForReplacementPods`), or, under a prebuilt Workload,
//! takes every pod as an owner and is finished once out of sync; the Workload follows its pods'
//! admission gates and priority class; finished pods finish the
//! Workload; `PodsReady` is kept; an eviction deletes the running pods; an admitted group's
//! succeeded pods are written as reclaimable; an admission ungates the gated ones; pods running
//! without an admission are deleted. Without a Workload, one is built once the pods allow (the
//! whole group present, none running), with the labels `labelKeysToCopy` names.

use std::collections::{BTreeMap, BTreeSet};

use crate::api::HasConditions;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use super::admission_gate::copy_gates;
use super::copied_labels::{add_labels, group_labels};
use super::events::{JobEvent, STOP_MISSING_WORKLOAD, STOP_NOT_ADMITTED, STOP_WORKLOAD_DELETED};
use super::pod_follow::{FollowStep, follow_pod};
use super::pod_group::{annotation, pod_group_name, role_hash};
use super::pod_prebuilt::{names_prebuilt, prebuilt_members};
use super::pod_set_info::{FlavorInfo, pod_set_infos};
use super::pod_workload::{
    PodWorkloadError, has_finalizer, has_gate, phase, pods_finished, pods_ready,
    runnable_or_succeeded, start_pods, workload_for_pods,
};
use super::pods_ready::{PodsReadyCondition, pods_ready_condition};
use super::priority::PriorityLookup;
use super::reclaimable::{group_reclaimable_pods, to_write};
use super::replacement_pods::{ReplacementPods, replacement_pods};
use crate::api::Workload;
use crate::api::keys::{
    annotations, condition_types, finalizers, finished_reasons, scheduling_gates,
};
use crate::api::workload_status::ReclaimablePod;
use crate::engine::features::{Feature, FeatureGates};

/// Kueue's stop reasons, written as the `TerminationTarget` reason of each deleted pod.
const STOP_REASON_DELETED: &str = "WorkloadDeleted";
const STOP_REASON_EVICTED: &str = "WorkloadEvicted";
const STOP_REASON_NO_MATCH: &str = "NoMatchingWorkload";
const STOP_REASON_NOT_ADMITTED: &str = "NotAdmitted";
/// Kueue's `Finished` message for a Workload whose owner is gone.
const OWNER_NOT_FOUND_MESSAGE: &str = "The workload's owner no longer exists";

/// What the pod reconciler reads besides the pods and their Workload.
#[derive(Clone, Copy, Debug)]
pub struct PodContext<'a> {
    pub flavors: &'a BTreeMap<String, FlavorInfo>,
    pub priorities: &'a PriorityLookup,
    pub gates: &'a FeatureGates,
    /// `waitForPodsReady` is on: the Workload's `PodsReady` condition is kept.
    pub wait_for_pods_ready: bool,
    /// `integrations.labelKeysToCopy`: pod labels a new Workload carries too.
    pub label_keys_to_copy: &'a [String],
}

/// The one write (to one object or to several pods) to make next for a pod or a pod group.
#[derive(Clone, Debug, PartialEq)]
pub enum PodStep {
    /// Nothing to do until a pod or the Workload changes.
    Idle,
    /// The pods cannot have a Workload (yet): the warning to record on the first pod.
    CannotCompose(JobEvent),
    /// Create this Workload; `CreatedWorkload` on the first pod.
    CreateWorkload(Box<Workload>),
    /// Write this Workload, which names `added` more of the group's pods as owners
    /// (`OwnerReferencesAdded` on it).
    AdoptPods {
        workload: Box<Workload>,
        added: usize,
    },
    /// Set `Finished=True` with this reason and message; `FinishedWorkload` on the first pod.
    FinishWorkload {
        workload: Box<Workload>,
        reason: &'static str,
        message: String,
    },
    /// Write these `status.reclaimablePods` on the group's Workload (gate `ReclaimablePods`).
    ReclaimablePods {
        workload: Box<Workload>,
        pods: Vec<ReclaimablePod>,
    },
    /// Write this `WaitingForReplacementPods` condition on a group's Workload.
    ReplacementPods {
        workload: Box<Workload>,
        condition: ReplacementPods,
    },
    /// Write this `PodsReady` condition on the Workload.
    PodsReady {
        workload: Box<Workload>,
        condition: PodsReadyCondition,
    },
    /// Write these pods as started (admission gate gone, pod set info merged); `Started` with
    /// the ClusterQueue on each.
    StartPods {
        pods: Vec<Pod>,
        cluster_queue: String,
    },
    /// Set `TerminationTarget=True` with `reason` and `message` on each pod and delete it;
    /// `Stopped` with `message` on each.
    StopPods {
        pods: Vec<Pod>,
        reason: String,
        message: String,
    },
    /// Pods beyond their role's count: drop the managed finalizer and delete each
    /// (`ExcessPodDeleted`).
    DeleteExcess(Vec<Pod>),
    /// Drop the `kueue.x-k8s.io/managed` finalizer from these pods.
    Finalize(Vec<Pod>),
    /// Drop the Workload's `resource-in-use` finalizer.
    ReleaseWorkload(Box<Workload>),
    /// Write the Workload with what it follows from its pods (admission gates, priority).
    Follow(FollowStep),
}

/// The next step for `pods` (one single pod, or every pod of a group that the cluster holds)
/// and the Workload they run under, if any. Without pods, `workload` is one whose pods are gone.
pub fn next_pod_step(
    pods: &[Pod],
    workload: Option<&Workload>,
    context: PodContext<'_>,
) -> PodStep {
    let Some(first) = pods.first() else {
        return workload.map_or(PodStep::Idle, |w| orphaned(w, context.gates));
    };
    let group = pod_group_name(first).is_some();
    if !group && first.metadata.deletion_timestamp.is_some() {
        // Kueue lets a single pod being deleted go at once: its Workload first, then the pod.
        if let Some(workload) = workload {
            let step = orphaned(workload, context.gates);
            if step != PodStep::Idle {
                return step;
            }
        }
        return finalize(pods.iter());
    }
    match workload {
        None => without_workload(pods, group, context),
        Some(workload) => with_workload(pods, workload, group, context),
    }
}

/// The Workload whose pods are gone: finished as `OwnerNotFound` (a single pod's, which the pod
/// controls), then released to the garbage collector.
fn orphaned(workload: &Workload, gates: &FeatureGates) -> PodStep {
    if !holds_in_use(workload) {
        return PodStep::Idle;
    }
    let controlled = workload
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.controller == Some(true));
    if gates.enabled(Feature::FinishOrphanedWorkloads)
        && controlled
        && workload.metadata.deletion_timestamp.is_none()
        && !workload.condition_is_true(condition_types::FINISHED)
    {
        return PodStep::FinishWorkload {
            workload: Box::new(workload.clone()),
            reason: finished_reasons::OWNER_NOT_FOUND,
            message: OWNER_NOT_FOUND_MESSAGE.to_owned(),
        };
    }
    PodStep::ReleaseWorkload(Box::new(workload.clone()))
}

fn without_workload(pods: &[Pod], group: bool, context: PodContext<'_>) -> PodStep {
    if pods_finished(pods).is_some() {
        return finalize(pods.iter());
    }
    if !suspended(pods, group) {
        return stop(
            pods,
            false,
            STOP_REASON_NO_MATCH.to_owned(),
            STOP_MISSING_WORKLOAD,
        );
    }
    // Kueue never builds a Workload while pods of an older one still run, nor one for a group
    // that names a prebuilt Workload: that group waits for it.
    if pods.iter().any(|p| phase(p) == Some("Running")) || (group && names_prebuilt(pods)) {
        return PodStep::Idle;
    }
    if group {
        let inactive = pods.iter().filter(|p| !runnable_or_succeeded(p));
        if let PodStep::Finalize(inactive) = finalize(inactive) {
            return PodStep::Finalize(inactive);
        }
    }
    match workload_for_pods(pods, context.priorities) {
        Ok(built) if !built.excess.is_empty() => PodStep::DeleteExcess(
            pods.iter()
                .filter(|p| built.excess.contains(&name_of(p)))
                .cloned()
                .collect(),
        ),
        Ok(built) => {
            let mut workload = built.workload;
            // A single pod's labels, or the ones a group's members agree on.
            let members: Vec<&Pod> = if group {
                pods.iter().filter(|p| runnable_or_succeeded(p)).collect()
            } else {
                pods.first().into_iter().collect()
            };
            match group_labels(&members, context.label_keys_to_copy) {
                Ok(copied) => add_labels(&mut workload, copied),
                Err(error) => {
                    return PodStep::CannotCompose(JobEvent::err_workload_compose(
                        &error.to_string(),
                    ));
                }
            }
            if context.gates.enabled(Feature::AdmissionGatedBy)
                && let Some(first) = members.first()
            {
                copy_gates(&first.metadata, &mut workload);
            }
            if group {
                workload.metadata.owner_references = Some(
                    pods.iter()
                        .filter(|p| runnable_or_succeeded(p))
                        .map(owner)
                        .collect(),
                );
            }
            PodStep::CreateWorkload(Box::new(workload))
        }
        Err(PodWorkloadError::NotManaged { .. }) => PodStep::Idle,
        Err(error) => PodStep::CannotCompose(JobEvent::err_workload_compose(&error.to_string())),
    }
}

fn with_workload(
    pods: &[Pod],
    workload: &Workload,
    group: bool,
    context: PodContext<'_>,
) -> PodStep {
    let name = workload.metadata.name.as_deref().unwrap_or_default();
    if group
        && context
            .gates
            .enabled(Feature::PodIntegrationValidateGroupOwner)
        && workload_annotation(workload, annotations::IS_GROUP_WORKLOAD) != Some("true")
    {
        return PodStep::CannotCompose(JobEvent::workload_name_conflict(name));
    }
    if workload.metadata.deletion_timestamp.is_some() {
        return let_go(
            pods,
            workload,
            Some((STOP_REASON_DELETED.to_owned(), STOP_WORKLOAD_DELETED)),
            group,
        );
    }
    if workload.condition_is_true(condition_types::FINISHED) {
        return let_go(pods, workload, None, true);
    }
    if group && names_prebuilt(pods) {
        let step = prebuilt_members(pods, workload);
        if step != PodStep::Idle {
            return step;
        }
    } else if group {
        let step = keep_members(pods, workload);
        if step != PodStep::Idle {
            return step;
        }
        if let Some(condition) = replacement_pods(pods, workload) {
            return PodStep::ReplacementPods {
                workload: Box::new(workload.clone()),
                condition,
            };
        }
    }
    if let Some(pod) = pods.first() {
        match follow_pod(pod, workload, context.gates, context.priorities) {
            Some(Ok(step)) => return PodStep::Follow(step),
            Some(Err(warning)) => return PodStep::CannotCompose(warning),
            None => {}
        }
    }
    if let Some((success, message)) = pods_finished(pods) {
        return PodStep::FinishWorkload {
            workload: Box::new(workload.clone()),
            reason: if success {
                finished_reasons::SUCCEEDED
            } else {
                finished_reasons::FAILED
            },
            message,
        };
    }
    if context.wait_for_pods_ready && workload.condition_is_true(condition_types::QUOTA_RESERVED) {
        let condition = pods_ready_condition(workload, pods_ready(pods));
        if !condition.is_current(workload) {
            return PodStep::PodsReady {
                workload: Box::new(workload.clone()),
                condition,
            };
        }
    }
    if let Some(evicted) = workload.true_condition(condition_types::EVICTED) {
        return stop(
            pods,
            false,
            format!("{STOP_REASON_EVICTED}DueTo{}", evicted.reason),
            &evicted.message,
        );
    }
    let admitted = workload.condition_is_true(condition_types::ADMITTED);
    if admitted && group && context.gates.enabled(Feature::ReclaimablePods) {
        let step = reclaimable_step(pods, workload);
        if step != PodStep::Idle {
            return step;
        }
    }
    if suspended(pods, group) {
        return if admitted {
            start(pods, workload, context)
        } else {
            PodStep::Idle
        };
    }
    if admitted {
        PodStep::Idle
    } else {
        stop(
            pods,
            false,
            STOP_REASON_NOT_ADMITTED.to_owned(),
            STOP_NOT_ADMITTED,
        )
    }
}

/// The reclaimable pods of a running group to write, if they changed: its succeeded pods per
/// role. Only the quota of an admitted Workload shrinks with them; a serving group never
/// finishes, so its pods are not reclaimed.
fn reclaimable_step(pods: &[Pod], workload: &Workload) -> PodStep {
    let serving = pods
        .first()
        .is_some_and(|p| annotation(p, annotations::POD_GROUP_SERVING) == Some("true"));
    if serving {
        return PodStep::Idle;
    }
    match to_write(workload, group_reclaimable_pods(pods)) {
        Some(pods) => PodStep::ReclaimablePods {
            workload: Box::new(workload.clone()),
            pods,
        },
        None => PodStep::Idle,
    }
}

/// A Workload being deleted (`stop` set) or finished: the pods are deleted (being deleted,
/// Kueue deletes even gated and finished ones) and let go of (a group's at once; a single pod
/// once it is deleted or finished), then the Workload's finalizer goes.
fn let_go(
    pods: &[Pod],
    workload: &Workload,
    stop_with: Option<(String, &str)>,
    finalize_pods: bool,
) -> PodStep {
    if let Some((reason, message)) = stop_with {
        let step = stop(pods, true, reason, message);
        if step != PodStep::Idle {
            return step;
        }
    }
    if finalize_pods {
        let step = finalize(pods.iter());
        if step != PodStep::Idle {
            return step;
        }
    }
    if holds_in_use(workload) {
        return PodStep::ReleaseWorkload(Box::new(workload.clone()));
    }
    PodStep::Idle
}

/// A group's membership against its Workload's pod sets: pods it does not name yet become
/// owners, runnable pods beyond a role's count go, and failed pods a runnable one replaces
/// are let go of.
fn keep_members(pods: &[Pod], workload: &Workload) -> PodStep {
    let mut excess = Vec::new();
    let mut replaced = Vec::new();
    let mut kept: Vec<&Pod> = Vec::new();
    for pod_set in &workload.spec.pod_sets {
        let count = usize::try_from(pod_set.count).unwrap_or(0);
        let (mut active, mut inactive): (Vec<&Pod>, Vec<&Pod>) = pods
            .iter()
            .filter(|p| role_hash(p) == pod_set.name)
            .partition(|p| runnable_or_succeeded(p));
        // Kueue keeps pods holding the finalizer, then ungated ones, then older ones.
        active.sort_by_key(|p| {
            (
                !has_finalizer(p),
                has_gate(p, scheduling_gates::ADMISSION),
                p.metadata.creation_timestamp.as_ref().map(|t| t.0),
            )
        });
        inactive.sort_by_key(|p| {
            (
                !has_finalizer(p),
                p.metadata.creation_timestamp.as_ref().map(|t| t.0),
            )
        });
        let surplus = active.len().saturating_sub(count);
        excess.extend(active.split_off(active.len() - surplus));
        let replaceable = (inactive.len() + active.len()).saturating_sub(count);
        let replaceable = replaceable.min(inactive.len());
        replaced.extend(inactive.split_off(inactive.len() - replaceable));
        kept.extend(active);
        kept.extend(inactive);
    }
    let owners: BTreeSet<&str> = workload
        .metadata
        .owner_references
        .iter()
        .flatten()
        .map(|o| o.uid.as_str())
        .collect();
    let missing: Vec<OwnerReference> = kept
        .iter()
        .filter(|p| !owners.contains(p.metadata.uid.as_deref().unwrap_or_default()))
        .map(|p| owner(p))
        .collect();
    if !missing.is_empty() {
        let mut adopting = workload.clone();
        let added = missing.len();
        adopting
            .metadata
            .owner_references
            .get_or_insert_default()
            .extend(missing);
        return PodStep::AdoptPods {
            workload: Box::new(adopting),
            added,
        };
    }
    if !excess.is_empty() {
        return PodStep::DeleteExcess(excess.into_iter().cloned().collect());
    }
    finalize(replaced.into_iter())
}

/// Kueue's start of admitted pods: every gated one gets its pod set's info; a conflict no retry
/// can solve finishes the Workload with `FailedToStart`.
fn start(pods: &[Pod], workload: &Workload, context: PodContext<'_>) -> PodStep {
    let started = pod_set_infos(workload, context.flavors, context.gates)
        .and_then(|infos| start_pods(pods, &infos));
    match started {
        Ok(started) if started.is_empty() => PodStep::Idle,
        Ok(started) => PodStep::StartPods {
            pods: started,
            cluster_queue: workload
                .status
                .as_ref()
                .and_then(|s| s.admission.as_ref())
                .map(|a| a.cluster_queue.clone())
                .unwrap_or_default(),
        },
        Err(error) if error.is_permanent() => PodStep::FinishWorkload {
            workload: Box::new(workload.clone()),
            reason: finished_reasons::FAILED_TO_START,
            message: error.to_string(),
        },
        // A flavor not read yet, or an admission check still deciding: the next change retries.
        Err(_) => PodStep::Idle,
    }
}

/// Kueue's stop of pods: every pod not being deleted already, and unless `all`, not gated nor
/// terminated either.
fn stop(pods: &[Pod], all: bool, reason: String, message: &str) -> PodStep {
    let stopping: Vec<Pod> = pods
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter(|p| all || !pod_suspended(p))
        .cloned()
        .collect();
    if stopping.is_empty() {
        return PodStep::Idle;
    }
    PodStep::StopPods {
        pods: stopping,
        reason,
        message: message.to_owned(),
    }
}

/// The pods among `pods` that still hold the managed finalizer, to let go of.
fn finalize<'a>(pods: impl Iterator<Item = &'a Pod>) -> PodStep {
    let held: Vec<Pod> = pods.filter(|p| has_finalizer(p)).cloned().collect();
    if held.is_empty() {
        PodStep::Idle
    } else {
        PodStep::Finalize(held)
    }
}

/// Kueue's "suspended": a single pod gated or terminated; a group with any pod so.
fn suspended(pods: &[Pod], group: bool) -> bool {
    if group {
        pods.iter().any(pod_suspended)
    } else {
        pods.first().is_some_and(pod_suspended)
    }
}

fn pod_suspended(pod: &Pod) -> bool {
    has_gate(pod, scheduling_gates::ADMISSION) || matches!(phase(pod), Some("Succeeded" | "Failed"))
}

/// A group member as an owner of the group's Workload (not its controller, as in Kueue).
fn owner(pod: &Pod) -> OwnerReference {
    OwnerReference {
        api_version: "v1".to_owned(),
        kind: "Pod".to_owned(),
        name: name_of(pod),
        uid: pod.metadata.uid.clone().unwrap_or_default(),
        controller: None,
        block_owner_deletion: None,
    }
}

fn name_of(pod: &Pod) -> String {
    pod.metadata.name.clone().unwrap_or_default()
}

fn holds_in_use(workload: &Workload) -> bool {
    workload
        .metadata
        .finalizers
        .iter()
        .flatten()
        .any(|f| f == finalizers::RESOURCE_IN_USE)
}

fn workload_annotation<'a>(workload: &'a Workload, key: &str) -> Option<&'a str> {
    workload
        .metadata
        .annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
}

#[cfg(test)]
mod tests;
