use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;
use crate::api::keys::kuota_annotations;
use crate::engine::model::{Admission, PodSetAssignment};
use crate::engine::quantity::Quantity;
use crate::engine::{
    CarriedState, EvictionReason, EvictionRecord, PendingReason, PreemptionReason, WorkloadKey,
    WorkloadStatus as EngineStatus,
};

fn now() -> Time {
    Time("2026-11-23T10:00:00Z".parse().unwrap())
}

fn workload() -> Workload {
    let mut w = Workload::new("job", Default::default());
    w.metadata.name = Some("job".into());
    w.metadata.namespace = Some("ns".into());
    w.metadata.resource_version = Some("7".into());
    w
}

fn admission(cpu: i64) -> Admission {
    Admission {
        cluster_queue: "team".into(),
        pod_set_assignments: vec![PodSetAssignment {
            name: "main".into(),
            flavors: BTreeMap::from([("cpu".to_string(), "default".to_string())]),
            resource_usage: BTreeMap::from([("cpu".to_string(), Quantity::from_units(cpu))]),
            count: 1,
            topology_assignment: None,
        }],
    }
}

fn state(status: EngineStatus, reserved_at: Option<i64>) -> WorkloadState {
    WorkloadState {
        workload: WorkloadKey::new("ns", "job"),
        uid: "uid".into(),
        status,
        last_eviction: None,
        active: true,
        carried: CarriedState {
            quota_reserved_at: reserved_at,
            ..CarriedState::default()
        },
    }
}

fn waiting() -> EngineStatus {
    EngineStatus::Pending {
        reason: PendingReason::WaitingForQuota,
        message: "no room".into(),
    }
}

#[test]
fn an_admission_claims_quota_and_carries_its_reservation_time() {
    let planned = plan(
        &workload(),
        &state(EngineStatus::Admitted(admission(2)), Some(5)),
        &now(),
    )
    .expect("a write");
    assert_eq!(planned.effect, Effect::Claim);
    assert!(planned.status.admission.is_some());
    let annotations = planned.annotations.expect("annotations change");
    assert_eq!(annotations[kuota_annotations::QUOTA_RESERVED_AT], "5");
}

#[test]
fn a_written_decision_needs_no_write_again() {
    let engine = state(EngineStatus::Admitted(admission(2)), Some(5));
    let first = plan(&workload(), &engine, &now()).expect("a write");
    let mut written = workload();
    written.status = Some(first.status);
    written.metadata.annotations = first.annotations;
    let later = Time("2026-11-23T10:05:00Z".parse().unwrap());
    assert_eq!(plan(&written, &engine, &later), None);
}

#[test]
fn clearing_an_admission_releases_quota() {
    let engine = state(EngineStatus::Admitted(admission(2)), Some(5));
    let first = plan(&workload(), &engine, &now()).expect("a write");
    let mut admitted = workload();
    admitted.status = Some(first.status);
    admitted.metadata.annotations = first.annotations;
    let mut evicted = state(waiting(), None);
    evicted.last_eviction = Some(EvictionRecord {
        reason: EvictionReason::Preempted,
        message: "Preempted to accommodate a workload".into(),
        preemption: Some(PreemptionReason::InCohortReclamation),
    });
    let planned = plan(&admitted, &evicted, &now()).expect("a write");
    assert_eq!(planned.effect, Effect::Release);
    assert_eq!(planned.status.admission, None);
    // The reservation time stays: nothing reads it without an admission, and removing it would
    // be a request of its own.
    assert_eq!(planned.annotations, None);
}

#[test]
fn a_finished_workload_costs_no_write() {
    let engine = state(EngineStatus::Admitted(admission(2)), Some(5));
    let first = plan(&workload(), &engine, &now()).expect("a write");
    let mut finished = workload();
    finished.status = Some(first.status);
    finished.metadata.annotations = first.annotations;
    assert_eq!(
        plan(&finished, &state(EngineStatus::Finished, None), &now()),
        None
    );
}

#[test]
fn a_different_admission_is_a_claim() {
    let engine = state(EngineStatus::Admitted(admission(2)), Some(5));
    let first = plan(&workload(), &engine, &now()).expect("a write");
    let mut admitted = workload();
    admitted.status = Some(first.status);
    admitted.metadata.annotations = first.annotations;
    let moved = state(EngineStatus::Admitted(admission(3)), Some(5));
    let planned = plan(&admitted, &moved, &now()).expect("a write");
    assert_eq!(planned.effect, Effect::Claim);
}

#[test]
fn a_pending_reason_is_an_update() {
    let planned = plan(&workload(), &state(waiting(), None), &now()).expect("a write");
    assert_eq!(planned.effect, Effect::Update);
    assert_eq!(planned.annotations, None);
    assert_eq!(planned.status.conditions[0].reason, "WaitingForQuota");
}
