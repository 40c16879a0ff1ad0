use serde_json::{Value, json};

use super::*;
use crate::api::keys::annotations;
use crate::jobs::fixtures::{condition, pod, workload};

/// A pod of role `main` (the sample Workload's only pod set, of 4) in `phase`.
fn member(name: &str, phase: &str) -> Pod {
    pod(
        name,
        json!({
            "metadata": {"annotations": {(annotations::ROLE_HASH): "main"}},
            "spec": {"nodeName": "node-1"},
            "status": {"phase": phase}
        }),
    )
}

fn group(phases: [&str; 4]) -> Vec<Pod> {
    phases
        .iter()
        .enumerate()
        .map(|(i, phase)| member(&format!("p{i}"), phase))
        .collect()
}

fn with_conditions(conditions: Value) -> Workload {
    workload(json!({"status": {"conditions": conditions}}))
}

fn waiting(status: bool, reason: &str, message: &str) -> Value {
    let mut c = condition(
        condition_types::WAITING_FOR_REPLACEMENT_PODS,
        status,
        reason,
        "2026-01-01T00:00:00Z",
    );
    c["message"] = json!(message);
    c
}

#[test]
fn a_complete_group_without_the_condition_needs_none() {
    let pods = group(["Running", "Running", "Succeeded", "Pending"]);
    assert_eq!(replacement_pods(&pods, &with_conditions(json!([]))), None);
}

#[test]
fn a_failed_pod_makes_the_group_wait_for_its_replacement() {
    let pods = group(["Running", "Failed", "Running", "Running"]);
    assert_eq!(
        replacement_pods(&pods, &with_conditions(json!([]))),
        Some(ReplacementPods {
            status: true,
            reason: "PodsFailed".into(),
            message: "Some Failed pods need replacement".into(),
        })
    );
    // Written once: the same condition carried needs no write.
    let carried = with_conditions(json!([waiting(
        true,
        "PodsFailed",
        "Some Failed pods need replacement"
    )]));
    assert_eq!(replacement_pods(&pods, &carried), None);
}

#[test]
fn a_missing_pod_counts_like_a_failed_one_and_an_unbound_pod_being_deleted_too() {
    let mut pods = group(["Running", "Running", "Running", "Pending"]);
    pods.pop();
    assert!(replacement_pods(&pods, &with_conditions(json!([]))).is_some_and(|c| c.status));
    let mut deleting = member("p3", "Pending");
    deleting.metadata.deletion_timestamp =
        Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
        ));
    if let Some(spec) = deleting.spec.as_mut() {
        spec.node_name = None;
    }
    pods.push(deleting);
    assert!(replacement_pods(&pods, &with_conditions(json!([]))).is_some_and(|c| c.status));
}

#[test]
fn an_evicted_workload_waits_with_the_evictions_reason_and_message() {
    let pods = group(["Running", "Failed", "Running", "Running"]);
    let mut evicted = condition("Evicted", true, "Preempted", "2026-01-01T00:00:00Z");
    evicted["message"] = json!("Preempted to accommodate a workload");
    let carried = waiting(true, "PodsFailed", "Some Failed pods need replacement");
    assert_eq!(
        replacement_pods(&pods, &with_conditions(json!([evicted, carried]))),
        Some(ReplacementPods {
            status: true,
            reason: "Preempted".into(),
            message: "Preempted to accommodate a workload".into(),
        })
    );
}

#[test]
fn a_true_condition_keeps_its_reason_once_the_eviction_is_over() {
    let pods = group(["Running", "Failed", "Running", "Running"]);
    let carried = waiting(true, "Preempted", "Preempted to accommodate a workload");
    assert_eq!(
        replacement_pods(&pods, &with_conditions(json!([carried]))),
        None
    );
}

#[test]
fn the_condition_turns_false_once_the_replacement_is_there() {
    let pods = group(["Running", "Succeeded", "Running", "Pending"]);
    let carried = waiting(true, "PodsFailed", "Some Failed pods need replacement");
    assert_eq!(
        replacement_pods(&pods, &with_conditions(json!([carried]))),
        Some(ReplacementPods {
            status: false,
            reason: "PodsReady".into(),
            message: "No pods need replacement".into(),
        })
    );
    let settled = waiting(false, "PodsReady", "No pods need replacement");
    assert_eq!(
        replacement_pods(&pods, &with_conditions(json!([settled]))),
        None
    );
}
