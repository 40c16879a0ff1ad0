//! Kueue's webhooks for batch/v1 Jobs. Defaulting suspends a Job that names a queue, so no pod
//! starts before its Workload is admitted; validation refuses the labels and annotations the Job
//! integration could not turn into a Workload, with the integration's own checks
//! (`jobs::workload_for_job`), and the changes Kueue forbids while the Job runs.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::Job;
use serde_json::json;

use super::review::{AdmissionRequest, Operation, PatchOp, Verdict};
use super::settings::Webhooks;
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

/// A Job whose parent Kueue manages is suspended through that parent, not here.
fn has_controller_owner(job: &Job) -> bool {
    job.metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.controller == Some(true))
}

/// Kueue suspends, on creation, a Job that names a queue and has no controlling parent.
pub fn default(webhooks: &Webhooks, request: &AdmissionRequest) -> Verdict {
    if request.operation != Operation::Create || !enabled(webhooks) {
        return Verdict::Allow;
    }
    let job: Job = match request.decode("Job", false) {
        Ok(job) => job,
        Err(invalid) => return invalid,
    };
    if label(&job, labels::QUEUE_NAME).is_none() || has_controller_owner(&job) || suspended(&job) {
        return Verdict::Allow;
    }
    let op = if job.spec.is_some() {
        PatchOp::add("/spec/suspend", json!(true))
    } else {
        PatchOp::add("/spec", json!({"suspend": true}))
    };
    Verdict::Patch(vec![op])
}

pub fn validate(webhooks: &Webhooks, request: &AdmissionRequest) -> Verdict {
    let update = match request.operation {
        Operation::Create => false,
        Operation::Update => true,
        Operation::Delete | Operation::Connect => return Verdict::Allow,
    };
    if !enabled(webhooks) {
        return Verdict::Allow;
    }
    let job: Job = match request.decode("Job", false) {
        Ok(job) => job,
        Err(invalid) => return invalid,
    };
    let key = job_key(&job, request);
    let mut problems = Vec::new();
    if let Some(problem) = integration_problem(&job, request) {
        problems.push(problem);
    }
    if update {
        match request.decode::<Job>("Job", true) {
            Ok(old) => problems.extend(update_problems(&key, &old, &job)),
            Err(invalid) => return invalid,
        }
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
    let meta = &mut job.metadata;
    if meta.name.as_deref().is_none_or(str::is_empty) {
        meta.name = Some(format!(
            "{}webhook",
            meta.generate_name.clone().unwrap_or_default()
        ));
    }
    if meta.namespace.as_deref().is_none_or(str::is_empty) {
        meta.namespace = Some(
            request
                .namespace
                .clone()
                .unwrap_or_else(|| "default".into()),
        );
    }
    if meta.uid.as_deref().is_none_or(str::is_empty) {
        meta.uid = Some("not-yet-created".into());
    }
    match workload_for_job(&job, &PriorityLookup::new()) {
        Ok(_) => None,
        Err(
            JobError::NotManaged { .. }
            | JobError::WorkloadPriorityClassNotFound { .. }
            | JobError::PriorityClassNotFound { .. },
        ) => None,
        Err(error) => Some(error.to_string()),
    }
}

/// Kueue's rules on what may change while the Job runs (is not suspended).
fn update_problems(key: &str, old: &Job, new: &Job) -> Vec<String> {
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
