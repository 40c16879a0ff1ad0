//! Whether a batch/v1 Job still matches its Workload, and what to do when it does not: Kueue's
//! equivalence check. Only what decides admission is compared: the pod counts (and
//! partial-admission floor), init containers, containers and tolerations of each pod set.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::PodSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::api::HasConditions;
use crate::api::Workload;
use crate::api::keys::condition_types;
use crate::api::workload::PodSet;
use crate::engine::features::{Feature, FeatureGates};

use super::batch_job::{JobError, job_pod_set, max_execution_time};
use super::job_lifecycle::is_suspended;
use super::pod_set_info::{FlavorInfo, pod_set_infos};

/// What the Job reconciler does with an existing Workload of the Job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkloadSync {
    /// The Workload describes the Job.
    InSync,
    /// The Job changed while suspended and the Workload holds no quota: write the spec built
    /// from the Job into this Workload (keeping `spec.active`); Kueue's `UpdatedWorkload` event.
    Update,
    /// The Workload cannot follow the Job: stop the Job if it runs (restoring its template from
    /// this Workload), delete the Workload (`DeletedWorkload`), and create a new one once the
    /// Job has no active pods.
    Replace,
}

/// How `workload` relates to `job`. The flavors are needed to compare a running Job with what
/// its admission made of the template.
pub fn workload_sync(
    job: &Job,
    workload: &Workload,
    flavors: &BTreeMap<String, FlavorInfo>,
    gates: &FeatureGates,
) -> Result<WorkloadSync, JobError> {
    if job_matches_workload(job, workload, flavors, gates)? {
        Ok(WorkloadSync::InSync)
    } else if is_suspended(job) && !workload.condition_is_true(condition_types::QUOTA_RESERVED) {
        Ok(WorkloadSync::Update)
    } else {
        Ok(WorkloadSync::Replace)
    }
}

/// Whether `workload`'s controller is the owner `meta` describes, of kind `kind`: same name, and
/// with `FinishOrphanedWorkloads` the same UID, so a re-created owner of the same name does not
/// take over its predecessor's Workload.
pub(super) fn controlled_by(
    workload: &Workload,
    meta: &ObjectMeta,
    kind: &str,
    gates: &FeatureGates,
) -> bool {
    workload
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
        .is_some_and(|owner| {
            Some(owner.name.as_str()) == meta.name.as_deref()
                && owner.kind == kind
                && (!gates.enabled(Feature::FinishOrphanedWorkloads)
                    || Some(owner.uid.as_str()) == meta.uid.as_deref())
        })
}

/// Kueue's equivalence of a Job and a Workload: the Workload's controller is this Job (name, and
/// UID with `FinishOrphanedWorkloads`), the maximum execution time agrees, and the pod sets
/// agree. While the Workload holds quota the Job is compared with the pod sets as started
/// (flavors merged, admitted counts), or, while the Job is suspended, with the spec.
pub fn job_matches_workload(
    job: &Job,
    workload: &Workload,
    flavors: &BTreeMap<String, FlavorInfo>,
    gates: &FeatureGates,
) -> Result<bool, JobError> {
    if !controlled_by(workload, &job.metadata, super::batch_job::JOB_KIND, gates) {
        return Ok(false);
    }
    let key = format!(
        "{}/{}",
        job.metadata.namespace.as_deref().unwrap_or_default(),
        job.metadata.name.as_deref().unwrap_or_default()
    );
    if max_execution_time(job, &key)? != workload.spec.maximum_execution_time_seconds {
        return Ok(false);
    }
    let mut pod_set = job_pod_set(job, &key)?;
    if !gates.enabled(Feature::PartialAdmission) {
        pod_set.min_count = None;
    }
    let job_pod_sets = [pod_set];
    // Once admitted, the Job's template carries the flavors' tolerations; they are not compared.
    let ignore_tolerations = workload.condition_is_true(condition_types::ADMITTED);
    if let Some(running) = running_pod_sets(workload, flavors, gates) {
        if same_pod_sets(&job_pod_sets, &running, ignore_tolerations) {
            return Ok(true);
        }
        return Ok(is_suspended(job)
            && same_pod_sets(&job_pod_sets, &workload.spec.pod_sets, ignore_tolerations));
    }
    Ok(same_pod_sets(
        &job_pod_sets,
        &workload.spec.pod_sets,
        ignore_tolerations,
    ))
}

/// The pod sets as the Job runs them while the Workload holds quota: each template with its
/// pod set info merged in, partially admitted counts lowered. `None` without a reservation or
/// when the infos cannot be built or merged.
pub(super) fn running_pod_sets(
    workload: &Workload,
    flavors: &BTreeMap<String, FlavorInfo>,
    gates: &FeatureGates,
) -> Option<Vec<PodSet>> {
    if !workload.condition_is_true(condition_types::QUOTA_RESERVED) {
        return None;
    }
    let infos = pod_set_infos(workload, flavors, gates).ok()?;
    let partial = gates.enabled(Feature::PartialAdmission)
        && workload
            .spec
            .pod_sets
            .iter()
            .any(|ps| ps.min_count.is_some());
    let mut running = workload.spec.pod_sets.clone();
    for pod_set in &mut running {
        let info = infos.iter().find(|i| i.name == pod_set.name)?;
        let template = std::sync::Arc::make_mut(&mut pod_set.template);
        let meta = template.metadata.get_or_insert_default();
        let spec = template.spec.get_or_insert_default();
        info.merge_into(meta, spec).ok()?;
        if partial && pod_set.min_count.is_some() {
            pod_set.count = info.count;
        }
    }
    Some(running)
}

pub(super) fn same_pod_sets(a: &[PodSet], b: &[PodSet], ignore_tolerations: bool) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(a, b)| {
            a.count == b.count
                && a.min_count == b.min_count
                && same_pod_spec(
                    a.template.spec.as_ref(),
                    b.template.spec.as_ref(),
                    ignore_tolerations,
                )
        })
}

fn same_pod_spec(a: Option<&PodSpec>, b: Option<&PodSpec>, ignore_tolerations: bool) -> bool {
    let empty = PodSpec::default();
    let (a, b) = (a.unwrap_or(&empty), b.unwrap_or(&empty));
    (ignore_tolerations || list(&a.tolerations) == list(&b.tolerations))
        && list(&a.init_containers) == list(&b.init_containers)
        && a.containers == b.containers
}

/// An absent list and an empty one are the same.
fn list<T>(items: &Option<Vec<T>>) -> &[T] {
    items.as_deref().unwrap_or(&[])
}

#[cfg(test)]
mod tests;
