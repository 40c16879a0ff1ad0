//! What an existing Workload of a pod or pod group follows from its pods, as Kueue's reconciler
//! does for every job after finding the matching Workload (`UpdateAdmissionGatedBy`, then
//! `UpdateWorkloadPriority`, both read from the pod being reconciled): the
//! `kueue.x-k8s.io/admission-gated-by` gates, and the WorkloadPriorityClass the
//! `kueue.x-k8s.io/priority-class` label names. A group's pods are read from its first one.

use k8s_openapi::api::core::v1::Pod;

use super::admission_gate::follow_gates;
use super::events::JobEvent;
use super::priority::{MissingClass, PriorityLookup, follow_priority_label};
use crate::api::Workload;
use crate::engine::features::{Feature, FeatureGates};

/// A write that makes the Workload follow its pods.
#[derive(Clone, Debug, PartialEq)]
pub enum FollowStep {
    /// Write the Workload with the pods' admission gates; `UpdatedWorkload` on the first pod.
    AdmissionGates {
        workload: Box<Workload>,
        event: JobEvent,
    },
    /// Write the Workload with the priority of the class the pods name; `UpdatedWorkload` on
    /// the first pod.
    Priority(Box<Workload>),
}

/// The write that makes `workload` follow `pod`, if it differs; `Err` is the warning to record
/// when the priority class the pod names does not exist.
pub fn follow_pod(
    pod: &Pod,
    workload: &Workload,
    gates: &FeatureGates,
    priorities: &PriorityLookup,
) -> Option<Result<FollowStep, JobEvent>> {
    if gates.enabled(Feature::AdmissionGatedBy)
        && let Some((followed, value)) = follow_gates(&pod.metadata, workload)
    {
        return Some(Ok(FollowStep::AdmissionGates {
            workload: Box::new(followed),
            event: JobEvent::updated_admission_gates(&value),
        }));
    }
    match follow_priority_label(&pod.metadata, workload, priorities) {
        Ok(None) => None,
        Ok(Some(changed)) => Some(Ok(FollowStep::Priority(Box::new(changed)))),
        Err(MissingClass::WorkloadPriorityClass(name)) => {
            Some(Err(JobEvent::workload_priority_class_not_found(&name)))
        }
        Err(MissingClass::PriorityClass(name)) => Some(Err(JobEvent::err_workload_compose(
            &format!("PriorityClass {name:?} does not exist"),
        ))),
    }
}

#[cfg(test)]
mod tests;
