use crate::api::Condition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;
use crate::api::WorkloadStatus;
use crate::api::workload_status::Admission;

fn workload(admitted: bool, conditions: &[(&str, &str)]) -> Workload {
    let mut w = Workload::new("w", Default::default());
    w.status = Some(WorkloadStatus {
        admission: admitted.then(|| Admission {
            cluster_queue: "team".into(),
            pod_set_assignments: Vec::new(),
        }),
        conditions: conditions
            .iter()
            .map(|(type_, status)| Condition {
                type_: (*type_).into(),
                status: (*status).into(),
                reason: "R".into(),
                message: Default::default(),
                last_transition_time: Time("2026-11-23T10:00:00Z".parse().unwrap()),
                observed_generation: None,
            })
            .collect(),
        ..WorkloadStatus::default()
    });
    w
}

#[test]
fn an_admitted_workload_blocks_until_its_pods_are_ready() {
    let mut unready = Unready::new(true);
    unready.seen(
        &WorkloadKey::new("ns", "a"),
        &workload(true, &[("PodsReady", "False")]),
    );
    assert!(unready.blocks());
    unready.seen(
        &WorkloadKey::new("ns", "a"),
        &workload(true, &[("PodsReady", "True")]),
    );
    assert!(!unready.blocks());
}

#[test]
fn finished_pending_and_deleted_workloads_do_not_block() {
    let mut unready = Unready::new(true);
    unready.seen(
        &WorkloadKey::new("ns", "a"),
        &workload(true, &[("Finished", "True")]),
    );
    unready.seen(&WorkloadKey::new("ns", "b"), &workload(false, &[]));
    assert!(!unready.blocks());
    unready.seen(&WorkloadKey::new("ns", "c"), &workload(true, &[]));
    assert!(unready.blocks());
    unready.gone(&WorkloadKey::new("ns", "c"));
    assert!(!unready.blocks());
}

#[test]
fn nothing_blocks_without_block_admission() {
    let mut unready = Unready::new(false);
    unready.seen(&WorkloadKey::new("ns", "a"), &workload(true, &[]));
    assert!(!unready.blocks());
}
