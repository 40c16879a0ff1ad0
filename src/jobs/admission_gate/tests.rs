use serde_json::json;

use super::*;
use crate::jobs::fixtures::workload;

fn meta(gates: Option<&str>) -> ObjectMeta {
    ObjectMeta {
        annotations: gates.map(|g| [(ADMISSION_GATED_BY.to_owned(), g.to_owned())].into()),
        ..ObjectMeta::default()
    }
}

fn gated_workload(gates: &str) -> Workload {
    workload(json!({"metadata": {"annotations": {ADMISSION_GATED_BY: gates}}}))
}

#[test]
fn a_new_workload_carries_the_jobs_gates() {
    let mut created = workload(json!({}));
    copy_gates(&meta(Some("example.com/a,example.com/b")), &mut created);
    assert_eq!(gates_of(&created.metadata), "example.com/a,example.com/b");

    let mut ungated = workload(json!({}));
    copy_gates(&meta(Some("")), &mut ungated);
    copy_gates(&meta(None), &mut ungated);
    assert_eq!(gates_of(&ungated.metadata), "");
}

/// A gate removed from the job is removed from the Workload, with Kueue's event words.
#[test]
fn a_gate_removed_from_the_job_is_removed_from_the_workload() {
    let held = gated_workload("example.com/a,example.com/b");
    let (narrowed, value) = follow_gates(&meta(Some("example.com/b")), &held).unwrap();
    assert_eq!(gates_of(&narrowed.metadata), "example.com/b");
    assert_eq!(value, "example.com/b");

    let (cleared, value) = follow_gates(&meta(None), &held).unwrap();
    assert_eq!(gates_of(&cleared.metadata), "");
    assert_eq!(value, "");
    assert_eq!(
        crate::jobs::JobEvent::updated_admission_gates(&value).note,
        "Updated workload AdmissionGatedBy to \"\""
    );
}

/// What the Workload webhook refuses is not written: a gate the Workload no longer has (removed
/// from the Workload itself) or never had.
#[test]
fn gates_the_workload_does_not_hold_are_not_written_back() {
    let gates = meta(Some("example.com/a"));
    assert_eq!(follow_gates(&gates, &gated_workload("example.com/a")), None);
    assert_eq!(follow_gates(&gates, &workload(json!({}))), None);
    let other = gated_workload("example.com/b");
    assert_eq!(follow_gates(&gates, &other), None);
}
