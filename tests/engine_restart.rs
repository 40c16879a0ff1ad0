//! Restart gives the same decisions: a long-lived engine runs random cycles; at a random point its
//! workloads are written out as API objects (status and kuota's annotations, as `kuota simulate -o
//! yaml` prints them), read back through the state conversion into a fresh engine, and from then
//! on both engines must decide exactly alike. Reservation times come back from the `QuotaReserved`
//! conditions, so preemption candidates are ordered alike.

mod engine_support;

use std::collections::BTreeMap;

use engine_support::cases::*;
use engine_support::{cpu_group, cq, flavor, quota, snapshot, wl};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::ObjectMeta;
use kuota::api;
use kuota::api::Condition;
use kuota::api::keys::condition_types;
use kuota::engine::model::{EngineConfig, Snapshot, WithinClusterQueue, Workload};
use kuota::engine::{CycleOutcome, Engine, WorkloadKey, WorkloadState, WorkloadStatus};
use kuota::state::admission_input::{self, WorkloadDefaults};
use kuota::state::queue_order::QueueOrdering;
use kuota::status::annotations::set_carried;
use kuota::status::workload::workload_status;
use proptest::prelude::*;

/// One thing that happens to the long-lived engine.
#[derive(Clone, Debug)]
enum Step {
    Cycle,
    /// The second wave of workloads arrives.
    Arrive,
    /// The oldest admitted workload finishes.
    FinishOldest,
    /// The newest workload is deactivated (`spec.active: false`).
    DeactivateNewest,
}

fn steps() -> Vec<Step> {
    let mut steps = vec![Step::Cycle, Step::Cycle, Step::Arrive];
    steps.extend(std::iter::repeat_n(Step::Cycle, 4));
    steps.push(Step::FinishOldest);
    steps.extend(std::iter::repeat_n(Step::Cycle, 3));
    steps.push(Step::DeactivateNewest);
    steps.extend(std::iter::repeat_n(Step::Cycle, 3));
    steps
}

/// Creation times in whole seconds, as the API server stamps them.
fn in_seconds(mut workloads: Vec<Workload>) -> Vec<Workload> {
    for w in &mut workloads {
        w.creation *= 1000;
    }
    workloads
}

/// The time the cycle of step `at` reserves quota at, in whole seconds as the controller gives
/// it: two steps share each second, so reservations tie and fall to the UID, as in Kueue.
fn reservation_time(at: usize) -> i64 {
    (1_000 + at as i64 / 2) * 1000
}

/// The Workload object the engine's state for `input` is written as.
fn written(input: &Workload, state: &WorkloadState) -> api::Workload {
    let now = Time(Timestamp::from_second(1_000_000).unwrap_or_default());
    let pod_sets = input
        .pod_sets
        .iter()
        .map(|ps| api::workload::PodSet {
            name: ps.name.clone(),
            count: ps.count,
            min_count: ps.min_count,
            template: std::sync::Arc::new(PodTemplateSpec {
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "main".into(),
                        resources: Some(ResourceRequirements {
                            requests: Some(
                                ps.requests
                                    .iter()
                                    .map(|(r, q)| (r.clone(), K8sQuantity(q.to_string())))
                                    .collect(),
                            ),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
                ..Default::default()
            }),
            topology_request: None,
        })
        .collect();
    let mut status = workload_status(None, state, &now, None);
    if state.status == WorkloadStatus::Finished {
        status.conditions.push(Condition {
            type_: condition_types::FINISHED.into(),
            status: "True".into(),
            reason: "Succeeded".into(),
            message: "done".into(),
            last_transition_time: now.clone(),
            observed_generation: None,
        });
    }
    let mut annotations = BTreeMap::new();
    set_carried(&mut annotations, &state.carried);
    let mut object = api::Workload::new(
        &input.name,
        api::workload::WorkloadSpec {
            pod_sets,
            queue_name: Some(input.queue_name.clone()),
            priority: Some(input.priority),
            active: Some(input.active),
            ..Default::default()
        },
    );
    object.metadata = ObjectMeta {
        name: Some(input.name.clone()),
        namespace: Some(input.namespace.clone()),
        uid: Some(input.uid.clone()),
        creation_timestamp: Some(Time(
            Timestamp::from_millisecond(input.creation).unwrap_or_default(),
        )),
        annotations: Some(annotations),
        ..Default::default()
    };
    object.status = Some(status);
    object
}

/// A fresh engine built only from what the long-lived one wrote out.
fn restarted(
    engine: &Engine,
    inputs: &BTreeMap<WorkloadKey, Workload>,
    quota_objects: &Snapshot,
    config: &EngineConfig,
) -> Result<Engine, TestCaseError> {
    let mut fresh = Engine::new(quota_objects, config.clone())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    for state in engine.states() {
        let object = written(&inputs[&state.workload], &state);
        let yaml =
            yaml_serde::to_string(&object).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let read: api::Workload =
            yaml_serde::from_str(&yaml).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let defaults = WorkloadDefaults {
            creation: 0,
            uid: String::new(),
            class_priority: None,
            ..WorkloadDefaults::default()
        };
        let model = admission_input::workload(&read, defaults, &QueueOrdering::default())
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        fresh
            .upsert_workload(model)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
    Ok(fresh)
}

/// What a cycle decided, without the pending reports (a fresh engine reports every reason once).
fn decided(outcome: &CycleOutcome) -> impl PartialEq + std::fmt::Debug + '_ {
    (&outcome.admitted, &outcome.preempted, &outcome.evicted)
}

/// Every workload's state: its admission, finished, or why it waits. A waiting workload's message
/// tells the shortfall found when it was last evaluated, which a parked workload keeps until usage in
/// its cohort tree changes, so only the reason is compared.
fn statuses(engine: &Engine) -> BTreeMap<WorkloadKey, WorkloadStatus> {
    engine
        .states()
        .into_iter()
        .map(|s| {
            let status = match s.status {
                WorkloadStatus::Pending { reason, .. } => WorkloadStatus::Pending {
                    reason,
                    message: String::new(),
                },
                other => other,
            };
            (s.workload, status)
        })
        .collect()
}

fn apply(
    step: &Step,
    engine: &mut Engine,
    inputs: &mut BTreeMap<WorkloadKey, Workload>,
    second_wave: &[Workload],
) -> Result<(), TestCaseError> {
    let fail = |e: kuota::engine::ModelError| TestCaseError::fail(e.to_string());
    match step {
        Step::Cycle => {}
        Step::Arrive => {
            for w in second_wave {
                inputs.insert(WorkloadKey::new(&w.namespace, &w.name), w.clone());
                engine.upsert_workload(w.clone()).map_err(fail)?;
            }
        }
        Step::FinishOldest => {
            let oldest = engine
                .states()
                .into_iter()
                .find(|s| matches!(s.status, WorkloadStatus::Admitted(_)));
            if let Some(state) = oldest {
                engine.finish(&state.workload);
                if let Some(input) = inputs.get_mut(&state.workload) {
                    input.finished = true;
                }
            }
        }
        Step::DeactivateNewest => {
            if let Some((_, input)) = inputs.iter_mut().max_by_key(|(_, w)| w.creation) {
                input.active = false;
                input.admission = None;
                let mut update = input.clone();
                if let Some(state) = engine
                    .states()
                    .into_iter()
                    .find(|s| s.workload.name == update.name)
                    && let WorkloadStatus::Admitted(admission) = state.status
                {
                    update.admission = Some(admission);
                    update.quota_reserved_at = state.carried.quota_reserved_at;
                }
                engine.upsert_workload(update).map_err(fail)?;
            }
        }
    }
    Ok(())
}

fn check_restart(case: &Case, checkpoint: usize) -> Result<(), TestCaseError> {
    let mut quota_objects = case.first.clone();
    let first = in_seconds(std::mem::take(&mut quota_objects.workloads));
    let second_wave = in_seconds(case.second_wave.clone());
    let mut inputs: BTreeMap<WorkloadKey, Workload> = first
        .iter()
        .map(|w| (WorkloadKey::new(&w.namespace, &w.name), w.clone()))
        .collect();
    let mut snapshot = quota_objects.clone();
    snapshot.workloads = first;
    let mut long_lived = Engine::new(&snapshot, case.config.clone())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut fresh: Option<Engine> = None;
    for (at, step) in steps().iter().enumerate() {
        if at == checkpoint {
            fresh = Some(restarted(
                &long_lived,
                &inputs,
                &quota_objects,
                &case.config,
            )?);
        }
        let mut fresh_inputs = inputs.clone();
        let now = reservation_time(at);
        apply(step, &mut long_lived, &mut inputs, &second_wave)?;
        long_lived.set_now(now);
        let long_lived_outcome = long_lived.cycle();
        if let Some(fresh) = fresh.as_mut() {
            apply(step, fresh, &mut fresh_inputs, &second_wave)?;
            fresh.set_now(now);
            let fresh_outcome = fresh.cycle();
            prop_assert_eq!(
                decided(&fresh_outcome),
                decided(&long_lived_outcome),
                "step {} ({:?}) after a restart at step {}",
                at,
                step,
                checkpoint
            );
            prop_assert_eq!(statuses(fresh), statuses(&long_lived));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn a_restarted_engine_decides_as_the_long_lived_one(
        case in case_strategy(),
        checkpoint in 0..steps().len(),
    ) {
        check_restart(&case, checkpoint)?;
    }
}

/// Two workloads reserved in different seconds, the later one with the larger UID: only the
/// reservation times (read back from the `QuotaReserved` conditions) make the restarted engine
/// preempt the later one, as the live one does; with the times lost the UID would pick the other.
#[test]
fn a_restarted_engine_preempts_the_most_recently_reserved_workload_as_the_live_one_does() {
    let mut queue = cq("a", None, vec![cpu_group("default", quota("cpu", "8"))]);
    queue.preemption.within_cluster_queue = WithinClusterQueue::LowerPriority;
    let quota_objects = snapshot(vec![flavor("default")], vec![queue], vec![], vec![]);
    let config = EngineConfig::default();
    let mut earlier = wl("earlier", "a", 0, 1_000, "4", 1);
    earlier.uid = "uid-a".into();
    let mut later = wl("later", "a", 0, 2_000, "4", 1);
    later.uid = "uid-z".into();
    let urgent = wl("urgent", "a", 5, 3_000, "4", 1);
    let mut live = Engine::new(&quota_objects, config.clone()).expect("valid quota objects");
    let mut inputs = BTreeMap::new();
    for (w, now) in [(earlier, 10_000), (later, 20_000)] {
        inputs.insert(WorkloadKey::new(&w.namespace, &w.name), w.clone());
        live.upsert_workload(w).expect("valid workload");
        live.set_now(now);
        assert_eq!(live.cycle().admitted.len(), 1);
    }
    let mut fresh = restarted(&live, &inputs, &quota_objects, &config).expect("restarted");
    assert_eq!(
        fresh
            .state(&WorkloadKey::new(engine_support::NS, "later"))
            .and_then(|s| s.carried.quota_reserved_at),
        Some(20_000),
        "the reservation time is read back from the QuotaReserved condition"
    );
    for engine in [&mut live, &mut fresh] {
        engine
            .upsert_workload(urgent.clone())
            .expect("valid workload");
        engine.set_now(30_000);
        let victims: Vec<String> = engine
            .cycle()
            .preempted
            .into_iter()
            .map(|p| p.victim.name)
            .collect();
        assert_eq!(victims, ["later"]);
    }
}
