use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::*;
use crate::api::WorkloadPriorityClassFields;

#[test]
fn from_objects_records_values_and_the_global_default() {
    let wpc = WorkloadPriorityClass::new(
        "high",
        WorkloadPriorityClassFields {
            value: 1000,
            description: None,
        },
    );
    let pc = |name: &str, value, global_default| PriorityClass {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        value,
        global_default,
        ..PriorityClass::default()
    };
    let classes = [pc("batch", 10, None), pc("standard", 5, Some(true))];
    let lookup = PriorityLookup::from_objects([&wpc], &classes);
    assert_eq!(lookup.workload_priority_class("high"), Some(1000));
    assert_eq!(lookup.workload_priority_class("batch"), None);
    assert_eq!(lookup.priority_class("batch"), Some(10));
    assert_eq!(lookup.global_default(), Some(("standard", 5)));
}

#[test]
fn lowest_global_default_wins() {
    let mut lookup = PriorityLookup::new();
    lookup.add_priority_class("b", 7, true);
    lookup.add_priority_class("a", 3, true);
    lookup.add_priority_class("c", 3, true);
    assert_eq!(lookup.global_default(), Some(("a", 3)));
    lookup.add_priority_class("a", 3, false);
    assert_eq!(lookup.global_default(), Some(("c", 3)));
}

#[test]
fn no_global_default_when_none_is_marked() {
    let mut lookup = PriorityLookup::new();
    lookup.add_priority_class("batch", 10, false);
    assert_eq!(lookup.global_default(), None);
}

/// A Workload with `priority`, its class reference as JSON, and whether it holds quota.
fn workload_with(class: serde_json::Value, priority: i32, reserved: bool) -> Workload {
    let status = if reserved {
        serde_json::json!({"conditions": [{"type": "QuotaReserved", "status": "True",
            "reason": "QuotaReserved", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]})
    } else {
        serde_json::Value::Null
    };
    serde_json::from_value(serde_json::json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"priorityClassRef": class, "priority": priority, "podSets": [{"name": "main",
            "count": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}]},
        "status": status,
    }))
    .expect("test workload")
}

fn wpc(name: &str) -> serde_json::Value {
    serde_json::json!({"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": name})
}

fn classes() -> PriorityLookup {
    let mut lookup = PriorityLookup::new();
    lookup.add_workload_priority_class("low", 100);
    lookup.add_workload_priority_class("high", 300);
    lookup.add_priority_class("pods", 50, false);
    lookup
}

#[test]
fn a_workload_follows_a_changed_label_pending_or_holding_quota() {
    for reserved in [false, true] {
        let changed = priority_change(
            &workload_with(wpc("low"), 100, reserved),
            Some("high"),
            &classes(),
        )
        .expect("high exists")
        .expect("the class changed");
        assert_eq!(changed.value, 300);
        assert_eq!(changed.class.map(|c| c.name).as_deref(), Some("high"));
    }
}

#[test]
fn a_workload_naming_the_labelled_class_or_a_pod_class_is_left_alone() {
    let same = workload_with(wpc("low"), 100, false);
    assert_eq!(priority_change(&same, Some("low"), &classes()), Ok(None));
    let pod_class = serde_json::json!({"group": "scheduling.k8s.io", "kind": "PriorityClass",
        "name": "pods"});
    let from_pods = workload_with(pod_class, 50, false);
    assert_eq!(
        priority_change(&from_pods, Some("high"), &classes()),
        Ok(None)
    );
}

#[test]
fn a_class_is_added_to_a_pending_workload_but_never_to_one_holding_quota() {
    let pending = workload_with(serde_json::Value::Null, 0, false);
    let added = priority_change(&pending, Some("high"), &classes()).expect("exists");
    assert_eq!(added.map(|p| p.value), Some(300));
    let holding = workload_with(serde_json::Value::Null, 0, true);
    assert_eq!(
        priority_change(&holding, Some("high"), &classes()),
        Ok(None)
    );
}

#[test]
fn a_label_naming_a_missing_class_is_an_error() {
    let pending = workload_with(wpc("low"), 100, false);
    assert_eq!(
        priority_change(&pending, Some("urgent"), &classes()),
        Err(MissingClass::WorkloadPriorityClass("urgent".into()))
    );
}
