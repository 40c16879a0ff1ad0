use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::*;
use crate::api::keys::kuota_annotations;
use crate::engine::model::{Admission, PodSetAssignment};
use crate::engine::quantity::Quantity;
use crate::engine::{
    CarriedState, EvictionReason, EvictionRecord, PendingReason, PreemptionReason, WorkloadKey,
    WorkloadStatus as EngineStatus,
};
use crate::small_map::SmallMap;

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
            flavors: SmallMap::from([("cpu".to_string(), "default".to_string())]),
            resource_usage: SmallMap::from([("cpu".to_string(), Quantity::from_units(cpu))]),
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
        admission_checks: Vec::new(),
    }
}

fn waiting() -> EngineStatus {
    EngineStatus::Pending {
        reason: PendingReason::WaitingForQuota,
        message: "no room".into(),
    }
}

/// A reservation time a second before [`now`], in milliseconds.
const RESERVED: i64 = 1_795_427_999_000;

fn condition_time(status: &crate::api::WorkloadStatus, type_: &str) -> Option<Time> {
    status
        .conditions
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| c.last_transition_time.clone())
}

#[test]
fn an_ordinary_admission_is_a_status_write_without_annotations() {
    let planned = plan(
        &workload(),
        &state(EngineStatus::Admitted(admission(2)), Some(RESERVED)),
        &now(),
    )
    .expect("a write");
    assert_eq!(planned.effect, Effect::Claim);
    assert!(planned.status.admission.is_some());
    assert_eq!(planned.annotations, None, "no metadata patch");
    // The conditions show the engine's reservation time, not the time of the write.
    let reserved = Time(Timestamp::from_millisecond(RESERVED).unwrap());
    assert_eq!(reserved.0.to_string(), "2026-11-23T09:59:59Z");
    for type_ in ["QuotaReserved", "Admitted"] {
        assert_eq!(
            condition_time(&planned.status, type_),
            Some(reserved.clone())
        );
    }
}

#[test]
fn an_admission_on_an_object_with_an_old_reservation_annotation_sends_no_metadata_patch() {
    let mut read = workload();
    read.metadata.annotations = Some(BTreeMap::from([(
        "kuota.dev/quota-reserved-at".to_string(),
        "12".to_string(),
    )]));
    let planned = plan(
        &read,
        &state(EngineStatus::Admitted(admission(2)), Some(RESERVED)),
        &now(),
    )
    .expect("a write");
    assert_eq!(planned.annotations, None);
}

#[test]
fn a_spent_preemption_credit_is_a_metadata_patch() {
    let mut engine = state(EngineStatus::Admitted(admission(2)), Some(RESERVED));
    engine.carried.preemption_credit_spent = true;
    let planned = plan(&workload(), &engine, &now()).expect("a write");
    let annotations = planned.annotations.expect("annotations change");
    assert_eq!(
        annotations[kuota_annotations::PREEMPTION_CREDIT_SPENT],
        "true"
    );
}

#[test]
fn a_reservation_made_again_before_a_write_restamps_its_conditions() {
    let first = plan(
        &workload(),
        &state(EngineStatus::Admitted(admission(2)), Some(RESERVED)),
        &now(),
    )
    .expect("a write");
    let mut admitted = workload();
    admitted.status = Some(first.status);
    // Evicted and admitted again, with the same admission, later.
    let again = RESERVED + 60_000;
    let mut engine = state(EngineStatus::Admitted(admission(2)), Some(again));
    engine.last_eviction = Some(EvictionRecord {
        reason: EvictionReason::Preempted,
        message: "Preempted to accommodate a workload".into(),
        preemption: Some(PreemptionReason::InCohortReclamation),
    });
    let planned = plan(&admitted, &engine, &now()).expect("a write");
    let again = Time(Timestamp::from_millisecond(again).unwrap());
    for type_ in ["QuotaReserved", "Admitted"] {
        assert_eq!(condition_time(&planned.status, type_), Some(again.clone()));
    }
}

#[test]
fn a_written_decision_needs_no_write_again() {
    let engine = state(EngineStatus::Admitted(admission(2)), Some(RESERVED));
    let first = plan(&workload(), &engine, &now()).expect("a write");
    let mut written = workload();
    written.status = Some(first.status);
    written.metadata.annotations = first.annotations;
    let later = Time("2026-11-23T10:05:00Z".parse().unwrap());
    assert_eq!(plan(&written, &engine, &later), None);
}

#[test]
fn clearing_an_admission_releases_quota() {
    let engine = state(EngineStatus::Admitted(admission(2)), Some(RESERVED));
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
    assert_eq!(planned.annotations, None);
}

#[test]
fn a_finished_workload_costs_no_write() {
    let engine = state(EngineStatus::Admitted(admission(2)), Some(RESERVED));
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
    let engine = state(EngineStatus::Admitted(admission(2)), Some(RESERVED));
    let first = plan(&workload(), &engine, &now()).expect("a write");
    let mut admitted = workload();
    admitted.status = Some(first.status);
    admitted.metadata.annotations = first.annotations;
    let moved = state(EngineStatus::Admitted(admission(3)), Some(RESERVED));
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
