//! Kueue's generic job webhooks (`jobframework`'s base webhook and `validation.go`) for every kind
//! read through [`JobKind`]: one defaulting and one validation, whatever the kind.
//!
//! Defaulting, on creation: the namespace's `default` LocalQueue for a job naming none, the
//! `default` WorkloadPriorityClass, and suspension of a job kuota manages, so no pod starts before
//! its Workload is admitted. Validation, on creation and update: the labels and annotations Kueue
//! checks on any job, the kind's own checks (some only of a job naming a queue or under
//! `manageJobsWithoutQueueName`, as Kueue's Ray webhooks), what would keep the job from ever
//! getting a Workload (`workload_for`, unless the kind skips the job), and what may not change
//! while the job runs.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::findings::Findings;
use super::metadata;
use super::review::{AdmissionRequest, Operation, Verdict};
use super::settings::Webhooks;
use crate::api::json_patch as patch;
use crate::api::keys::{annotations, labels};
use crate::api::name_syntax::check_dns1123_subdomain;
use crate::engine::features::Feature;
use crate::jobs::framework::{
    DynamicObject, FrameworkError, JobKind, KindId, WorkloadContext, workload_for,
};
use crate::jobs::{PriorityLookup, queue_name};

/// Kueue's `supportedPrebuiltWlJobGVKs`: the frameworks whose jobs may run under a prebuilt
/// Workload.
const PREBUILT_WORKLOAD_FRAMEWORKS: [&str; 13] = [
    "batch/job",
    "jobset.x-k8s.io/jobset",
    "kubeflow.org/tfjob",
    "kubeflow.org/paddlejob",
    "kubeflow.org/pytorchjob",
    "kubeflow.org/xgboostjob",
    "trainer.kubeflow.org/trainjob",
    "kubeflow.org/mpijob",
    "ray.io/rayjob",
    "pod",
    "ray.io/raycluster",
    "ray.io/rayservice",
    "workload.codeflare.dev/appwrapper",
];

/// Kueue's `supportedElasticJobGVKs`: the frameworks whose jobs may be elastic.
const ELASTIC_FRAMEWORKS: [&str; 4] = [
    "batch/job",
    "ray.io/raycluster",
    "ray.io/rayjob",
    "ray.io/rayservice",
];

fn enabled(kind: &dyn JobKind, webhooks: &Webhooks) -> bool {
    webhooks.frameworks.contains(kind.id().framework)
}

/// Kueue's defaulting of a job of `kind` on creation.
pub fn default(kind: &dyn JobKind, webhooks: &Webhooks, request: &AdmissionRequest) -> Verdict {
    if request.operation != Operation::Create || !enabled(kind, webhooks) {
        return Verdict::Allow;
    }
    let job: DynamicObject = match request.decode(kind.id().kind, false) {
        Ok(job) => job,
        Err(invalid) => return invalid,
    };
    let mut defaulted = job.clone();
    if webhooks.default_job_metadata(request, &mut defaulted.metadata)
        && !kind.is_suspended(&defaulted)
        && let Err(error) = kind.set_suspended(&mut defaulted, true)
    {
        return Verdict::Deny(format!("the job cannot be suspended: {error}"));
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

/// Kueue's validation of a job of `kind` on creation and update; every broken rule in one denial.
pub fn validate(kind: &dyn JobKind, webhooks: &Webhooks, request: &AdmissionRequest) -> Verdict {
    if !enabled(kind, webhooks) {
        return Verdict::Allow;
    }
    let (mut job, old) = match request.written::<DynamicObject>(kind.id().kind) {
        Some(Ok(objects)) => objects,
        Some(Err(invalid)) => return invalid,
        None => return Verdict::Allow,
    };
    let key = job_key(&job, request);
    request.fill_identity(&mut job.metadata);
    let id = kind.id();
    let mut findings = Findings::new(id.kind, key);
    created_rules(&mut findings, webhooks, id, &job.metadata);
    if let Some(old) = &old {
        let default_queue_exists = webhooks
            .pods
            .namespaces
            .has_default_local_queue(request.namespace_of(&job.metadata));
        let facts = UpdateFacts {
            old: &old.metadata,
            new: &job.metadata,
            new_suspended: kind.is_suspended(&job),
            old_suspended: kind.is_suspended(old),
            default_queue_exists,
        };
        updated_rules(&mut findings, webhooks, facts);
    }
    let mut errors: Vec<String> = findings
        .into_errors()
        .iter()
        .map(ToString::to_string)
        .collect();
    errors.extend(
        kind.validate(&job, old.as_ref())
            .iter()
            .map(ToString::to_string),
    );
    let scope = &webhooks.pods.scope;
    if scope.manage_without_queue_name || queue_name(&job.metadata).is_some() {
        errors.extend(kind.validate_managed(&job).iter().map(ToString::to_string));
    }
    let namespace_labels = webhooks
        .pods
        .namespaces
        .labels(request.namespace_of(&job.metadata));
    if scope.manages(&job.metadata, &namespace_labels)
        && !kind.skip(&job)
        && let Some(problem) = workload_problem(kind, &job)
    {
        errors.push(problem);
    }
    Verdict::from_field_errors(errors)
}

/// `namespace/name` as the request names the job; a name still to be generated by its prefix.
fn job_key(job: &DynamicObject, request: &AdmissionRequest) -> String {
    let name = job
        .metadata
        .name
        .as_deref()
        .filter(|n| !n.is_empty())
        .or(job.metadata.generate_name.as_deref())
        .unwrap_or_default();
    format!("{}/{name}", request.namespace_of(&job.metadata))
}

/// Why the job could never get a Workload. The queue-name label is reported by the label rules,
/// and priority classes or referenced objects (a TrainJob's runtime) that do not exist yet are
/// not the webhook's business (the Workload waits for them); the webhook reads no referenced
/// object, so a kind with one has its pod sets checked when its Workload is built.
fn workload_problem(kind: &dyn JobKind, job: &DynamicObject) -> Option<String> {
    let ctx = WorkloadContext {
        priorities: &PriorityLookup::new(),
        label_keys_to_copy: &[],
        referenced: None,
    };
    match workload_for(kind, job, ctx) {
        Ok(_)
        | Err(
            FrameworkError::WorkloadPriorityClassNotFound { .. }
            | FrameworkError::PriorityClassNotFound { .. }
            | FrameworkError::ReferenceMissing { .. },
        ) => None,
        Err(FrameworkError::InvalidLabel { key, .. }) if key == labels::QUEUE_NAME => None,
        Err(error) => Some(error.to_string()),
    }
}

fn label<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    meta.labels
        .as_ref()
        .and_then(|l| l.get(key))
        .map(String::as_str)
}

fn annotation<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map(String::as_str)
}

fn label_field(key: &str) -> String {
    format!("metadata.labels[{key}]")
}

fn annotation_field(key: &str) -> String {
    format!("metadata.annotations[{key}]")
}

/// Kueue's group, version and kind as `gvk.String()` spells it in its messages.
fn gvk(id: &KindId) -> String {
    format!("{}/{}, Kind={}", id.group, id.version, id.kind)
}

/// Whether the job asks to be elastic (gate `ElasticJobsViaWorkloadSlices`).
fn elastic(webhooks: &Webhooks, meta: &ObjectMeta) -> bool {
    webhooks
        .gates
        .enabled(Feature::ElasticJobsViaWorkloadSlices)
        && annotation(meta, annotations::ELASTIC_JOB) == Some("true")
}

/// Kueue's `ValidateJobOnCreate`, also applied to the new object of an update.
fn created_rules(findings: &mut Findings, webhooks: &Webhooks, id: &KindId, meta: &ObjectMeta) {
    if let Some(queue) = label(meta, labels::QUEUE_NAME)
        && let Err(reason) = check_dns1123_subdomain(queue)
    {
        findings.add(label_field(labels::QUEUE_NAME), reason);
    }
    prebuilt_workload(findings, id, meta);
    if let Some(value) = label(meta, labels::MAX_EXEC_TIME_SECONDS) {
        match value.parse::<i64>() {
            Err(error) => findings.add(
                label_field(labels::MAX_EXEC_TIME_SECONDS),
                format!("{value:?}: {error}"),
            ),
            Ok(seconds) if seconds <= 0 => findings.add(
                label_field(labels::MAX_EXEC_TIME_SECONDS),
                format!("{seconds}: should be greater than 0"),
            ),
            Ok(_) => {}
        }
    }
    if elastic(webhooks, meta) && !ELASTIC_FRAMEWORKS.contains(&id.framework) {
        findings.add(
            annotation_field(annotations::ELASTIC_JOB),
            format!("elastic job is not supported for {:?}", gvk(id)),
        );
    }
    if webhooks.gates.enabled(Feature::AdmissionGatedBy) {
        let gated_by = annotation(meta, annotations::ADMISSION_GATED_BY).unwrap_or_default();
        metadata::gated_by_format(
            findings,
            &annotation_field(annotations::ADMISSION_GATED_BY),
            gated_by,
        );
    }
}

/// The prebuilt Workload a job names must be a valid Workload name, of a kind that supports it.
fn prebuilt_workload(findings: &mut Findings, id: &KindId, meta: &ObjectMeta) {
    let Some(name) = label(meta, labels::PREBUILT_WORKLOAD_NAME) else {
        return;
    };
    let field = label_field(labels::PREBUILT_WORKLOAD_NAME);
    if let Err(reason) = check_dns1123_subdomain(name) {
        findings.add(&field, reason);
    }
    if !name.is_empty() && !PREBUILT_WORKLOAD_FRAMEWORKS.contains(&id.framework) {
        findings.add(&field, format!("Is not supported for {:?}", gvk(id)));
    }
}

/// What an update compares.
struct UpdateFacts<'a> {
    old: &'a ObjectMeta,
    new: &'a ObjectMeta,
    old_suspended: bool,
    new_suspended: bool,
    /// The namespace holds a LocalQueue named `default`.
    default_queue_exists: bool,
}

const IMMUTABLE: &str = "field is immutable";

/// Kueue's `ValidateJobOnUpdate`.
fn updated_rules(findings: &mut Findings, webhooks: &Webhooks, facts: UpdateFacts) {
    let UpdateFacts { old, new, .. } = facts;
    let queue_field = label_field(labels::QUEUE_NAME);
    if !facts.new_suspended && queue_name(new) != queue_name(old) {
        findings.add(&queue_field, IMMUTABLE);
    }
    if queue_name(new).is_none() && queue_name(old).is_some() && facts.default_queue_exists {
        findings.add(
            &queue_field,
            "queue-name must not be empty in namespace with default queue",
        );
    }
    if !facts.new_suspended
        && !elastic(webhooks, old)
        && label(new, labels::PREBUILT_WORKLOAD_NAME) != label(old, labels::PREBUILT_WORKLOAD_NAME)
    {
        findings.add(label_field(labels::PREBUILT_WORKLOAD_NAME), IMMUTABLE);
    }
    if (!facts.new_suspended || !facts.old_suspended)
        && label(new, labels::MAX_EXEC_TIME_SECONDS) != label(old, labels::MAX_EXEC_TIME_SECONDS)
    {
        findings.add(label_field(labels::MAX_EXEC_TIME_SECONDS), IMMUTABLE);
    }
    let class = |meta| label(meta, labels::PRIORITY_CLASS).filter(|c| !c.is_empty());
    let class_field = label_field(labels::PRIORITY_CLASS);
    if !facts.new_suspended && class(old).is_none() && class(new).is_some() {
        findings.add(
            &class_field,
            "WorkloadPriorityClass cannot be added to a non-suspended workload",
        );
    }
    if class(old).is_some() && class(new).is_none() {
        findings.add(
            &class_field,
            "WorkloadPriorityClass cannot be removed from a workload",
        );
    }
    if elastic(webhooks, old) != elastic(webhooks, new) {
        findings.add(annotation_field(annotations::ELASTIC_JOB), IMMUTABLE);
    }
    if webhooks.gates.enabled(Feature::AdmissionGatedBy) {
        metadata::gated_by_update(
            findings,
            &annotation_field(annotations::ADMISSION_GATED_BY),
            annotation(old, annotations::ADMISSION_GATED_BY).unwrap_or_default(),
            annotation(new, annotations::ADMISSION_GATED_BY).unwrap_or_default(),
        );
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod ray_tests;
