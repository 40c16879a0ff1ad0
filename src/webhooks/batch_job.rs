//! Kueue's webhooks for batch/v1 Jobs. Defaulting sends a Job naming no queue to its namespace's
//! `default` LocalQueue when there is one, labels a Job naming no WorkloadPriorityClass with the
//! one named `default` when it exists, and suspends a Job kuota manages (it names a queue, or
//! `manageJobsWithoutQueueName` is on in a selected namespace; see [`crate::jobs::JobScope`]), so no pod
//! starts before its Workload is admitted; validation refuses the labels and annotations the Job
//! integration could not turn into a Workload, with the integration's own checks
//! (`jobs::workload_for_job`), and the changes Kueue forbids while the Job runs.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::Job;

use super::review::{AdmissionRequest, Operation, Verdict};
use super::settings::Webhooks;
use crate::api::json_patch as patch;
use crate::api::keys::{annotations, labels};
use crate::jobs::{JobError, PriorityLookup, workload_for_job};

const FRAMEWORK: &str = "batch/job";

fn enabled(webhooks: &Webhooks) -> bool {
    webhooks.frameworks.contains(FRAMEWORK)
}

fn label<'a>(job: &'a Job, key: &str) -> Option<&'a str> {
    job.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(key))
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}

fn annotation<'a>(job: &'a Job, key: &str) -> Option<&'a str> {
    job.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map(String::as_str)
}

fn suspended(job: &Job) -> bool {
    job.spec.as_ref().and_then(|s| s.suspend).unwrap_or(false)
}

/// Kueue's Job defaulting on creation: the `default` LocalQueue for a Job naming none (in a
/// selected namespace that has it), then suspension of a Job kuota manages.
pub fn default(webhooks: &Webhooks, request: &AdmissionRequest) -> Verdict {
    if request.operation != Operation::Create || !enabled(webhooks) {
        return Verdict::Allow;
    }
    let job: Job = match request.decode("Job", false) {
        Ok(job) => job,
        Err(invalid) => return invalid,
    };
    let mut defaulted = job.clone();
    if webhooks.default_job_metadata(request, &mut defaulted.metadata) && !suspended(&defaulted) {
        defaulted.spec.get_or_insert_default().suspend = Some(true);
    }
    if defaulted == job {
        return Verdict::Allow;
    }
    match (serde_json::to_value(&job), serde_json::to_value(&defaulted)) {
        (Ok(old), Ok(new)) => Verdict::Patch(patch::diff(&old, &new)),
        (Err(error), _) | (_, Err(error)) => {
            Verdict::Invalid(format!("the Job cannot be written back as JSON: {error}"))
        }
    }
}

pub fn validate(webhooks: &Webhooks, request: &AdmissionRequest) -> Verdict {
    if !enabled(webhooks) {
        return Verdict::Allow;
    }
    let (job, old) = match request.written::<Job>("Job") {
        Some(Ok(objects)) => objects,
        Some(Err(invalid)) => return invalid,
        None => return Verdict::Allow,
    };
    let key = job_key(&job, request);
    let mut problems = Vec::new();
    let settings = &webhooks.pods;
    let namespace_labels = settings
        .namespaces
        .labels(request.namespace_of(&job.metadata));
    if settings.scope.manages(&job.metadata, &namespace_labels)
        && let Some(problem) = integration_problem(&job, request)
    {
        problems.push(problem);
    }
    if let Some(old) = old {
        let default_queue = settings
            .namespaces
            .has_default_local_queue(request.namespace_of(&job.metadata));
        problems.extend(update_problems(&key, &old, &job, default_queue));
    }
    if problems.is_empty() {
        Verdict::Allow
    } else {
        Verdict::Deny(problems.join("; "))
    }
}

fn job_key(job: &Job, request: &AdmissionRequest) -> String {
    let namespace = job
        .metadata
        .namespace
        .clone()
        .or_else(|| request.namespace.clone())
        .unwrap_or_default();
    let name = job
        .metadata
        .name
        .clone()
        .filter(|n| !n.is_empty())
        .or_else(|| job.metadata.generate_name.clone())
        .unwrap_or_default();
    format!("{namespace}/{name}")
}

/// What the Job integration would refuse in this Job's labels, annotations and topology
/// requests. Identity fields the API server has not set yet on CREATE (the UID, a generated
/// name) are filled in first; priority classes that do not exist yet are not the webhook's
/// business (the Workload waits for them).
fn integration_problem(job: &Job, request: &AdmissionRequest) -> Option<String> {
    let mut job = job.clone();
    request.fill_identity(&mut job.metadata);
    match workload_for_job(&job, &PriorityLookup::new()) {
        Ok(_) => None,
        Err(
            JobError::WorkloadPriorityClassNotFound { .. } | JobError::PriorityClassNotFound { .. },
        ) => None,
        Err(error) => Some(error.to_string()),
    }
}

/// Kueue's rules on what may change while the Job runs (is not suspended), and on the queue
/// name in a namespace with a `default` LocalQueue.
fn update_problems(key: &str, old: &Job, new: &Job, default_queue_exists: bool) -> Vec<String> {
    let mut problems = Vec::new();
    let running = !suspended(old) && !suspended(new);
    let old_labels = old.metadata.labels.clone().unwrap_or_default();
    let new_labels = new.metadata.labels.clone().unwrap_or_default();
    let changed = |labels: &BTreeMap<String, String>, key: &str| labels.get(key).cloned();
    if running
        && label(old, labels::QUEUE_NAME).is_some()
        && changed(&old_labels, labels::QUEUE_NAME) != changed(&new_labels, labels::QUEUE_NAME)
    {
        problems.push(format!(
            "Job {key}: label {}: field is immutable while the Job is not suspended",
            labels::QUEUE_NAME
        ));
    }
    if default_queue_exists
        && label(old, labels::QUEUE_NAME).is_some()
        && label(new, labels::QUEUE_NAME).is_none()
    {
        problems.push(format!(
            "Job {key}: label {}: queue-name must not be empty in namespace with default queue",
            labels::QUEUE_NAME
        ));
    }
    let old_class = label(old, labels::PRIORITY_CLASS);
    let new_class = label(new, labels::PRIORITY_CLASS);
    if old_class.is_some() && new_class.is_none() {
        problems.push(format!(
            "Job {key}: label {}: cannot be removed",
            labels::PRIORITY_CLASS
        ));
    }
    if running && old_class.is_none() && new_class.is_some() {
        problems.push(format!(
            "Job {key}: label {}: cannot be added to a Job that is not suspended",
            labels::PRIORITY_CLASS
        ));
    }
    let partial = annotation(new, annotations::JOB_MIN_PARALLELISM).is_some();
    let parallelism = |job: &Job| job.spec.as_ref().and_then(|s| s.parallelism);
    if running && partial && parallelism(old) != parallelism(new) {
        problems.push(format!(
            "Job {key}: spec.parallelism: field is immutable while a partially admitted Job is not \
             suspended"
        ));
    }
    problems
}

#[cfg(test)]
mod tests;
