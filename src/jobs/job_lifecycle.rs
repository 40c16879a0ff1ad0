//! A batch/v1 Job's life under its Workload, as Kueue's Job integration runs it: started on
//! admission, stopped (suspended, its template restored) on eviction, preemption or a lost
//! Workload, and finished when the Job has a `Complete` or `Failed` condition.
//!
//! The Job's original pod template is not kept anywhere on the Job: like Kueue, kuota restores
//! it from the Workload's `spec.podSets[].template`, which it copied from the Job while the Job
//! was suspended and never started (and which only changes while the Job is suspended and not
//! admitted). Labels the batch Job controller adds to the template after creation are kept.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::Job;

use crate::api::ConditionEntry;
use crate::api::Workload;
use crate::api::keys::{annotations, finished_reasons, labels};

use super::pod_set_info::{PodSetInfo, PodSetInfoError};

/// Labels the batch Job controller writes on its pod templates; a restore keeps them.
const JOB_CONTROLLER_LABELS: [&str; 4] = [
    labels::BATCH_JOB_NAME,
    labels::BATCH_CONTROLLER_UID,
    labels::LEGACY_JOB_NAME,
    labels::LEGACY_CONTROLLER_UID,
];
/// Job condition types that end a Job.
const JOB_COMPLETE: &str = "Complete";
const JOB_FAILED: &str = "Failed";

/// Whether Kueue counts the Job as suspended: `spec.suspend: true` and no
/// `kueue.x-k8s.io/stopping` annotation (a stop that has not finished restoring the template
/// still counts as running, so the next reconcile finishes it).
pub fn is_suspended(job: &Job) -> bool {
    let suspend = job.spec.as_ref().and_then(|s| s.suspend).unwrap_or(false);
    suspend && annotation(job, annotations::STOPPING) != Some("true")
}

/// Whether the Job has active pods (`status.active` > 0); Kueue releases an evicted Workload's
/// quota only once this is false.
pub fn is_active(job: &Job) -> bool {
    job.status
        .as_ref()
        .and_then(|s| s.active)
        .is_some_and(|n| n != 0)
}

/// The Job as Kueue starts it with `infos` (from [`super::pod_set_infos`]): `suspend: false`;
/// with partial admission (`kueue.x-k8s.io/job-min-parallelism`) `parallelism` set to the
/// admitted count, and `completions` too when `kueue.x-k8s.io/job-completions-equal-parallelism`
/// is true; the info merged into the pod template. A conflicting key is a permanent error
/// (see [`PodSetInfoError::is_permanent`]): the Workload is then finished with reason
/// `FailedToStart` and the error as message.
pub fn start_job(job: &Job, infos: &[PodSetInfo]) -> Result<Job, PodSetInfoError> {
    let [info] = infos else {
        return Err(PodSetInfoError::PodSetCount {
            want: 1,
            got: infos.len(),
        });
    };
    let mut started = job.clone();
    let spec = started.spec.get_or_insert_default();
    spec.suspend = Some(false);
    if min_parallelism(job).is_some() {
        spec.parallelism = Some(info.count);
        if completions_equal_parallelism(job) {
            spec.completions = Some(info.count);
        }
    }
    let meta = spec.template.metadata.get_or_insert_default();
    let pod = spec.template.spec.get_or_insert_default();
    info.merge_into(meta, pod)?;
    Ok(started)
}

/// How to stop a Job, in the order the writes must land: Kubernetes lets a Job's scheduling
/// directives change only while it is suspended and has no `status.startTime`.
#[derive(Clone, Debug, PartialEq)]
pub struct StopPlan {
    /// The Job to write first when it still runs: `suspend: true` and the
    /// `kueue.x-k8s.io/stopping` annotation (so a crash before the restore is finished later).
    /// `None`: it is already suspended, and no `Stopped` event is due.
    pub suspend: Option<Job>,
    /// `status.startTime` is set and must be cleared (a status write) before the restore.
    pub clear_start_time: bool,
    /// The Job to write last: the template (and a partially admitted `parallelism`) restored
    /// from the Workload, the `stopping` annotation removed. `None`: nothing to change.
    pub restore: Option<Job>,
}

impl StopPlan {
    /// Whether this stop suspends a running Job (Kueue's `Stopped` event is recorded then).
    pub fn stops_now(&self) -> bool {
        self.suspend.is_some()
    }
}

/// How Kueue stops `job`: suspend it if it runs, then restore what the start changed from the
/// Workload's copy of the pod template. Without a Workload (it was deleted) the template cannot
/// be restored and only the suspension happens.
pub fn stop_job(job: &Job, workload: Option<&Workload>) -> StopPlan {
    let suspend = (!is_suspended(job)).then(|| {
        let mut suspended = job.clone();
        suspended.spec.get_or_insert_default().suspend = Some(true);
        suspended
            .metadata
            .annotations
            .get_or_insert_default()
            .insert(annotations::STOPPING.to_owned(), "true".to_owned());
        suspended
    });
    let clear_start_time = job.status.as_ref().is_some_and(|s| s.start_time.is_some());
    let mut restored = suspend.clone().unwrap_or_else(|| job.clone());
    let mut changed = suspend.is_some();
    if let Some(stopping) = restored.metadata.annotations.as_mut() {
        changed |= stopping.remove(annotations::STOPPING).is_some();
        if stopping.is_empty() {
            restored.metadata.annotations = None;
        }
    }
    if let Some(pod_set) = workload.and_then(|w| w.spec.pod_sets.first()) {
        changed |= restore_pod_set(&mut restored, job, PodSetInfo::from_pod_set(pod_set));
    }
    StopPlan {
        suspend,
        clear_start_time,
        restore: changed.then_some(restored),
    }
}

/// Restores `target` from `info`, keeping the Job controller's labels `job` carries; returns
/// whether anything changed.
fn restore_pod_set(target: &mut Job, job: &Job, mut info: PodSetInfo) -> bool {
    let mut changed = false;
    let spec = target.spec.get_or_insert_default();
    if min_parallelism(job).is_some() && spec.parallelism.unwrap_or(0) != info.count {
        spec.parallelism = Some(info.count);
        if completions_equal_parallelism(job) {
            spec.completions = Some(info.count);
        }
        changed = true;
    }
    let current_labels = spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    for key in JOB_CONTROLLER_LABELS {
        if let Some(value) = current_labels.get(key) {
            info.labels.insert(key.to_owned(), value.clone());
        }
    }
    let meta = spec.template.metadata.get_or_insert_default();
    let pod = spec.template.spec.get_or_insert_default();
    changed |= info.restore_into(meta, pod);
    changed
}

/// How a Job ended, as its Workload's `Finished=True` condition shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobFinished {
    /// `Succeeded` or `Failed`.
    pub reason: &'static str,
    /// The Job condition's message.
    pub message: String,
}

/// Whether the Job has finished: the first `Complete` or `Failed` condition that is `True`.
pub fn job_finished(job: &Job) -> Option<JobFinished> {
    let conditions = job.status.as_ref()?.conditions.as_ref()?;
    conditions
        .iter()
        .find(|c| (c.is_type(JOB_COMPLETE) || c.is_type(JOB_FAILED)) && c.is_true())
        .map(|c| JobFinished {
            reason: if c.is_type(JOB_FAILED) {
                finished_reasons::FAILED
            } else {
                finished_reasons::SUCCEEDED
            },
            message: c.message.clone().unwrap_or_default(),
        })
}

/// Whether every pod the Job runs at once is ready or has succeeded (Kueue's `PodsReady` for a
/// Job): `ready + succeeded + uncounted succeeded ≥ min(parallelism, completions)`.
pub fn job_pods_ready(job: &Job) -> bool {
    let spec = job.spec.as_ref();
    let parallelism = spec.and_then(|s| s.parallelism).unwrap_or(1);
    let count = spec
        .and_then(|s| s.completions)
        .map_or(parallelism, |c| c.min(parallelism));
    let status = job.status.as_ref();
    let ready = status.and_then(|s| s.ready).unwrap_or(0);
    let succeeded = status.and_then(|s| s.succeeded).unwrap_or(0);
    let uncounted = status
        .and_then(|s| s.uncounted_terminated_pods.as_ref())
        .and_then(|u| u.succeeded.as_ref())
        .map_or(0, Vec::len);
    let uncounted = i64::try_from(uncounted).unwrap_or(i64::MAX);
    i64::from(ready) + i64::from(succeeded) + uncounted >= i64::from(count)
}

/// The partial-admission floor, when the annotation holds an integer (Kueue acts on partial
/// admission only then).
fn min_parallelism(job: &Job) -> Option<i32> {
    annotation(job, annotations::JOB_MIN_PARALLELISM).and_then(|v| v.parse().ok())
}

/// Whether partial admission lowers `completions` with `parallelism` (a Go boolean).
fn completions_equal_parallelism(job: &Job) -> bool {
    matches!(
        annotation(job, annotations::JOB_COMPLETIONS_EQUAL_PARALLELISM),
        Some("1" | "t" | "T" | "TRUE" | "true" | "True")
    )
}

fn annotation<'a>(job: &'a Job, key: &str) -> Option<&'a str> {
    job.metadata
        .annotations
        .as_ref()
        .and_then(|a: &BTreeMap<String, String>| a.get(key))
        .map(String::as_str)
}

#[cfg(test)]
mod tests;
