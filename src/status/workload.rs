//! A Workload's `status` (admission and conditions) from the engine's final state for it.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use crate::api::WorkloadStatus;
use crate::api::keys::{
    admitted_reasons, condition_types, evicted_reasons, quota_reserved_reasons, requeued_reasons,
};
use crate::api::workload_status::{Admission as ApiAdmission, PodSetAssignment as ApiAssignment};
use crate::engine::model::Admission;
use crate::engine::{
    EvictionReason, EvictionRecord, WorkloadState, WorkloadStatus as EngineStatus,
};

/// The API form of an engine admission.
pub fn admission(admission: &Admission) -> ApiAdmission {
    ApiAdmission {
        cluster_queue: admission.cluster_queue.clone(),
        pod_set_assignments: admission
            .pod_set_assignments
            .iter()
            .map(|a| ApiAssignment {
                name: a.name.clone(),
                flavors: a.flavors.clone(),
                resource_usage: a
                    .resource_usage
                    .iter()
                    .map(|(name, amount)| (name.clone(), K8sQuantity(amount.display_for(name))))
                    .collect::<BTreeMap<_, _>>(),
                count: Some(a.count),
                topology_assignment: a.topology_assignment.clone(),
                delayed_topology_request: None,
            })
            .collect(),
    }
}

fn condition(
    type_: &str,
    status: bool,
    reason: &str,
    message: String,
    now: &Time,
    generation: Option<i64>,
) -> Condition {
    Condition {
        type_: type_.to_string(),
        status: if status { "True" } else { "False" }.to_string(),
        reason: reason.to_string(),
        message,
        last_transition_time: now.clone(),
        observed_generation: generation,
    }
}

/// The status a Workload has after the engine's decisions, with every condition stamped `now`.
pub fn workload_status(
    state: &WorkloadState,
    now: &Time,
    generation: Option<i64>,
) -> WorkloadStatus {
    let cond = |type_: &str, status: bool, reason: &str, message: String| {
        condition(type_, status, reason, message, now, generation)
    };
    let mut status = WorkloadStatus::default();
    match &state.status {
        EngineStatus::Admitted(admitted) => {
            let cq = &admitted.cluster_queue;
            status.admission = Some(admission(admitted));
            status.conditions.push(cond(
                condition_types::QUOTA_RESERVED,
                true,
                quota_reserved_reasons::QUOTA_RESERVED,
                format!("Quota reserved in ClusterQueue {cq}"),
            ));
            status.conditions.push(cond(
                condition_types::ADMITTED,
                true,
                admitted_reasons::ADMITTED,
                format!("The workload is admitted by ClusterQueue {cq}"),
            ));
            // Re-admission after an eviction turns the old conditions off, keeping what happened.
            if let Some(eviction) = &state.last_eviction {
                let previously = format!("Previously: {}", eviction.message);
                status.conditions.push(cond(
                    condition_types::EVICTED,
                    false,
                    quota_reserved_reasons::QUOTA_RESERVED,
                    previously.clone(),
                ));
                if eviction.preemption.is_some() {
                    status.conditions.push(cond(
                        condition_types::PREEMPTED,
                        false,
                        quota_reserved_reasons::QUOTA_RESERVED,
                        previously,
                    ));
                }
            }
        }
        EngineStatus::Pending { reason, message } => {
            status.conditions.push(cond(
                condition_types::QUOTA_RESERVED,
                false,
                reason.as_str(),
                message.clone(),
            ));
            if let Some(eviction) = &state.last_eviction {
                status.conditions.push(cond(
                    condition_types::ADMITTED,
                    false,
                    admitted_reasons::NO_RESERVATION,
                    "The workload has no reservation".to_string(),
                ));
                push_eviction(&mut status.conditions, eviction, &cond);
            }
        }
        EngineStatus::Finished => {}
    }
    status
}

fn push_eviction(
    conditions: &mut Vec<Condition>,
    eviction: &EvictionRecord,
    cond: &impl Fn(&str, bool, &str, String) -> Condition,
) {
    conditions.push(cond(
        condition_types::EVICTED,
        true,
        eviction.reason.as_str(),
        eviction.message.clone(),
    ));
    if let Some(preemption) = eviction.preemption {
        conditions.push(cond(
            condition_types::PREEMPTED,
            true,
            preemption.as_str(),
            eviction.message.clone(),
        ));
    }
    let (requeued, reason) = match eviction.reason {
        EvictionReason::Preempted => (true, requeued_reasons::PREEMPTED),
        EvictionReason::ClusterQueueStopped => (false, requeued_reasons::CLUSTER_QUEUE_STOPPED),
        EvictionReason::LocalQueueStopped => (false, requeued_reasons::LOCAL_QUEUE_STOPPED),
        EvictionReason::Deactivated => (false, requeued_reasons::DEACTIVATED),
        EvictionReason::NodeFailures => (true, requeued_reasons::NODE_FAILURES),
    };
    conditions.push(cond(
        condition_types::REQUEUED,
        requeued,
        reason,
        eviction.message.clone(),
    ));
}

/// Adds what a hot-swap eviction (C.8, no replacement for failed nodes) leaves on a Workload:
/// `Evicted=True` and `Requeued=True` with reason `NodeFailures` while it waits again, or
/// `Evicted=False` with the previous message once it was admitted again. Conditions already
/// written for a later eviction are kept.
pub fn node_failure_eviction(
    status: &mut WorkloadStatus,
    message: &str,
    now: &Time,
    generation: Option<i64>,
) {
    if status
        .conditions
        .iter()
        .any(|c| c.type_ == condition_types::EVICTED)
    {
        return;
    }
    let cond = |type_: &str, state: bool, reason: &str, message: String| {
        condition(type_, state, reason, message, now, generation)
    };
    if status.admission.is_some() {
        status.conditions.push(cond(
            condition_types::EVICTED,
            false,
            quota_reserved_reasons::QUOTA_RESERVED,
            format!("Previously: {message}"),
        ));
        return;
    }
    status.conditions.push(cond(
        condition_types::ADMITTED,
        false,
        admitted_reasons::NO_RESERVATION,
        "The workload has no reservation".to_string(),
    ));
    status.conditions.push(cond(
        condition_types::EVICTED,
        true,
        evicted_reasons::NODE_FAILURES,
        message.to_string(),
    ));
    status.conditions.push(cond(
        condition_types::REQUEUED,
        true,
        requeued_reasons::NODE_FAILURES,
        message.to_string(),
    ));
}
