//! The Job controller's steps turned into writes, the writes carried out, and their answers.

use std::collections::BTreeMap;

use crate::api::Condition;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{ApiResource, DynamicObject};
use kube::{Resource, ResourceExt};

use super::super::events::{EventSink, WorkloadEvent};
use super::super::writer::{WriteError, Writer};
use super::inputs::JobCaches;
use super::settings::JobSettings;
use crate::api::keys::{condition_types, job_event_reasons};
use crate::api::workload_status::ReclaimablePod;
use crate::api::{HasConditions, ObjectKey, Workload};
use crate::clock::Reading;
use crate::jobs::{
    JobContext, JobEvent, JobStep, STOP_MISSING_WORKLOAD, STOP_NOT_ADMITTED, WorkloadStep, kinds,
    next_job_step, workload_step,
};
use crate::status::conditions::{Desired, set_condition};

/// One write to make.
#[derive(Debug)]
pub enum Action {
    CreateWorkload(Box<Workload>),
    ReplaceWorkload(Box<Workload>),
    DeleteWorkload(Box<Workload>),
    /// Apply this condition to the Workload's status.
    Condition(Box<Workload>, Box<Condition>),
    /// Apply these reclaimable pods to the Workload's status.
    ReclaimablePods(Box<Workload>, Vec<ReclaimablePod>),
    /// Drop the Workload's `resource-in-use` finalizer.
    ReleaseWorkload(Box<Workload>),
    /// Change a Job as read into the Job as decided (a patch of what differs).
    PatchJob {
        read: Box<Job>,
        job: Box<Job>,
    },
    /// Replace a job of a framework kind, as the API serves that kind.
    ReplaceObject(Box<DynamicObject>, Box<ApiResource>),
    ClearStartTime(Box<Job>),
}

/// A write and the events to record once it has landed.
#[derive(Debug)]
pub struct Write {
    action: Action,
    events: Option<(ObjectReference, Vec<WorkloadEvent>)>,
    /// The write stops a running job because its Workload is not admitted or missing.
    stops_unadmitted: bool,
    /// Made only if the job's Workloads read afresh are the ones the decision saw.
    fence: Option<WorkloadFence>,
}

impl Write {
    /// Fences a stop of a running job for want of an admission on the Workloads the decision
    /// saw. A replica that has just become leader has Job and Workload watches that deliver
    /// apart: it may hold a Job its predecessor started on an admission its Workload watch has not
    /// brought yet, and Kueue's reconciler would suspend that Job for a Workload that is in fact
    /// admitted. `fence` gives `None` when the stop must be made whatever the Workloads are now.
    pub fn fenced_if_stopping(mut self, fence: impl FnOnce() -> Option<WorkloadFence>) -> Self {
        if self.stops_unadmitted {
            self.fence = fence();
        }
        self
    }

    /// The fence the write waits on, if any.
    #[cfg(test)]
    pub fn fence(&self) -> Option<&WorkloadFence> {
        self.fence.as_ref()
    }
}

/// The Workloads a job controls, as a decision saw them: by name, with their resource versions.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadFence {
    pub namespace: String,
    pub job_uid: String,
    pub seen: BTreeMap<String, String>,
}

impl WorkloadFence {
    /// The fence of a stop of `job` decided on `controlled`; none once one of them has been
    /// evicted: a job still running on an admission that was taken back must stop, even when
    /// its Workload has been admitted again since (the new admission may differ), as Kueue
    /// stops it before the Workload queues again.
    pub fn of(job: &impl ResourceExt, controlled: &[&Workload]) -> Option<Self> {
        let evicted = controlled
            .iter()
            .any(|w| w.condition(condition_types::EVICTED).is_some());
        if evicted {
            return None;
        }
        Some(WorkloadFence {
            namespace: job.namespace().unwrap_or_default(),
            job_uid: job.uid().unwrap_or_default(),
            seen: controlled
                .iter()
                .map(|w| (w.name_any(), w.resource_version().unwrap_or_default()))
                .collect(),
        })
    }

    /// Whether the Workloads read now are the ones the decision saw.
    pub fn holds(&self, read: &BTreeMap<String, String>) -> bool {
        &self.seen == read
    }
}

/// What a landed write left behind.
#[derive(Debug)]
pub enum Outcome {
    Job(Box<Job>),
    Object(Box<DynamicObject>),
    Workload(Box<Workload>),
    Deleted,
}

/// A write's answer.
#[derive(Debug)]
pub struct Done {
    pub events: Option<(ObjectReference, Vec<WorkloadEvent>)>,
    /// The resource version the write was decided on (`None` for a create).
    pub read_version: Option<String>,
    pub result: Result<Outcome, WriteError>,
}

impl Action {
    /// The resource version of the object the write was decided on.
    fn read_version(&self) -> Option<String> {
        match self {
            Action::CreateWorkload(_) => None,
            Action::ReplaceWorkload(w)
            | Action::DeleteWorkload(w)
            | Action::Condition(w, _)
            | Action::ReclaimablePods(w, _)
            | Action::ReleaseWorkload(w) => w.resource_version(),
            Action::PatchJob { read: job, .. } | Action::ClearStartTime(job) => {
                job.resource_version()
            }
            Action::ReplaceObject(job, _) => job.resource_version(),
        }
    }
}

/// The next step of `job`; none for a Job kuota does not manage (Kueue's reconciler ignores a
/// Job naming no queue unless `manageJobsWithoutQueueName` is on and its namespace is selected,
/// and a Job whose parent an integration manages).
pub fn job_step(job: &Job, caches: &JobCaches, settings: &JobSettings) -> JobStep {
    let namespace = job.namespace().unwrap_or_default();
    if !settings
        .scope
        .manages(&job.metadata, &caches.namespace_labels(&namespace))
    {
        return JobStep::Idle;
    }
    let owned = caches.workloads_of(job);
    next_job_step(
        job,
        &owned,
        JobContext {
            flavors: &caches.flavors,
            priorities: caches.priorities.lookup(),
            gates: &settings.gates,
            wait_for_pods_ready: settings.wait_for_pods_ready,
            label_keys_to_copy: &settings.label_keys_to_copy,
            prebuilt: caches.prebuilt_of(job),
        },
    )
}

/// `type_` set on `workload` as Kueue sets it (its time moves only when its status flips).
fn condition(workload: &Workload, desired: Desired<'_>, now: &Time) -> Option<Condition> {
    let type_ = desired.type_.to_owned();
    let mut conditions = workload
        .status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    set_condition(&mut conditions, desired, now);
    conditions.condition(&type_).cloned()
}

/// A job object of some kind, as its steps are written.
pub trait JobObject: ResourceExt + Clone {
    /// The event target naming the job.
    fn reference(&self) -> ObjectReference;
    /// The write changing the job as `read` into `job`; `None` when kuota cannot tell how the
    /// API serves it.
    fn replace(read: &Self, job: Box<Self>) -> Option<Action>;
    /// The write clearing the job's start time (only batch Jobs have one to clear).
    fn clear_start_time(&self) -> Option<Action>;
}

impl JobObject for Job {
    fn reference(&self) -> ObjectReference {
        self.object_ref(&())
    }

    fn replace(read: &Self, job: Box<Self>) -> Option<Action> {
        Some(Action::PatchJob {
            read: Box::new(read.clone()),
            job,
        })
    }

    fn clear_start_time(&self) -> Option<Action> {
        Some(Action::ClearStartTime(Box::new(self.clone())))
    }
}

impl JobObject for DynamicObject {
    fn reference(&self) -> ObjectReference {
        let types = self.types.clone().unwrap_or_default();
        ObjectReference {
            api_version: Some(types.api_version),
            kind: Some(types.kind),
            name: self.metadata.name.clone(),
            namespace: self.metadata.namespace.clone(),
            uid: self.metadata.uid.clone(),
            resource_version: self.metadata.resource_version.clone(),
            ..ObjectReference::default()
        }
    }

    /// A framework job is replaced whole: it is held as the JSON the API server sent, so
    /// nothing it does not know is lost.
    fn replace(_read: &Self, job: Box<Self>) -> Option<Action> {
        let types = job.types.as_ref()?;
        let resource = kinds::rules_of(&types.api_version, &types.kind)?
            .id()
            .api_resource();
        Some(Action::ReplaceObject(job, Box::new(resource)))
    }

    fn clear_start_time(&self) -> Option<Action> {
        None
    }
}

/// The write `step` asks for on the job `key`. A composition error is recorded on the job at
/// once, once per version of it.
pub fn write_for<J: JobObject, E: std::fmt::Display>(
    step: JobStep<J, E>,
    job: &J,
    key: &ObjectKey,
    reported: &mut std::collections::BTreeMap<ObjectKey, Option<String>>,
    events: &EventSink,
    now: Reading,
) -> Option<Write> {
    let now = now.time();
    let regarding = job.reference();
    let on_job = |e: Option<JobEvent>| e.map(|e| (regarding.clone(), vec![WorkloadEvent::from(e)]));
    let mut stops_unadmitted = false;
    let (action, events_after) = match step {
        JobStep::Idle => return None,
        JobStep::CannotCompose { error, event: e } => {
            let version = job.resource_version();
            if reported.get(key) != Some(&version) {
                tracing::warn!(job = %key, %error, "no Workload for the job");
                events.record_on(regarding, vec![WorkloadEvent::from(e)]);
                reported.insert(key.clone(), version);
            }
            return None;
        }
        JobStep::CreateWorkload(workload) => {
            let created = JobEvent::created_workload(&format!(
                "{}/{}",
                workload.namespace().unwrap_or_default(),
                workload.name_any()
            ));
            (Action::CreateWorkload(workload), on_job(Some(created)))
        }
        JobStep::UpdateWorkload(workload) => {
            let updated = JobEvent::updated_workload(&format!(
                "{}/{}",
                workload.namespace().unwrap_or_default(),
                workload.name_any()
            ));
            (Action::ReplaceWorkload(workload), on_job(Some(updated)))
        }
        JobStep::FollowAdmissionGates { workload, event: e } => {
            (Action::ReplaceWorkload(workload), on_job(Some(e)))
        }
        JobStep::ChangePriority(workload) => {
            let updated = JobEvent::updated_workload_priority(&format!(
                "{}/{}",
                workload.namespace().unwrap_or_default(),
                workload.name_any()
            ));
            (Action::ReplaceWorkload(workload), on_job(Some(updated)))
        }
        JobStep::ChangeQueue(workload) | JobStep::AdoptWorkload(workload) => {
            (Action::ReplaceWorkload(workload), on_job(None))
        }
        JobStep::DeleteWorkload { workload, event: e } => {
            (Action::DeleteWorkload(workload), on_job(e))
        }
        JobStep::FinishWorkload {
            workload,
            reason,
            message,
        } => {
            let finished = condition(
                &workload,
                Desired {
                    type_: condition_types::FINISHED,
                    status: true,
                    reason,
                    message,
                    observed_generation: workload.metadata.generation,
                },
                &now,
            )?;
            let note = JobEvent::finished_workload(&format!(
                "{}/{}",
                workload.namespace().unwrap_or_default(),
                workload.name_any()
            ));
            (
                Action::Condition(workload, Box::new(finished)),
                on_job(Some(note)),
            )
        }
        JobStep::ReclaimablePods { workload, pods } => {
            (Action::ReclaimablePods(workload, pods), None)
        }
        JobStep::PodsReady {
            workload,
            condition: ready,
        } => {
            let desired = ready.desired(workload.metadata.generation);
            let written = condition(&workload, desired, &now)?;
            (Action::Condition(workload, Box::new(written)), None)
        }
        JobStep::UpdateJob {
            job: updated,
            event: e,
        } => {
            stops_unadmitted = e.as_ref().is_some_and(|e| {
                e.reason == job_event_reasons::STOPPED
                    && (e.note == STOP_NOT_ADMITTED || e.note == STOP_MISSING_WORKLOAD)
            });
            (J::replace(job, updated)?, on_job(e))
        }
        JobStep::ClearStartTime => (job.clear_start_time()?, None),
    };
    Some(Write {
        action,
        events: events_after,
        stops_unadmitted,
        fence: None,
    })
}

/// The write the Workload `key` needs itself, if any: finished once its Job is gone, released
/// once finished or deleted (only Workloads of Jobs, and those nothing owns any more: other
/// integrations keep their own).
pub fn workload_write(
    caches: &JobCaches,
    settings: &JobSettings,
    key: &ObjectKey,
    now: Reading,
) -> Option<Write> {
    let workload = caches.read_workload(key)?;
    let step = workload_step(workload, caches.job_of(workload), &settings.gates);
    write_workload_step(workload, step, now)
}

/// The write that makes `step` on `workload`.
pub fn write_workload_step(workload: &Workload, step: WorkloadStep, now: Reading) -> Option<Write> {
    let action = match step {
        WorkloadStep::Idle => return None,
        WorkloadStep::Finish { reason, message } => {
            let finished = condition(
                workload,
                Desired {
                    type_: condition_types::FINISHED,
                    status: true,
                    reason,
                    message,
                    observed_generation: workload.metadata.generation,
                },
                &now.time(),
            )?;
            Action::Condition(Box::new(workload.clone()), Box::new(finished))
        }
        WorkloadStep::Release => Action::ReleaseWorkload(Box::new(workload.clone())),
    };
    Some(Write {
        action,
        events: None,
        stops_unadmitted: false,
        fence: None,
    })
}

/// Carries out `write` and returns its answer.
pub async fn carry_out(write: Write, writer: Writer) -> Done {
    let read_version = write.action.read_version();
    if let Some(fence) = &write.fence {
        let read = writer
            .controlled_workloads(&fence.namespace, &fence.job_uid, fence.seen.keys())
            .await;
        let stale = match read {
            Ok(read) if fence.holds(&read) => None,
            Ok(_) => Some(WriteError::Conflict(format!(
                "the Workloads of job {} in {}",
                fence.job_uid, fence.namespace
            ))),
            Err(error) => Some(error),
        };
        if let Some(error) = stale {
            return Done {
                events: write.events,
                read_version,
                result: Err(error),
            };
        }
    }
    let result = match write.action {
        Action::CreateWorkload(w) => writer
            .create_workload(&w)
            .await
            .map(|w| Outcome::Workload(Box::new(w))),
        Action::ReplaceWorkload(w) => writer
            .replace_workload(&w)
            .await
            .map(|w| Outcome::Workload(Box::new(w))),
        Action::DeleteWorkload(w) => writer.delete_workload(&w).await.map(|()| Outcome::Deleted),
        Action::Condition(w, c) => writer
            .workload_condition(&w, &c)
            .await
            .map(|w| Outcome::Workload(Box::new(w))),
        Action::ReclaimablePods(w, pods) => writer
            .workload_reclaimable_pods(&w, &pods)
            .await
            .map(|w| Outcome::Workload(Box::new(w))),
        Action::ReleaseWorkload(w) => writer
            .release_workload(&w)
            .await
            .map(|w| Outcome::Workload(Box::new(w))),
        Action::PatchJob { read, job } => writer
            .patch_job(&read, &job)
            .await
            .map(|j| Outcome::Job(Box::new(j))),
        Action::ReplaceObject(job, resource) => writer
            .replace_object(&job, &resource)
            .await
            .map(|j| Outcome::Object(Box::new(j))),
        Action::ClearStartTime(job) => writer
            .clear_job_start_time(&job)
            .await
            .map(|j| Outcome::Job(Box::new(j))),
    };
    Done {
        events: write.events,
        read_version,
        result,
    }
}

#[cfg(test)]
mod tests;
