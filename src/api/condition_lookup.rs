//! The one way to ask an object, Kueue's or Kubernetes' (Pod, Node, Job), for its condition of a
//! type and whether that holds: status `True`, as Kubernetes' `meta.IsStatusConditionTrue`.

use k8s_openapi::api::batch::v1::{Job, JobCondition};
use k8s_openapi::api::core::v1::{Node, NodeCondition, Pod, PodCondition};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionCondition,
};

use super::admission_check::{AdmissionCheck, AdmissionCheckStatus};
use super::cluster_queue::{ClusterQueue, ClusterQueueStatus};
use super::condition::Condition;
use super::local_queue::{LocalQueue, LocalQueueStatus};
use super::provisioning_request::ProvisioningRequest;
use super::workload::Workload;
use super::workload_status::WorkloadStatus;

/// The status of a condition that holds.
pub const CONDITION_TRUE: &str = "True";
/// The status of a condition known not to hold (neither is `Unknown`).
pub const CONDITION_FALSE: &str = "False";

/// A condition of any kind of object: its type and its status.
pub trait ConditionEntry {
    fn condition_type(&self) -> &str;
    fn condition_status(&self) -> &str;

    /// The condition holds: its status is `True`.
    fn is_true(&self) -> bool {
        self.condition_status() == CONDITION_TRUE
    }

    /// The condition is known not to hold: its status is `False` (not `Unknown`).
    fn is_false(&self) -> bool {
        self.condition_status() == CONDITION_FALSE
    }

    /// Its status is `True` when `status`, `False` when not; `Unknown` is neither.
    fn has_status(&self, status: bool) -> bool {
        if status {
            self.is_true()
        } else {
            self.is_false()
        }
    }

    /// Its type is `type_`.
    fn is_type(&self, type_: &str) -> bool {
        self.condition_type() == type_
    }
}

/// An object with conditions, asked for one of them by type.
pub trait HasConditions {
    type Entry: ConditionEntry;

    /// Its conditions, none when it has no status.
    fn conditions(&self) -> &[Self::Entry];

    /// Its condition of type `type_`, if it has one.
    fn condition(&self, type_: &str) -> Option<&Self::Entry> {
        self.conditions().iter().find(|c| c.is_type(type_))
    }

    /// Its condition of type `type_` if that holds.
    fn true_condition(&self, type_: &str) -> Option<&Self::Entry> {
        self.condition(type_).filter(|c| c.is_true())
    }

    /// It has a condition of type `type_` that holds.
    fn condition_is_true(&self, type_: &str) -> bool {
        self.true_condition(type_).is_some()
    }

    /// It has a condition of type `type_` known not to hold.
    fn condition_is_false(&self, type_: &str) -> bool {
        self.condition(type_).is_some_and(|c| c.is_false())
    }
}

/// A list of conditions, as a status holds it.
impl<E: ConditionEntry> HasConditions for [E] {
    type Entry = E;

    fn conditions(&self) -> &[E] {
        self
    }
}

impl<T: HasConditions> HasConditions for Option<&T> {
    type Entry = T::Entry;

    fn conditions(&self) -> &[Self::Entry] {
        self.map_or(&[], |object| object.conditions())
    }
}

impl ConditionEntry for Condition {
    fn condition_type(&self) -> &str {
        self.type_.as_str()
    }
    fn condition_status(&self) -> &str {
        self.status.as_str()
    }
}

/// The Kubernetes condition types (`PodCondition`, `NodeCondition`, `JobCondition`) share these
/// two fields.
macro_rules! core_condition_entry {
    ($($kind:ty),*) => {$(
        impl ConditionEntry for $kind {
            fn condition_type(&self) -> &str {
                &self.type_
            }
            fn condition_status(&self) -> &str {
                &self.status
            }
        }
    )*};
}
core_condition_entry!(
    PodCondition,
    NodeCondition,
    JobCondition,
    CustomResourceDefinitionCondition
);

/// Kueue's statuses hold their conditions as a list.
macro_rules! status_conditions {
    ($($status:ty),*) => {$(
        impl HasConditions for $status {
            type Entry = Condition;
            fn conditions(&self) -> &[Condition] {
                &self.conditions
            }
        }
    )*};
}
status_conditions!(
    WorkloadStatus,
    ClusterQueueStatus,
    LocalQueueStatus,
    AdmissionCheckStatus
);

/// Objects whose status, when there is one, holds their conditions.
macro_rules! object_conditions {
    ($($object:ty => $entry:ty),*) => {$(
        impl HasConditions for $object {
            type Entry = $entry;
            fn conditions(&self) -> &[$entry] {
                self.status
                    .as_ref()
                    .and_then(|status| status.conditions.as_deref())
                    .unwrap_or_default()
            }
        }
    )*};
}
object_conditions!(
    Pod => PodCondition,
    Node => NodeCondition,
    Job => JobCondition,
    CustomResourceDefinition => CustomResourceDefinitionCondition
);

/// Kueue's objects (and the autoscaler's ProvisioningRequest), whose status may be absent.
macro_rules! kueue_object_conditions {
    ($($object:ty),*) => {$(
        impl HasConditions for $object {
            type Entry = Condition;
            fn conditions(&self) -> &[Condition] {
                self.status.as_ref().map_or(&[], |status| &status.conditions)
            }
        }
    )*};
}
kueue_object_conditions!(
    Workload,
    ClusterQueue,
    LocalQueue,
    AdmissionCheck,
    ProvisioningRequest
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn workload_with(conditions: serde_json::Value) -> Workload {
        serde_json::from_value(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": "w", "namespace": "ns"},
            "spec": {"podSets": []},
            "status": {"conditions": conditions},
        }))
        .expect("a workload")
    }

    #[test]
    fn a_workload_condition_is_found_by_type_and_holds_only_when_true() {
        let t = "2026-11-27T18:38:57Z";
        let workload = workload_with(json!([
            {"type": "QuotaReserved", "status": "True", "reason": "R", "lastTransitionTime": t},
            {"type": "Admitted", "status": "False", "reason": "R", "lastTransitionTime": t},
            {"type": "Evicted", "status": "Unknown", "reason": "R", "lastTransitionTime": t},
        ]));
        assert!(workload.condition_is_true("QuotaReserved"));
        assert!(!workload.condition_is_true("Admitted"));
        assert!(!workload.condition_is_true("Evicted"));
        assert!(!workload.condition_is_true("Finished"));
        assert_eq!(
            workload.condition("Admitted").map(|c| c.status.as_str()),
            Some("False")
        );
        assert!(workload.true_condition("Admitted").is_none());
        assert_eq!(
            workload
                .status
                .as_ref()
                .condition("Evicted")
                .map(|c| c.reason.as_str()),
            Some("R")
        );
        let none: Option<&WorkloadStatus> = None;
        assert!(none.condition("QuotaReserved").is_none());
        let mut bare = workload.clone();
        bare.status = None;
        assert!(bare.conditions().is_empty());
    }

    #[test]
    fn core_objects_answer_for_their_conditions() {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p"},
            "status": {"conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "PodScheduled", "status": "False"},
            ]},
        }))
        .expect("a pod");
        assert!(pod.condition_is_true("Ready"));
        assert!(!pod.condition_is_true("PodScheduled"));
        let node: Node = serde_json::from_value(json!({
            "metadata": {"name": "n"},
            "status": {"conditions": [{"type": "Ready", "status": "Unknown"}]},
        }))
        .expect("a node");
        assert_eq!(
            node.condition("Ready").map(|c| c.status.as_str()),
            Some("Unknown")
        );
        assert!(!node.condition_is_true("Ready"));
        let job: Job = serde_json::from_value(json!({
            "metadata": {"name": "j"},
            "status": {"conditions": [{"type": "Complete", "status": "True"}]},
        }))
        .expect("a job");
        assert!(job.condition_is_true("Complete"));
        assert!(!job.condition_is_true("Failed"));
        assert!(Job::default().conditions().is_empty());
        assert!(Pod::default().condition("Ready").is_none());
    }

    #[test]
    fn false_and_unknown_are_told_apart_and_a_list_is_asked_like_an_object() {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p"},
            "status": {"conditions": [
                {"type": "Ready", "status": "False"},
                {"type": "PodScheduled", "status": "Unknown"},
                {"type": "Initialized", "status": "True"},
            ]},
        }))
        .expect("a pod");
        assert!(pod.condition_is_false("Ready"));
        assert!(!pod.condition_is_false("PodScheduled"));
        assert!(!pod.condition_is_false("Initialized"));
        assert!(!pod.condition_is_false("ContainersReady"));
        let conditions = pod.conditions();
        let ready = conditions.condition("Ready").expect("Ready");
        assert!(ready.has_status(false) && !ready.has_status(true));
        let scheduled = conditions.condition("PodScheduled").expect("PodScheduled");
        assert!(!scheduled.has_status(false) && !scheduled.has_status(true));
        assert!(conditions.condition_is_true("Initialized"));
        assert!(ready.is_type("Ready") && !ready.is_type("ready"));
    }
}
