//! Whether a job of any kind still matches its Workload: Kueue's `EquivalentToWorkload`, with
//! the comparison of pod sets the batch Job's uses (counts, partial-admission floor, init
//! containers, containers and tolerations of each pod set, in order).

use std::collections::BTreeMap;

use kube::api::DynamicObject;

use crate::api::HasConditions;
use crate::api::Workload;
use crate::api::keys::condition_types;
use crate::engine::features::{Feature, FeatureGates};

use super::super::job_sync::{controlled_by, running_pod_sets, same_pod_sets};
use super::super::pod_set_info::FlavorInfo;
use super::kind::JobKind;
use super::workload::{FrameworkError, pod_set_source, workload_pod_sets};

/// Whether `workload` describes `job`: the Workload's controller is the job (by name, and by
/// UID with `FinishOrphanedWorkloads`) and the pod sets agree. While the Workload holds quota
/// the job is compared with its pod sets as started (flavors merged, admitted counts), or,
/// while the job is suspended, with the spec. `referenced` is the object the job builds its pod
/// sets from, if its kind reads one and it exists.
pub fn in_step(
    kind: &dyn JobKind,
    job: &DynamicObject,
    referenced: Option<&DynamicObject>,
    workload: &Workload,
    flavors: &BTreeMap<String, FlavorInfo>,
    gates: &FeatureGates,
) -> Result<bool, FrameworkError> {
    if !controlled_by(workload, &job.metadata, kind.id().kind, gates) {
        return Ok(false);
    }
    let source = pod_set_source(kind, job, referenced)?;
    let mut job_pod_sets = workload_pod_sets(kind, &source)?;
    if !gates.enabled(Feature::PartialAdmission) {
        for pod_set in &mut job_pod_sets {
            pod_set.min_count = None;
        }
    }
    // Once admitted, the job's templates carry the flavors' tolerations; they are not compared.
    let ignore_tolerations = workload.condition_is_true(condition_types::ADMITTED);
    if let Some(running) = running_pod_sets(workload, flavors, gates) {
        return Ok(same_pod_sets(&job_pod_sets, &running, ignore_tolerations)
            || (kind.is_suspended(job)
                && same_pod_sets(&job_pod_sets, &workload.spec.pod_sets, ignore_tolerations)));
    }
    Ok(same_pod_sets(
        &job_pod_sets,
        &workload.spec.pod_sets,
        ignore_tolerations,
    ))
}

#[cfg(test)]
mod tests;
