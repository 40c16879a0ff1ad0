use std::sync::Arc;

use super::*;
use crate::api::{Workload, WorkloadPriorityClassFields};

fn class(name: &str, value: i32) -> WorkloadPriorityClass {
    WorkloadPriorityClass::new(
        name,
        WorkloadPriorityClassFields {
            value,
            description: None,
        },
    )
}

/// A Workload naming WorkloadPriorityClass `class` (or a pod PriorityClass with `pod: true`),
/// holding quota or not.
fn workload(name: &str, class: &str, priority: i32, pod: bool, reserved: bool) -> SharedWorkload {
    let (group, kind) = if pod {
        ("scheduling.k8s.io", "PriorityClass")
    } else {
        ("kueue.x-k8s.io", "WorkloadPriorityClass")
    };
    let status = if reserved {
        serde_json::json!({"conditions": [{"type": "QuotaReserved", "status": "True",
            "reason": "QuotaReserved", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]})
    } else {
        serde_json::Value::Null
    };
    let workload: Workload = serde_json::from_value(serde_json::json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": "1"},
        "spec": {"priority": priority,
                 "priorityClassRef": {"group": group, "kind": kind, "name": class},
                 "podSets": [{"name": "main", "count": 1,
                              "template": {"spec": {"containers": [{"name": "c"}]}}}]},
        "status": status,
    }))
    .expect("test workload");
    Arc::new(workload)
}

fn names(due: &[(SharedWorkload, i32)]) -> Vec<(String, i32)> {
    due.iter().map(|(w, v)| (w.name_any(), *v)).collect()
}

/// Both kinds listed: `high` at 100 and the given Workloads.
fn listed(workloads: Vec<SharedWorkload>) -> StaleValues {
    let mut stale = StaleValues::default();
    stale.take_workload(Change::Reset(workloads));
    stale.take_class(Change::Reset(vec![class("high", 100)]));
    stale
}

#[test]
fn a_changed_value_reaches_every_workload_naming_the_class_pending_or_admitted() {
    let mut stale = listed(vec![
        workload("pending", "high", 100, false, false),
        workload("admitted", "high", 100, false, true),
        workload("other", "low", 100, false, false),
        workload("pods", "high", 100, true, false),
    ]);
    assert!(stale.take_due(10).is_empty(), "every copy is current");
    stale.take_class(Change::Apply(Box::new(class("high", 300))));
    let due = stale.take_due(10);
    assert_eq!(
        names(&due),
        [("admitted".to_string(), 300), ("pending".to_string(), 300)]
    );
    assert!(stale.take_due(10).is_empty(), "each is handed out once");
}

#[test]
fn a_stale_copy_is_written_when_the_class_is_listed_not_before_the_workloads_are() {
    let mut stale = StaleValues::default();
    stale.take_class(Change::Reset(vec![class("high", 300)]));
    assert!(stale.take_due(10).is_empty(), "Workloads not listed yet");
    stale.take_workload(Change::Reset(vec![workload(
        "w", "high", 100, false, false,
    )]));
    assert_eq!(names(&stale.take_due(10)), [("w".to_string(), 300)]);
}

#[test]
fn an_unchanged_value_or_a_deleted_class_changes_nothing_and_a_failed_write_is_retried() {
    let mut stale = listed(vec![workload("w", "high", 5, false, false)]);
    let due = stale.take_due(10);
    assert_eq!(names(&due), [("w".to_string(), 100)]);
    stale.answered(&due[0].0, true);
    assert_eq!(names(&stale.take_due(10)), [("w".to_string(), 100)]);

    let mut stale = listed(vec![]);
    assert!(stale.take_due(10).is_empty());
    stale.take_class(Change::Apply(Box::new(class("high", 100))));
    stale.take_workload(Change::Apply(Box::new(workload(
        "late", "high", 5, false, false,
    ))));
    assert!(
        stale.take_due(10).is_empty(),
        "Kueue looks at a class only when it is created or its value changes"
    );
    stale.take_class(Change::Delete(Box::new(class("high", 100))));
    assert!(stale.take_due(10).is_empty());
    stale.look_again();
    assert!(stale.take_due(10).is_empty(), "a deleted class is gone");
}
