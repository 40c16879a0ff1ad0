//! The Workload the batch/v1 Job integration creates for a Job.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::api::common::DEFAULT_POD_SET_NAME;
use crate::api::keys::{annotations, labels};
use crate::api::rare_list::RareList;
use crate::api::workload::PodSet;
use crate::api::{Workload, WorkloadSpec};

use super::distinct_env::distinct_env;
use super::names::{Owner, owned_workload_metadata, owner_workload_name};
use super::priority::{MissingClass, PriorityLookup};
use super::scope::queue_name;
use super::topology_request::{
    TopologyAnnotationError, ignored_level_annotations, topology_request,
};
use crate::api::name_syntax::check_dns1123_subdomain;

/// API group of batch/v1 Job.
const JOB_GROUP: &str = "batch";
/// apiVersion of batch/v1 Job.
pub(super) const JOB_API_VERSION: &str = "batch/v1";
/// Kind of batch/v1 Job.
pub(super) const JOB_KIND: &str = "Job";
/// Labels the batch Job controller writes on its pod templates. They identify one Job, not the
/// pods' shape, so the Workload's copy of the template leaves them out.
const BATCH_CONTROLLER_LABELS: [&str; 4] = [
    labels::BATCH_JOB_NAME,
    labels::BATCH_CONTROLLER_UID,
    labels::LEGACY_JOB_NAME,
    labels::LEGACY_CONTROLLER_UID,
];
/// Labels kuota writes on pod templates when it starts a Job. They describe an admission, not
/// the request, so the Workload's copy of the template leaves them out.
const ADMISSION_LABELS: [&str; 3] = [
    labels::POD_SET,
    labels::LOCAL_QUEUE_NAME,
    labels::CLUSTER_QUEUE_NAME,
];

/// Why a Job has no Workload.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    /// The Job has no name (only `generateName`): it has not been created yet.
    #[error(
        "Job with generateName {generate_name:?} in namespace {namespace:?}: metadata.name is empty; \
         the API server sets it when the Job is created"
    )]
    MissingName {
        namespace: String,
        generate_name: String,
    },
    /// The Job has no namespace.
    #[error("Job {name}: metadata.namespace is empty; a Job is namespaced")]
    MissingNamespace { name: String },
    /// The Job has no UID: it has not been created yet.
    #[error("Job {job}: metadata.uid is empty; the API server sets it when the Job is created")]
    MissingUid { job: String },
    /// A label kuota reads has a value it cannot use.
    #[error("Job {job}: label {key}={value:?}: {reason}")]
    InvalidLabel {
        job: String,
        key: &'static str,
        value: String,
        reason: String,
    },
    /// An annotation kuota reads has a value it cannot use.
    #[error("Job {job}: annotation {key}={value:?}: {reason}")]
    InvalidAnnotation {
        job: String,
        key: &'static str,
        value: String,
        reason: String,
    },
    /// A pod count below zero.
    #[error("Job {job}: {field} is {value}; it must not be negative")]
    NegativeCount {
        job: String,
        field: &'static str,
        value: i32,
    },
    /// The pod template's topology annotations do not form a valid request.
    #[error("Job {job}: pod template {problem}")]
    Topology {
        job: String,
        problem: TopologyAnnotationError,
    },
    /// The priority-class label names a WorkloadPriorityClass that does not exist.
    #[error(
        "Job {job}: label {}={name:?}: WorkloadPriorityClass {name:?} does not exist; \
         the Workload waits until it is created",
        labels::PRIORITY_CLASS
    )]
    WorkloadPriorityClassNotFound { job: String, name: String },
    /// The pod template names a PriorityClass that does not exist.
    #[error(
        "Job {job}: spec.template.spec.priorityClassName={name:?}: PriorityClass {name:?} does not exist"
    )]
    PriorityClassNotFound { job: String, name: String },
}

/// The Workload kuota's batch/v1 Job integration creates for `job`, before any admission.
///
/// The Job must be as stored by the API server (name, namespace and UID set). Priorities come
/// from `priorities`. Every rule the job webhook enforces on the labels and annotations read here
/// is checked, so a Job the webhook would refuse gets an error instead of a Workload.
pub fn workload_for_job(job: &Job, priorities: &PriorityLookup) -> Result<Workload, JobError> {
    let identity = JobIdentity::of(job)?;
    let key = identity.key();
    let job_labels = job.metadata.labels.as_ref();
    let label = |name: &'static str| job_labels.and_then(|all| all.get(name));

    // A Job naming no queue is managed only with `manageJobsWithoutQueueName` (the caller
    // decides, see `JobScope`); its Workload then names no LocalQueue, as in Kueue.
    let queue_name = queue_name(&job.metadata);
    if let Some(queue_name) = queue_name {
        check_dns1123_subdomain(queue_name).map_err(|reason| JobError::InvalidLabel {
            job: key.clone(),
            key: labels::QUEUE_NAME,
            value: queue_name.to_owned(),
            reason: format!("not a LocalQueue name: {reason}"),
        })?;
    }

    let maximum_execution_time_seconds = max_execution_time(job, &key)?;
    let pod_set = job_pod_set(job, &key)?;
    let template = &pod_set.template;

    let pod_priority_class = template
        .spec
        .as_ref()
        .and_then(|pod| pod.priority_class_name.as_deref())
        .filter(|name| !name.is_empty());
    let priority = priorities
        .resolve(
            label(labels::PRIORITY_CLASS).map(String::as_str),
            pod_priority_class,
        )
        .map_err(|missing| match missing {
            MissingClass::WorkloadPriorityClass(name) => JobError::WorkloadPriorityClassNotFound {
                job: key.clone(),
                name,
            },
            MissingClass::PriorityClass(name) => JobError::PriorityClassNotFound {
                job: key.clone(),
                name,
            },
        })?;

    let mut workload = Workload::new(
        &identity.workload_name(),
        WorkloadSpec {
            pod_sets: vec![pod_set],
            queue_name: queue_name.map(str::to_owned),
            priority_class_ref: priority.class.map(Box::new),
            priority: Some(priority.value),
            active: Some(true),
            maximum_execution_time_seconds,
            preemption_gates: RareList::new(),
        },
    );
    workload.metadata = identity.workload_metadata(workload.metadata);
    Ok(workload)
}

/// The maximum execution time the Job's label asks for.
pub(crate) fn max_execution_time(job: &Job, key: &str) -> Result<Option<i32>, JobError> {
    job.metadata
        .labels
        .as_ref()
        .and_then(|all| all.get(labels::MAX_EXEC_TIME_SECONDS))
        .map(|value| parse_max_exec_time(key, value))
        .transpose()
}

/// The one pod set of a Job's Workload: `main`, the Job's pod count, the partial-admission
/// floor, the template without the labels of one Job or one admission and with one environment
/// variable per name, and the topology request.
/// `key` names the Job in errors.
pub(crate) fn job_pod_set(job: &Job, key: &str) -> Result<PodSet, JobError> {
    let spec = job.spec.as_ref();
    let count = pod_count(
        key,
        spec.and_then(|s| s.parallelism),
        spec.and_then(|s| s.completions),
    )?;
    let min_count = job
        .metadata
        .annotations
        .as_ref()
        .and_then(|all| all.get(annotations::JOB_MIN_PARALLELISM))
        .map(|value| parse_min_parallelism(key, value, count))
        .transpose()?;

    let mut template = spec.map(|s| s.template.clone()).unwrap_or_default();
    if let Some(pod_spec) = template.spec.as_mut() {
        distinct_env(pod_spec);
    }
    let no_annotations = BTreeMap::new();
    let template_annotations = template
        .metadata
        .as_ref()
        .and_then(|meta| meta.annotations.as_ref())
        .unwrap_or(&no_annotations);
    let topology = topology_request(template_annotations, count, labels::JOB_COMPLETION_INDEX)
        .map_err(|problem| JobError::Topology {
            job: key.to_owned(),
            problem,
        })?;
    let ignored = ignored_level_annotations(template_annotations);
    if !ignored.is_empty() {
        tracing::warn!(job = %key, ?ignored, "pod template has several topology level annotations; only the first of required, preferred, unconstrained counts");
    }
    Ok(PodSet {
        name: DEFAULT_POD_SET_NAME.to_owned(),
        template: std::sync::Arc::new(without_controller_labels(template)),
        count,
        min_count,
        topology_request: Some(Box::new(topology)),
    })
}

/// Name, namespace and UID of a Job, all present.
struct JobIdentity<'a> {
    name: &'a str,
    namespace: &'a str,
    uid: &'a str,
}

impl<'a> JobIdentity<'a> {
    fn of(job: &'a Job) -> Result<Self, JobError> {
        let meta = &job.metadata;
        let present = |field: &'a Option<String>| field.as_deref().filter(|s| !s.is_empty());
        let namespace = present(&meta.namespace);
        let Some(name) = present(&meta.name) else {
            return Err(JobError::MissingName {
                namespace: namespace.unwrap_or_default().to_owned(),
                generate_name: meta.generate_name.clone().unwrap_or_default(),
            });
        };
        let namespace = namespace.ok_or_else(|| JobError::MissingNamespace {
            name: name.to_owned(),
        })?;
        let uid = present(&meta.uid).ok_or_else(|| JobError::MissingUid {
            job: format!("{namespace}/{name}"),
        })?;
        Ok(Self {
            name,
            namespace,
            uid,
        })
    }

    /// `namespace/name`, how errors and logs name the Job.
    fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// `job-<name>`, cut to fit, then `-` and 5 hex characters of a SHA-1 over kind, group, name
    /// and UID, so that a re-created Job of the same name gets a new Workload. The digest input
    /// and layout match Kueue's, so both name the Workload of a Job alike.
    fn workload_name(&self) -> String {
        owner_workload_name(JOB_KIND, JOB_GROUP, self.name, self.uid)
    }

    /// The Workload's metadata, the Job its controller.
    fn workload_metadata(&self, base: ObjectMeta) -> ObjectMeta {
        let owner = Owner {
            namespace: self.namespace,
            api_version: JOB_API_VERSION,
            kind: JOB_KIND,
            name: self.name,
            uid: self.uid,
        };
        owned_workload_metadata(owner, base)
    }
}

/// Pods the Job runs at once: `parallelism` (1 when unset), capped by `completions` when set.
fn pod_count(
    key: &str,
    parallelism: Option<i32>,
    completions: Option<i32>,
) -> Result<i32, JobError> {
    let parallelism = parallelism.unwrap_or(1);
    for (field, value) in [
        ("spec.parallelism", Some(parallelism)),
        ("spec.completions", completions),
    ] {
        if let Some(value) = value.filter(|v| *v < 0) {
            return Err(JobError::NegativeCount {
                job: key.to_owned(),
                field,
                value,
            });
        }
    }
    Ok(completions.map_or(parallelism, |completions| parallelism.min(completions)))
}

/// The partial-admission floor: an integer at least 1 and below the pod count.
fn parse_min_parallelism(key: &str, value: &str, count: i32) -> Result<i32, JobError> {
    let invalid = |reason: String| JobError::InvalidAnnotation {
        job: key.to_owned(),
        key: annotations::JOB_MIN_PARALLELISM,
        value: value.to_owned(),
        reason,
    };
    let min: i64 = value
        .parse()
        .map_err(|_| invalid("not an integer".to_owned()))?;
    if min < 1 || min >= i64::from(count) {
        return Err(invalid(format!(
            "must be at least 1 and less than the Job's pod count {count}"
        )));
    }
    i32::try_from(min).map_err(|_| invalid("out of range".to_owned()))
}

/// The maximum execution time: a positive 32-bit integer of seconds.
fn parse_max_exec_time(key: &str, value: &str) -> Result<i32, JobError> {
    match value.parse::<i32>() {
        Ok(seconds) if seconds > 0 => Ok(seconds),
        _ => Err(JobError::InvalidLabel {
            job: key.to_owned(),
            key: labels::MAX_EXEC_TIME_SECONDS,
            value: value.to_owned(),
            reason: "must be a positive 32-bit integer of seconds".to_owned(),
        }),
    }
}

/// The pod template without the labels that belong to one Job or one admission.
fn without_controller_labels(mut template: PodTemplateSpec) -> PodTemplateSpec {
    if let Some(template_labels) = template.metadata.as_mut().and_then(|m| m.labels.as_mut()) {
        for label in BATCH_CONTROLLER_LABELS.iter().chain(&ADMISSION_LABELS) {
            template_labels.remove(*label);
        }
    }
    template
}

#[cfg(test)]
mod tests;
