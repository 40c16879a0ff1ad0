//! The next step for a job of any kind, in Kueue's reconciler order (`jobframework`'s
//! `ReconcileGenericJob`), as the batch Job's [`next_job_step`](super::super::job_reconcile)
//! decides it: a job naming a prebuilt Workload takes it over; a finished job finishes its
//! Workload; a job without a Workload gets one once no pod of it runs; a duplicate Workload is
//! deleted; one out of step is updated (suspended job, no quota) or replaced; the Workload
//! follows the job's admission gates and priority-class label; `PodsReady` is kept; an evicted
//! or unadmitted Workload stops the job, and a suspended one follows its queue-name label; an
//! admitted one starts it, and its reclaimable pods are kept while it runs. One step at a
//! time: the controller writes it and asks again once its watches show the result.

use kube::api::DynamicObject;

use crate::api::HasConditions;
use crate::api::Workload;
use crate::api::keys::{condition_types, finished_reasons};
use crate::engine::features::Feature;

use super::super::admission_gate::{copy_gates, follow_gates};
use super::super::events::{
    JobEvent, STOP_MISSING_WORKLOAD, STOP_NO_MATCHING_WORKLOAD, STOP_NOT_ADMITTED,
    STOP_WORKLOAD_DELETED,
};
use super::super::pods_ready::pods_ready_condition;
use super::super::prebuilt::{OUT_OF_SYNC_MESSAGE, PrebuiltUse, use_prebuilt_by};
use super::super::priority::{MissingClass, PriorityLookup, follow_priority_label};
use super::super::reclaimable::to_write;
use super::super::scope::queue_name;
use super::in_step::in_step;
use super::kind::JobKind;
use super::start_stop::{self, StartError};
use super::workload::{FrameworkError, WorkloadContext, pod_set_source, workload_for};
use crate::jobs::job_reconcile::{JobContext, JobStep};

/// The one write to make next for a job of a framework kind: the batch Job's steps, on the
/// kind's object (a framework kind's job never needs `ClearStartTime`).
pub type FrameworkStep = JobStep<DynamicObject, FrameworkError>;

/// The next step for `job`, given the Workloads it controls and the object it builds its pod
/// sets from (`referenced`, if its kind reads one and it exists).
pub fn next_step(
    kind: &dyn JobKind,
    job: &DynamicObject,
    referenced: Option<&DynamicObject>,
    owned: &[&Workload],
    ctx: JobContext<'_>,
) -> FrameworkStep {
    // A job being deleted is only finalized, as in Kueue; one the kind skips is left alone.
    if job.metadata.deletion_timestamp.is_some() || kind.skip(job) {
        return FrameworkStep::Idle;
    }
    let id = kind.id();
    let prebuilt_owned;
    let owned = match ctx
        .prebuilt
        .map(|prebuilt| use_prebuilt_by(&job.metadata, &id.api_version(), id.kind, prebuilt))
    {
        None => owned,
        Some(PrebuiltUse::Adopt(adopted)) => return FrameworkStep::AdoptWorkload(adopted),
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
    if let Some(finished) = kind.finished(job) {
        return match live
            .iter()
            .find(|w| !w.condition_is_true(condition_types::FINISHED))
        {
            Some(workload) => FrameworkStep::FinishWorkload {
                workload: Box::new((*workload).clone()),
                reason: finished.reason,
                message: finished.message,
            },
            None => FrameworkStep::Idle,
        };
    }
    let Some((&workload, duplicates)) = live.split_first() else {
        return without_workload(kind, job, referenced, owned, ctx);
    };
    if let Some(duplicate) = duplicates.first() {
        // Kueue keeps one Workload per job: the extras go, the first stays.
        return delete(duplicate);
    }
    if workload.condition_is_true(condition_types::FINISHED) {
        return FrameworkStep::Idle;
    }
    match in_step(kind, job, referenced, workload, ctx.flavors, ctx.gates) {
        Err(error) => return cannot_compose(error),
        Ok(false) => return out_of_step(kind, job, referenced, workload, ctx),
        Ok(true) => {}
    }
    if ctx.prebuilt.is_none()
        && ctx.gates.enabled(Feature::AdmissionGatedBy)
        && let Some((followed, gates)) = follow_gates(&job.metadata, workload)
    {
        return FrameworkStep::FollowAdmissionGates {
            workload: Box::new(followed),
            event: JobEvent::updated_admission_gates(&gates),
        };
    }
    if let Some(step) = priority_step(kind, job, workload, ctx.priorities) {
        return step;
    }
    if ctx.wait_for_pods_ready && workload.condition_is_true(condition_types::QUOTA_RESERVED) {
        // Kueue counts a job whose pod sets cannot be built as not ready.
        let ready = pod_set_source(kind, job, referenced).is_ok_and(|s| kind.pods_ready(&s));
        let condition = pods_ready_condition(workload, ready);
        if !condition.is_current(workload) {
            return FrameworkStep::PodsReady {
                workload: Box::new(workload.clone()),
                condition,
            };
        }
    }
    if let Some(evicted) = workload.true_condition(condition_types::EVICTED) {
        return stop(kind, job, Some(workload), &evicted.message);
    }
    if !workload.condition_is_true(condition_types::ADMITTED) {
        let stopping = stop(kind, job, Some(workload), STOP_NOT_ADMITTED);
        if stopping != FrameworkStep::Idle {
            return stopping;
        }
        // A suspended job labelled with another queue (or its first) moves its Workload there.
        let queue = queue_name(&job.metadata);
        if kind.is_suspended(job) && workload.spec.queue_name.as_deref() != queue {
            let mut moved = workload.clone();
            moved.spec.queue_name = queue.map(str::to_owned);
            return FrameworkStep::ChangeQueue(Box::new(moved));
        }
        return FrameworkStep::Idle;
    }
    if !kind.is_suspended(job) {
        if !ctx.gates.enabled(Feature::ReclaimablePods) {
            return FrameworkStep::Idle;
        }
        let Ok(source) = pod_set_source(kind, job, referenced) else {
            return FrameworkStep::Idle;
        };
        return match to_write(workload, kind.reclaimable_pods(&source)) {
            Some(pods) => FrameworkStep::ReclaimablePods {
                workload: Box::new(workload.clone()),
                pods,
            },
            None => FrameworkStep::Idle,
        };
    }
    start(kind, job, referenced, workload, ctx)
}

/// A job whose Workloads are all gone or going: stop it if it runs, then create a Workload once
/// no pod of it is active (a new Workload never counts pods an old one still runs).
fn without_workload(
    kind: &dyn JobKind,
    job: &DynamicObject,
    referenced: Option<&DynamicObject>,
    owned: &[&Workload],
    ctx: JobContext<'_>,
) -> FrameworkStep {
    if !kind.is_suspended(job) {
        let (message, workload) = match owned.first() {
            Some(deleted) => (STOP_WORKLOAD_DELETED, Some(*deleted)),
            None => (STOP_MISSING_WORKLOAD, None),
        };
        return stop(kind, job, workload, message);
    }
    // A job naming a prebuilt Workload waits for it; kuota never builds one for it.
    if kind.is_active(job) || !owned.is_empty() || ctx.prebuilt.is_some() {
        return FrameworkStep::Idle;
    }
    let built = workload_for(
        kind,
        job,
        WorkloadContext {
            priorities: ctx.priorities,
            label_keys_to_copy: ctx.label_keys_to_copy,
            referenced,
        },
    );
    match built {
        Ok(mut workload) => {
            if ctx.gates.enabled(Feature::AdmissionGatedBy) {
                copy_gates(&job.metadata, &mut workload);
            }
            FrameworkStep::CreateWorkload(Box::new(workload))
        }
        Err(error) => cannot_compose(error),
    }
}

/// A Workload that no longer describes its job: a suspended job whose Workload holds no quota
/// gets the spec rebuilt (keeping `spec.active`); otherwise the Workload is deleted, a running
/// job first stopped.
fn out_of_step(
    kind: &dyn JobKind,
    job: &DynamicObject,
    referenced: Option<&DynamicObject>,
    workload: &Workload,
    ctx: JobContext<'_>,
) -> FrameworkStep {
    if ctx.prebuilt.is_some() {
        return FrameworkStep::FinishWorkload {
            workload: Box::new(workload.clone()),
            reason: finished_reasons::OUT_OF_SYNC,
            message: OUT_OF_SYNC_MESSAGE.to_owned(),
        };
    }
    if !kind.is_suspended(job) {
        return stop(kind, job, Some(workload), STOP_NO_MATCHING_WORKLOAD);
    }
    if workload.condition_is_true(condition_types::QUOTA_RESERVED) {
        return delete(workload);
    }
    let built = workload_for(
        kind,
        job,
        WorkloadContext {
            priorities: ctx.priorities,
            label_keys_to_copy: ctx.label_keys_to_copy,
            referenced,
        },
    );
    match built {
        Ok(built) => {
            let mut updated = workload.clone();
            let active = updated.spec.active;
            updated.spec = built.spec;
            updated.spec.active = active;
            FrameworkStep::UpdateWorkload(Box::new(updated))
        }
        Err(error) => cannot_compose(error),
    }
}

/// Kueue's stop: suspend and restore the templates from the Workload; `Stopped` is recorded when
/// a running job is suspended.
fn stop(
    kind: &dyn JobKind,
    job: &DynamicObject,
    workload: Option<&Workload>,
    message: &str,
) -> FrameworkStep {
    let running = !kind.is_suspended(job);
    let stopped = match workload {
        Some(workload) => start_stop::stop(kind, job, workload),
        None => {
            let mut suspended = job.clone();
            kind.set_suspended(&mut suspended, true)
                .map(|()| running.then_some(suspended))
                .map_err(StartError::from)
        }
    };
    match stopped {
        Ok(Some(stopped)) => FrameworkStep::UpdateJob {
            job: Box::new(stopped),
            event: running.then(|| JobEvent::stopped(message)),
        },
        Ok(None) => FrameworkStep::Idle,
        Err(error) => {
            tracing::warn!(kind = kind.id().kind, job = %super::workload::job_key(job), %error, "cannot stop the job");
            FrameworkStep::Idle
        }
    }
}

/// Kueue's start of an admitted Workload's suspended job; a conflict no retry can solve finishes
/// the Workload with `FailedToStart`.
fn start(
    kind: &dyn JobKind,
    job: &DynamicObject,
    referenced: Option<&DynamicObject>,
    workload: &Workload,
    ctx: JobContext<'_>,
) -> FrameworkStep {
    match start_stop::start(kind, job, referenced, workload, ctx.flavors, ctx.gates) {
        Ok(started) => {
            let cluster_queue = workload
                .status
                .as_ref()
                .and_then(|s| s.admission.as_ref())
                .map(|a| a.cluster_queue.clone())
                .unwrap_or_default();
            FrameworkStep::UpdateJob {
                job: Box::new(started),
                event: Some(JobEvent::started(&cluster_queue)),
            }
        }
        Err(error) if error.is_permanent() => FrameworkStep::FinishWorkload {
            workload: Box::new(workload.clone()),
            reason: finished_reasons::FAILED_TO_START,
            message: error.to_string(),
        },
        // A flavor not read yet: the next change retries.
        Err(_) => FrameworkStep::Idle,
    }
}

/// Kueue's priority-class label change: the Workload follows the job's
/// `kueue.x-k8s.io/priority-class` label while it waits.
fn priority_step(
    kind: &dyn JobKind,
    job: &DynamicObject,
    workload: &Workload,
    priorities: &PriorityLookup,
) -> Option<FrameworkStep> {
    match follow_priority_label(&job.metadata, workload, priorities) {
        Ok(None) => None,
        Ok(Some(changed)) => Some(FrameworkStep::ChangePriority(Box::new(changed))),
        Err(missing) => {
            let (kind, job) = (kind.id().kind, super::workload::job_key(job));
            Some(cannot_compose(match missing {
                MissingClass::WorkloadPriorityClass(name) => {
                    FrameworkError::WorkloadPriorityClassNotFound { kind, job, name }
                }
                MissingClass::PriorityClass(name) => {
                    FrameworkError::PriorityClassNotFound { kind, job, name }
                }
            }))
        }
    }
}

fn delete(workload: &Workload) -> FrameworkStep {
    let key = format!(
        "{}/{}",
        workload.metadata.namespace.as_deref().unwrap_or_default(),
        workload.metadata.name.as_deref().unwrap_or_default()
    );
    FrameworkStep::DeleteWorkload {
        workload: Box::new(workload.clone()),
        event: Some(JobEvent::deleted_workload(&key)),
    }
}

fn cannot_compose(error: FrameworkError) -> FrameworkStep {
    let event = match &error {
        FrameworkError::WorkloadPriorityClassNotFound { name, .. } => {
            JobEvent::workload_priority_class_not_found(name)
        }
        other => JobEvent::err_workload_compose(&other.to_string()),
    };
    FrameworkStep::CannotCompose { error, event }
}

#[cfg(test)]
mod tests;
