use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::json;

use super::*;

fn at(text: &str) -> Time {
    Time(text.parse().unwrap())
}

/// A Workload admitted at 10:00:00 with `maximum` seconds and `past` accumulated.
fn admitted(maximum: Option<i32>, past: Option<i32>) -> Workload {
    serde_json::from_value(json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "job", "namespace": "ns"},
        "spec": {"maximumExecutionTimeSeconds": maximum, "podSets": []},
        "status": {
            "accumulatedPastExecutionTimeSeconds": past,
            "conditions": [{
                "type": "Admitted", "status": "True", "reason": "Admitted",
                "message": "", "lastTransitionTime": "2026-01-01T10:00:00Z"
            }]
        }
    }))
    .unwrap()
}

#[test]
fn the_deadline_counts_the_time_of_earlier_admissions() {
    assert_eq!(
        execution_deadline(&admitted(Some(60), None)),
        Some("2026-01-01T10:01:00Z".parse().unwrap())
    );
    assert_eq!(
        execution_deadline(&admitted(Some(60), Some(45))),
        Some("2026-01-01T10:00:15Z".parse().unwrap())
    );
    assert_eq!(
        execution_deadline(&admitted(Some(60), Some(90))),
        Some("2026-01-01T09:59:30Z".parse().unwrap()),
        "already past"
    );
}

#[test]
fn no_deadline_without_a_maximum_an_admission_or_while_deactivation_is_under_way() {
    assert_eq!(execution_deadline(&admitted(None, None)), None);
    let mut waiting = admitted(Some(60), None);
    waiting.status = None;
    assert_eq!(execution_deadline(&waiting), None);
    let mut inactive = admitted(Some(60), None);
    inactive.spec.active = Some(false);
    assert_eq!(execution_deadline(&inactive), None);
    let mut marked = admitted(Some(60), None);
    let status = marked.status.take().unwrap();
    marked.status = Some(execution_time_exceeded(
        &status,
        &at("2026-01-01T10:01:00Z"),
        None,
    ));
    assert_eq!(execution_deadline(&marked), None);
}

/// Kueue's mark: `DeactivationTarget=True`, its reason and message, the accumulated time cleared.
#[test]
fn the_mark_names_kueues_reason_and_clears_the_accumulated_time() {
    let old = admitted(Some(60), Some(45)).status.unwrap();
    let marked = execution_time_exceeded(&old, &at("2026-01-01T10:00:15Z"), Some(3));
    let target = marked
        .conditions
        .iter()
        .find(|c| c.type_ == "DeactivationTarget")
        .unwrap();
    assert_eq!(
        (
            target.status.as_str(),
            target.reason.as_str(),
            &*target.message
        ),
        (
            "True",
            "MaximumExecutionTimeExceeded",
            "exceeding the maximum execution time"
        )
    );
    assert_eq!(marked.accumulated_past_execution_time_seconds, None);
}
