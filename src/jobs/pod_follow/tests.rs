//! A pod's Workload follows the pod's admission gates and priority class, through the pod
//! reconciler's steps.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use super::*;
use crate::api::keys::{annotations, finalizers, job_event_reasons, labels, scheduling_gates};
use crate::jobs::fixtures::pod;
use crate::jobs::{PodContext, PodStep, next_pod_step};

/// A single managed pod, still at the admission gate, with `metadata` merged in.
fn managed(metadata: Value) -> Pod {
    let mut patch = json!({
        "metadata": {
            "labels": {(labels::MANAGED): "true"},
            "finalizers": [finalizers::MANAGED],
            "creationTimestamp": "2026-01-01T00:00:00Z",
        },
        "spec": {"schedulingGates": [{"name": scheduling_gates::ADMISSION}]},
    });
    crate::jobs::fixtures::merge(&mut patch, json!({ "metadata": metadata }));
    pod("p", patch)
}

fn priorities() -> PriorityLookup {
    let mut lookup = PriorityLookup::new();
    lookup.add_workload_priority_class("low", 10);
    lookup.add_workload_priority_class("high", 1000);
    lookup
}

fn step(pod: &Pod, workload: Option<&Workload>) -> PodStep {
    let (flavors, priorities, gates) = (BTreeMap::new(), priorities(), FeatureGates::default());
    next_pod_step(
        std::slice::from_ref(pod),
        workload,
        PodContext {
            flavors: &flavors,
            priorities: &priorities,
            gates: &gates,
            wait_for_pods_ready: false,
            label_keys_to_copy: &[],
        },
    )
}

fn created(pod: &Pod) -> Workload {
    match step(pod, None) {
        PodStep::CreateWorkload(workload) => *workload,
        other => panic!("expected a new Workload, got {other:?}"),
    }
}

fn gates_of(workload: &Workload) -> Option<&str> {
    workload
        .metadata
        .annotations
        .as_ref()?
        .get(annotations::ADMISSION_GATED_BY)
        .map(String::as_str)
}

#[test]
fn a_pods_admission_gates_are_copied_onto_its_new_workload() {
    let gated =
        managed(json!({"annotations": {(annotations::ADMISSION_GATED_BY): "a.x/one,b.x/two"}}));
    assert_eq!(gates_of(&created(&gated)), Some("a.x/one,b.x/two"));
}

#[test]
fn a_gate_removed_from_the_pod_is_removed_from_its_workload() {
    let before =
        managed(json!({"annotations": {(annotations::ADMISSION_GATED_BY): "a.x/one,b.x/two"}}));
    let workload = created(&before);
    let after = managed(json!({"annotations": {(annotations::ADMISSION_GATED_BY): "b.x/two"}}));
    let PodStep::Follow(FollowStep::AdmissionGates { workload, event }) =
        step(&after, Some(&workload))
    else {
        panic!("the Workload should follow the pod's gates");
    };
    assert_eq!(gates_of(&workload), Some("b.x/two"));
    assert_eq!(event.reason, job_event_reasons::UPDATED_WORKLOAD);
    assert_eq!(step(&after, Some(&workload)), PodStep::Idle);
}

#[test]
fn a_relabelled_pod_changes_its_pending_workloads_priority() {
    let low = managed(json!({"labels": {(labels::PRIORITY_CLASS): "low"}}));
    let workload = created(&low);
    assert_eq!(workload.spec.priority, Some(10));
    let high = managed(json!({"labels": {(labels::PRIORITY_CLASS): "high"}}));
    let PodStep::Follow(FollowStep::Priority(raised)) = step(&high, Some(&workload)) else {
        panic!("the Workload should follow the pod's priority class");
    };
    assert_eq!(raised.spec.priority, Some(1000));
    assert_eq!(
        raised
            .spec
            .priority_class_ref
            .as_ref()
            .map(|c| c.name.as_str()),
        Some("high")
    );
    assert_eq!(step(&high, Some(&raised)), PodStep::Idle);
}

#[test]
fn a_class_that_does_not_exist_is_a_warning_not_a_write() {
    let workload = created(&managed(
        json!({"labels": {(labels::PRIORITY_CLASS): "low"}}),
    ));
    let unknown = managed(json!({"labels": {(labels::PRIORITY_CLASS): "urgent"}}));
    let PodStep::CannotCompose(warning) = step(&unknown, Some(&workload)) else {
        panic!("a missing class should be reported");
    };
    assert_eq!(
        warning.reason,
        job_event_reasons::WORKLOAD_PRIORITY_CLASS_NOT_FOUND
    );
}
