//! Restart gives the same decisions: a long-lived engine runs random cycles; at a random point its
//! workloads are written out as API objects (status and kuota's annotations, as `kuota simulate -o
//! yaml` prints them), read back through the state conversion into a fresh engine, and from then
//! on both engines must decide exactly alike.

mod engine_support;

use std::collections::BTreeMap;

use engine_support::cases::*;
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use kube::api::ObjectMeta;
use kuota::api;
use kuota::api::keys::condition_types;
use kuota::engine::model::{EngineConfig, Snapshot, Workload};
use kuota::engine::{CycleOutcome, Engine, WorkloadKey, WorkloadState, WorkloadStatus};
use kuota::state::admission_input::{self, WorkloadDefaults};
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
        };
        let model = admission_input::workload(&read, defaults)
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
        apply(step, &mut long_lived, &mut inputs, &second_wave)?;
        let long_lived_outcome = long_lived.cycle();
        if let Some(fresh) = fresh.as_mut() {
            apply(step, fresh, &mut fresh_inputs, &second_wave)?;
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
