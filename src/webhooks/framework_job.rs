//! Kueue's webhooks for the kinds read through the job framework (`jobframework`'s base
//! webhook): defaulting sends a job naming no queue to its namespace's `default` LocalQueue,
//! labels it with the `default` WorkloadPriorityClass, and suspends a job kuota manages, so no
//! pod starts before its Workload is admitted; validation refuses what the kind's Workload
//! could not be built from (`jobs::framework::workload_for`), the kind's own rules
//! (`JobKind::validate`) and the changes Kueue forbids while the job runs. One function pair
//! serves every kind, told which by its [`JobKind`].

use kube::api::DynamicObject;

use super::job_rules::{self, JobView, job_key, with_identity};
use super::patch;
use super::review::{AdmissionRequest, Operation, Verdict};
use super::settings::Webhooks;
use crate::api::keys::labels;
use crate::jobs::framework::{FrameworkError, JobKind, WorkloadContext, workload_for};
use crate::jobs::{DEFAULT_LOCAL_QUEUE, PriorityLookup};

fn enabled(kind: &dyn JobKind, webhooks: &Webhooks) -> bool {
    webhooks.frameworks.contains(kind.id().framework)
}

/// Kueue's defaulting on creation: the `default` LocalQueue for a job naming none (in a
/// selected namespace that has it), the `default` WorkloadPriorityClass, then suspension of a
/// job kuota manages.
pub fn default(kind: &dyn JobKind, webhooks: &Webhooks, request: &AdmissionRequest) -> Verdict {
    if request.operation != Operation::Create || !enabled(kind, webhooks) {
        return Verdict::Allow;
    }
    let job: DynamicObject = match request.decode(kind.id().kind, false) {
        Ok(job) => job,
        Err(invalid) => return invalid,
    };
    let settings = &webhooks.pods;
    let namespace = request.namespace_of(&job.metadata);
    let namespace_labels = settings.namespaces.labels(namespace);
    let mut defaulted = job.clone();
    if settings.scope.takes_default_queue(
        &job.metadata,
        &namespace_labels,
        settings.namespaces.has_default_local_queue(namespace),
    ) {
        defaulted.metadata.labels.get_or_insert_default().insert(
            labels::QUEUE_NAME.to_owned(),
            DEFAULT_LOCAL_QUEUE.to_owned(),
        );
    }
    webhooks.default_priority_class(&mut defaulted.metadata);
    if settings
        .scope
        .manages(&defaulted.metadata, &namespace_labels)
        && !kind.is_suspended(&defaulted)
        && let Err(error) = kind.set_suspended(&mut defaulted, true)
    {
        return Verdict::Deny(error.to_string());
    }
    if defaulted == job {
        return Verdict::Allow;
    }
    match (serde_json::to_value(&job), serde_json::to_value(&defaulted)) {
        (Ok(old), Ok(new)) => Verdict::Patch(patch::diff(&old, &new)),
        (Err(error), _) | (_, Err(error)) => Verdict::Invalid(format!(
            "the {} cannot be written back as JSON: {error}",
            kind.id().kind
        )),
    }
}

/// Kueue's validation on create and update.
pub fn validate(kind: &dyn JobKind, webhooks: &Webhooks, request: &AdmissionRequest) -> Verdict {
    if !enabled(kind, webhooks) {
        return Verdict::Allow;
    }
    let (job, old) = match request.written::<DynamicObject>(kind.id().kind) {
        Some(Ok(objects)) => objects,
        Some(Err(invalid)) => return invalid,
        None => return Verdict::Allow,
    };
    let key = job_key(&job.metadata, request.namespace.as_deref());
    let settings = &webhooks.pods;
    let namespace = request.namespace_of(&job.metadata);
    let mut problems = Vec::new();
    if settings
        .scope
        .manages(&job.metadata, &settings.namespaces.labels(namespace))
    {
        problems.extend(integration_problem(kind, &job, request));
        problems.extend(
            kind.validate(&job, old.as_ref())
                .into_iter()
                .map(|e| e.to_string()),
        );
    }
    if let Some(old) = &old {
        problems.extend(job_rules::update_problems(
            kind.id().kind,
            &key,
            view(kind, old),
            view(kind, &job),
            settings.namespaces.has_default_local_queue(namespace),
        ));
    }
    if problems.is_empty() {
        Verdict::Allow
    } else {
        Verdict::Deny(problems.join("; "))
    }
}

fn view<'a>(kind: &dyn JobKind, job: &'a DynamicObject) -> JobView<'a> {
    JobView {
        meta: &job.metadata,
        suspended: kind.is_suspended(job),
    }
}

/// What the framework would refuse when building the job's Workload. Priority classes that do
/// not exist yet are not the webhook's business (the Workload waits for them).
fn integration_problem(
    kind: &dyn JobKind,
    job: &DynamicObject,
    request: &AdmissionRequest,
) -> Option<String> {
    let mut job = job.clone();
    job.metadata = with_identity(&job.metadata, request.namespace.as_deref());
    let context = WorkloadContext {
        priorities: &PriorityLookup::new(),
        label_keys_to_copy: &[],
    };
    match workload_for(kind, &job, context) {
        Ok(_) => None,
        Err(
            FrameworkError::WorkloadPriorityClassNotFound { .. }
            | FrameworkError::PriorityClassNotFound { .. },
        ) => None,
        Err(error) => Some(error.to_string()),
    }
}

#[cfg(test)]
mod tests;
