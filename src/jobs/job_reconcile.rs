//! The batch Job reconciler's next step, decided from a Job, the Workloads it owns and what the
//! cluster offers (flavors, priority classes). One step at a time: the controller writes it, reads
//! the result back through its watches and asks again, so a step that fails or a crash between
//! steps is picked up where it stopped. Kueue's order: a Job naming a prebuilt Workload takes it
//! over; a finished Job finishes its Workload; a Job without a Workload gets one (unless it names
//! a prebuilt one, which it waits for); a Workload out of step is updated or replaced; `PodsReady` is
//! kept; an evicted or unadmitted Workload stops the Job; an admitted one starts it, and its
//! reclaimable pods are kept while it runs. A Job being deleted takes no step: its Workloads, like
//! those a Job deleted with `propagationPolicy: Orphan` leaves, are finished and released.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::Job;

use super::admission_gate::{copy_gates, follow_gates};
use super::batch_job::{JOB_KIND, JobError, workload_for_job};
use super::copied_labels::{add_labels, copied_labels};
use super::events::{
    JobEvent, STOP_MISSING_WORKLOAD, STOP_NO_MATCHING_WORKLOAD, STOP_NOT_ADMITTED,
    STOP_WORKLOAD_DELETED,
};
use super::job_lifecycle::{
    is_active, is_suspended, job_finished, job_pods_ready, start_job, stop_job,
};
use super::job_sync::{WorkloadSync, workload_sync};
use super::pod_set_info::{FlavorInfo, pod_set_infos};
use super::pods_ready::{PodsReadyCondition, pods_ready_condition};
use super::prebuilt::{OUT_OF_SYNC_MESSAGE, Prebuilt, PrebuiltUse, use_prebuilt};
use super::priority::{MissingClass, PriorityLookup, follow_priority_label};
use super::reclaimable::{job_reclaimable_pods, to_write};
use super::scope::{OwnerKind, queue_name};
use crate::api::HasConditions;
use crate::api::Workload;
use crate::api::keys::{condition_types, finalizers, finished_reasons, labels};
use crate::api::workload_status::ReclaimablePod;
use crate::engine::features::{Feature, FeatureGates};

/// What the reconciler reads besides the Job and its Workloads.
#[derive(Clone, Copy, Debug)]
pub struct JobContext<'a> {
    pub flavors: &'a BTreeMap<String, FlavorInfo>,
    pub priorities: &'a PriorityLookup,
    pub gates: &'a FeatureGates,
    /// `waitForPodsReady` is on: the Workload's `PodsReady` condition is kept.
    pub wait_for_pods_ready: bool,
    /// `integrations.labelKeysToCopy`: Job labels a new Workload carries too.
    pub label_keys_to_copy: &'a [String],
    /// The prebuilt Workload the Job names (`kueue.x-k8s.io/prebuilt-workload-name`); `None`
    /// when it names none and kuota builds its Workload.
    pub prebuilt: Option<Prebuilt<'a>>,
}

/// The one write to make next for a job: a batch/v1 Job (`J`, with [`JobError`]s), or a job
/// of any kind the framework reads (see [`crate::jobs::framework::FrameworkStep`]).
#[derive(Clone, Debug, PartialEq)]
pub enum JobStep<J = Job, E = JobError> {
    /// Nothing to do until the Job or a Workload changes.
    Idle,
    /// Create this Workload; `CreatedWorkload` on the Job once it exists.
    CreateWorkload(Box<Workload>),
    /// The Job cannot have a Workload as it is (a missing priority class, a label kuota cannot
    /// use): the warning to record on the Job, once per version of the Job.
    CannotCompose { error: E, event: JobEvent },
    /// Write this spec into the Workload (a suspended Job changed); `UpdatedWorkload`.
    UpdateWorkload(Box<Workload>),
    /// Write this Workload, whose `admission-gated-by` now follows the Job's; `UpdatedWorkload`.
    FollowAdmissionGates {
        workload: Box<Workload>,
        event: JobEvent,
    },
    /// Write this Workload, whose `queueName` now follows the Job's queue-name label (Kueue's
    /// `QueueNameChange`, without an event).
    ChangeQueue(Box<Workload>),
    /// Write this Workload, whose priority class and priority now follow the Job's
    /// `kueue.x-k8s.io/priority-class` label; `UpdatedWorkload`.
    ChangePriority(Box<Workload>),
    /// Write this prebuilt Workload, now controlled by the Job (no event, as in Kueue).
    AdoptWorkload(Box<Workload>),
    /// Delete the Workload (a duplicate, or one that cannot follow the Job).
    DeleteWorkload {
        workload: Box<Workload>,
        event: Option<JobEvent>,
    },
    /// Set `Finished=True` on the Workload with this reason and message.
    FinishWorkload {
        workload: Box<Workload>,
        reason: &'static str,
        message: String,
    },
    /// Write these `status.reclaimablePods` on the Workload (gate `ReclaimablePods`).
    ReclaimablePods {
        workload: Box<Workload>,
        pods: Vec<ReclaimablePod>,
    },
    /// Write this `PodsReady` condition on the Workload.
    PodsReady {
        workload: Box<Workload>,
        condition: PodsReadyCondition,
    },
    /// Replace the Job with this one (start, suspend or restore), then record the event.
    UpdateJob {
        job: Box<J>,
        event: Option<JobEvent>,
    },
    /// Clear the Job's `status.startTime`, so its template may be restored.
    ClearStartTime,
}

/// The Workload `workload` owned by a Job, by controller owner reference.
pub fn owned_by(workload: &Workload, job_uid: &str) -> bool {
    workload
        .metadata
        .owner_references
        .as_ref()
        .is_some_and(|owners| {
            owners
                .iter()
                .any(|o| o.controller == Some(true) && o.uid == job_uid)
        })
}

/// The next step for `job`, given the Workloads it owns. A Job naming a prebuilt Workload owns
/// that one only.
pub fn next_job_step(job: &Job, owned: &[&Workload], context: JobContext<'_>) -> JobStep {
    // A Job being deleted is only finalized, as in Kueue: its Workloads are finished and
    // released by [`workload_step`].
    if job.metadata.deletion_timestamp.is_some() {
        return JobStep::Idle;
    }
    let prebuilt_owned;
    let owned = match context.prebuilt.map(|prebuilt| use_prebuilt(job, prebuilt)) {
        None => owned,
        Some(PrebuiltUse::Adopt(adopted)) => return JobStep::AdoptWorkload(adopted),
        Some(PrebuiltUse::Own(workload)) => {
            prebuilt_owned = [workload];
            &prebuilt_owned[..]
        }
        Some(PrebuiltUse::None) => &[],
    };
    let live: Vec<&Workload> = owned
        .iter()
        .copied()
        .filter(|w| w.metadata.deletion_timestamp.is_none())
        .collect();
    if let Some(finished) = job_finished(job) {
        return match live
            .iter()
            .find(|w| !w.condition_is_true(condition_types::FINISHED))
        {
            Some(workload) => JobStep::FinishWorkload {
                workload: Box::new((*workload).clone()),
                reason: finished.reason,
                message: finished.message,
            },
            None => JobStep::Idle,
        };
    }
    let Some((&workload, duplicates)) = live.split_first() else {
        return without_workload(job, owned, context);
    };
    if let Some(duplicate) = duplicates.first() {
        // Kueue keeps one Workload per Job; the newest extra goes first, the first stays.
        return JobStep::DeleteWorkload {
            workload: Box::new((*duplicate).clone()),
            event: Some(JobEvent::deleted_workload(&key_of(duplicate))),
        };
    }
    if workload.condition_is_true(condition_types::FINISHED) {
        return JobStep::Idle;
    }
    match workload_sync(job, workload, context.flavors, context.gates) {
        Err(error) => return cannot_compose(error),
        Ok(WorkloadSync::Update | WorkloadSync::Replace) if context.prebuilt.is_some() => {
            return JobStep::FinishWorkload {
                workload: Box::new(workload.clone()),
                reason: finished_reasons::OUT_OF_SYNC,
                message: OUT_OF_SYNC_MESSAGE.to_owned(),
            };
        }
        Ok(WorkloadSync::Update) => {
            return match workload_for_job(job, context.priorities) {
                Ok(built) => {
                    let mut updated = workload.clone();
                    let active = updated.spec.active;
                    updated.spec = built.spec;
                    updated.spec.active = active;
                    JobStep::UpdateWorkload(Box::new(updated))
                }
                Err(error) => cannot_compose(error),
            };
        }
        Ok(WorkloadSync::Replace) => {
            return if is_suspended(job) {
                JobStep::DeleteWorkload {
                    workload: Box::new(workload.clone()),
                    event: Some(JobEvent::deleted_workload(&key_of(workload))),
                }
            } else {
                stop(job, Some(workload), STOP_NO_MATCHING_WORKLOAD)
            };
        }
        Ok(WorkloadSync::InSync) => {}
    }
    if context.prebuilt.is_none()
        && context.gates.enabled(Feature::AdmissionGatedBy)
        && let Some((followed, gates)) = follow_gates(&job.metadata, workload)
    {
        return JobStep::FollowAdmissionGates {
            workload: Box::new(followed),
            event: JobEvent::updated_admission_gates(&gates),
        };
    }
    if let Some(step) = priority_step(job, workload, context.priorities) {
        return step;
    }
    if context.wait_for_pods_ready && workload.condition_is_true(condition_types::QUOTA_RESERVED) {
        let condition = pods_ready_condition(workload, job_pods_ready(job));
        if !condition.is_current(workload) {
            return JobStep::PodsReady {
                workload: Box::new(workload.clone()),
                condition,
            };
        }
    }
    let evicted = workload.true_condition(condition_types::EVICTED);
    let admitted = workload.condition_is_true(condition_types::ADMITTED);
    if let Some(evicted) = evicted {
        return stop(job, Some(workload), &evicted.message);
    }
    if !admitted {
        let stopping = stop(job, Some(workload), STOP_NOT_ADMITTED);
        if stopping != JobStep::Idle {
            return stopping;
        }
        // A suspended Job labelled with another queue (or its first) moves its Workload there.
        let queue = queue_name(&job.metadata);
        if is_suspended(job) && workload.spec.queue_name.as_deref() != queue {
            let mut moved = workload.clone();
            moved.spec.queue_name = queue.map(str::to_owned);
            return JobStep::ChangeQueue(Box::new(moved));
        }
        return JobStep::Idle;
    }
    if !is_suspended(job) {
        // Admitted again before the stop restored the template (an eviction for node failures
        // is requeued at once): the stop is finished first, then the Job starts afresh.
        let stopping = job.spec.as_ref().and_then(|s| s.suspend) == Some(true);
        return if stopping {
            stop(job, Some(workload), STOP_NOT_ADMITTED)
        } else if context.gates.enabled(Feature::ReclaimablePods) {
            reclaimable_step(job, workload)
        } else {
            JobStep::Idle
        };
    }
    start(job, workload, context)
}

/// The reclaimable pods of a running Job to write, if they changed. Only the quota of an admitted
/// Workload shrinks with them.
fn reclaimable_step(job: &Job, workload: &Workload) -> JobStep {
    match to_write(workload, job_reclaimable_pods(job)) {
        Some(pods) => JobStep::ReclaimablePods {
            workload: Box::new(workload.clone()),
            pods,
        },
        None => JobStep::Idle,
    }
}

/// A Job whose Workloads are all gone or going: stop it if it runs, then create a Workload once
/// no pod of it is active (Kueue never lets a new Workload count pods an old one still runs); a
/// Job naming a prebuilt Workload waits for it instead.
fn without_workload(job: &Job, owned: &[&Workload], context: JobContext<'_>) -> JobStep {
    if !is_suspended(job) {
        let (message, workload) = match owned.first() {
            Some(deleted) => (STOP_WORKLOAD_DELETED, Some(*deleted)),
            None => (STOP_MISSING_WORKLOAD, None),
        };
        return stop(job, workload, message);
    }
    if is_active(job) || !owned.is_empty() || context.prebuilt.is_some() {
        return JobStep::Idle;
    }
    match workload_for_job(job, context.priorities) {
        Ok(mut workload) => {
            let copied = copied_labels(job.metadata.labels.as_ref(), context.label_keys_to_copy);
            add_labels(&mut workload, copied);
            if context.gates.enabled(Feature::AdmissionGatedBy) {
                copy_gates(&job.metadata, &mut workload);
            }
            JobStep::CreateWorkload(Box::new(workload))
        }
        Err(error) => cannot_compose(error),
    }
}

/// The next write of Kueue's stop: suspend (with the `stopping` annotation), clear the start
/// time, restore the template; `Stopped` is recorded with the suspension.
fn stop(job: &Job, workload: Option<&Workload>, message: &str) -> JobStep {
    let plan = stop_job(job, workload);
    let suspended = job.spec.as_ref().and_then(|s| s.suspend) == Some(true);
    if !suspended && let Some(suspend) = plan.suspend {
        return JobStep::UpdateJob {
            job: Box::new(suspend),
            event: Some(JobEvent::stopped(message)),
        };
    }
    if plan.clear_start_time {
        return JobStep::ClearStartTime;
    }
    match plan.restore {
        Some(restored) => JobStep::UpdateJob {
            job: Box::new(restored),
            event: None,
        },
        None => JobStep::Idle,
    }
}

/// Kueue's start of an admitted Workload's suspended Job; a conflict no retry can solve
/// finishes the Workload with `FailedToStart`.
fn start(job: &Job, workload: &Workload, context: JobContext<'_>) -> JobStep {
    let started = pod_set_infos(workload, context.flavors, context.gates)
        .and_then(|infos| start_job(job, &infos));
    match started {
        Ok(started) => {
            let cluster_queue = workload
                .status
                .as_ref()
                .and_then(|s| s.admission.as_ref())
                .map(|a| a.cluster_queue.clone())
                .unwrap_or_default();
            JobStep::UpdateJob {
                job: Box::new(started),
                event: Some(JobEvent::started(&cluster_queue)),
            }
        }
        Err(error) if error.is_permanent() => JobStep::FinishWorkload {
            workload: Box::new(workload.clone()),
            reason: finished_reasons::FAILED_TO_START,
            message: error.to_string(),
        },
        // A flavor not read yet, or an admission check still deciding: the next change retries.
        Err(_) => JobStep::Idle,
    }
}

/// Kueue's priority update of a Job's Workload after its priority-class label changed.
fn priority_step(job: &Job, workload: &Workload, priorities: &PriorityLookup) -> Option<JobStep> {
    match follow_priority_label(&job.metadata, workload, priorities) {
        Ok(None) => None,
        Ok(Some(changed)) => Some(JobStep::ChangePriority(Box::new(changed))),
        Err(missing) => {
            let job = format!(
                "{}/{}",
                job.metadata.namespace.as_deref().unwrap_or_default(),
                job.metadata.name.as_deref().unwrap_or_default()
            );
            Some(cannot_compose(match missing {
                MissingClass::WorkloadPriorityClass(name) => {
                    JobError::WorkloadPriorityClassNotFound { job, name }
                }
                MissingClass::PriorityClass(name) => JobError::PriorityClassNotFound { job, name },
            }))
        }
    }
}

fn cannot_compose(error: JobError) -> JobStep {
    let event = match &error {
        JobError::WorkloadPriorityClassNotFound { name, .. } => {
            JobEvent::workload_priority_class_not_found(name)
        }
        other => JobEvent::err_workload_compose(&other.to_string()),
    };
    JobStep::CannotCompose { error, event }
}

/// Kueue's `Finished` message for a Workload whose owner is gone.
const OWNER_NOT_FOUND_MESSAGE: &str = "The workload's owner no longer exists";

/// The write the Job controller makes on a Workload itself, apart from its Job's steps.
#[derive(Clone, Debug, PartialEq)]
pub enum WorkloadStep {
    /// Nothing to write.
    Idle,
    /// Set `Finished=True` with this reason and message: its Job is gone or being deleted.
    Finish {
        reason: &'static str,
        message: String,
    },
    /// Drop the `resource-in-use` finalizer.
    Release,
}

/// The write `workload` needs, given the Job its controller reference names (`None` when that
/// Job is gone). Only Workloads of batch Jobs are looked at, and Workloads nothing owns, which
/// are what a Job deleted with `propagationPolicy: Orphan` leaves: the garbage collector drops
/// the owner reference, the `job-uid` label stays.
pub fn workload_step(workload: &Workload, job: Option<&Job>, gates: &FeatureGates) -> WorkloadStep {
    let owner = job.map(|job| OwnerState {
        deleting: job.metadata.deletion_timestamp.is_some(),
        suspended: is_suspended(job),
    });
    owned_workload_step(
        workload,
        &OwnerKind::new("batch", "v1", JOB_KIND),
        owner,
        Orphans::Finish,
        gates,
    )
}

/// What a Workload's step reads of the job controlling it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OwnerState {
    /// The job is being deleted.
    pub deleting: bool,
    /// The job is suspended: none of its pods run under the Workload.
    pub suspended: bool,
}

/// Whether a Workload nothing owns is the caller's to finish and release (one integration
/// finalizes orphans, so two never race for them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Orphans {
    Finish,
    Leave,
}

/// The write `workload` needs when a job of `kind` controls it (`owner` is `None` when that
/// job is gone). As Kueue's `FinalizeOrphanedWorkload` (from its job reconcilers and its
/// Workload reconciler) does, a Workload whose owner is gone or going is finished as
/// `OwnerNotFound` (gate `FinishOrphanedWorkloads`, unless it is being deleted) so its quota is
/// freed, then released; a finished Workload is released, and a deleted one once its job no
/// longer runs under it.
pub fn owned_workload_step(
    workload: &Workload,
    kind: &OwnerKind,
    owner: Option<OwnerState>,
    orphans: Orphans,
    gates: &FeatureGates,
) -> WorkloadStep {
    let meta = &workload.metadata;
    let deleting = meta.deletion_timestamp.is_some();
    let unowned = meta.owner_references.as_ref().is_none_or(Vec::is_empty);
    let of_kind = meta.owner_references.iter().flatten().any(|o| {
        o.controller == Some(true) && o.kind == kind.kind && o.api_version == kind.api_version
    });
    let labelled = meta
        .labels
        .as_ref()
        .is_some_and(|l| l.contains_key(labels::JOB_UID));
    let finish_orphans = gates.enabled(Feature::FinishOrphanedWorkloads);
    let orphaned =
        orphans == Orphans::Finish && unowned && (deleting || (finish_orphans && labelled));
    if !of_kind && !orphaned {
        return WorkloadStep::Idle;
    }
    let owner_gone = orphaned || owner.is_none_or(|owner| owner.deleting);
    let finished = workload.condition_is_true(condition_types::FINISHED);
    if owner_gone && finish_orphans && !deleting && !finished {
        return WorkloadStep::Finish {
            reason: finished_reasons::OWNER_NOT_FOUND,
            message: OWNER_NOT_FOUND_MESSAGE.to_owned(),
        };
    }
    let held = meta
        .finalizers
        .as_ref()
        .is_some_and(|f| f.iter().any(|f| f == finalizers::RESOURCE_IN_USE));
    let released = finished || owner_gone || (deleting && owner.is_some_and(|o| o.suspended));
    if held && released {
        WorkloadStep::Release
    } else {
        WorkloadStep::Idle
    }
}

fn key_of(workload: &Workload) -> String {
    format!(
        "{}/{}",
        workload.metadata.namespace.as_deref().unwrap_or_default(),
        workload.metadata.name.as_deref().unwrap_or_default()
    )
}

#[cfg(test)]
mod tests;
