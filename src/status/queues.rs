//! ClusterQueue, LocalQueue and Cohort status from the engine's [`QueueReport`], merged into the
//! status each already has, as Kueue's ClusterQueue, LocalQueue and Cohort controllers write them.

use crate::api::Condition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::api_quantity;
use super::conditions::{Desired, set_condition};
use crate::api::cluster_queue::ClusterQueueStatus;
use crate::api::cohort::CohortStatus;
use crate::api::common::FairSharingStatus;
use crate::api::keys::{cluster_queue_active_reasons, condition_types, local_queue_active_reasons};
use crate::api::local_queue::LocalQueueStatus;
use crate::api::quota::{
    FlavorUsage, LocalQueueFlavorUsage, LocalQueueResourceUsage, ResourceUsage,
};
use crate::engine::quantity::Quantity;
use crate::engine::queue_report::{
    self as report, ClusterQueueReport, CohortReport, InactiveCause, LocalQueueReport, QueueReport,
};

/// A ClusterQueue's status: the `Active` condition, workload counts, usage and, while fair sharing
/// is on, its weighted share. Reservations count every workload holding quota, usage and the
/// admitted count only those whose admission checks all said Ready.
pub fn cluster_queue_status(
    old: Option<&ClusterQueueStatus>,
    cq: &ClusterQueueReport,
    now: &Time,
    generation: Option<i64>,
) -> ClusterQueueStatus {
    let mut status = old.cloned().unwrap_or_default();
    let active = if cq.inactive.is_empty() {
        (
            true,
            cluster_queue_active_reasons::READY,
            "Can admit new workloads".to_string(),
        )
    } else {
        let (reason, message) = inactive_reason(&cq.inactive);
        (false, reason, message)
    };
    set_active(&mut status.conditions, active, now, generation);
    let usage = |usage| {
        api_usage(
            usage,
            |r| {
                // Kueue reports borrowing only for a queue in a cohort tree, and writes a zero
                // `borrowed` too (its zero quantity is not omitted).
                let borrowed = if cq.in_cohort {
                    (r.total - r.nominal).clamp_non_negative()
                } else {
                    Quantity::ZERO
                };
                ResourceUsage {
                    name: r.resource.clone(),
                    total: Some(api_quantity(r.total, &r.resource)),
                    borrowed: Some(api_quantity(borrowed, &r.resource)),
                }
            },
            |name, resources| FlavorUsage { name, resources },
        )
    };
    status.flavors_reservation = usage(&cq.reservation);
    status.flavors_usage = usage(&cq.usage);
    status.pending_workloads = Some(count(cq.pending));
    status.reserving_workloads = Some(count(cq.reserving));
    status.admitted_workloads = Some(count(cq.admitted));
    status.fair_sharing = fair_sharing(status.fair_sharing.take(), cq.weighted_share);
    status
}

/// Kueue's reason and message for an inactive ClusterQueue: every cause in Kueue's order (stop
/// policy, missing flavors, then the cohort cycle), the first naming the reason.
fn inactive_reason(causes: &[InactiveCause]) -> (&'static str, String) {
    if causes.contains(&InactiveCause::Terminating) {
        return (
            cluster_queue_active_reasons::TERMINATING,
            "Can't admit new workloads; clusterQueue is terminating".to_string(),
        );
    }
    let mut reasons = Vec::new();
    let mut parts = Vec::new();
    if causes.contains(&InactiveCause::Stopped) {
        reasons.push(cluster_queue_active_reasons::STOPPED);
        parts.push("is stopped".to_string());
    }
    let missing: Vec<&str> = causes
        .iter()
        .filter_map(|cause| match cause {
            InactiveCause::FlavorNotFound(flavor) => Some(flavor.as_str()),
            _ => None,
        })
        .collect();
    if !missing.is_empty() {
        reasons.push(cluster_queue_active_reasons::FLAVOR_NOT_FOUND);
        parts.push(format!(
            "references missing ResourceFlavor(s): {}",
            missing.join(",")
        ));
    }
    for cause in causes {
        match cause {
            InactiveCause::CohortCycle(cohort) => {
                reasons.push(cluster_queue_active_reasons::COHORT_CYCLE_DETECTED);
                parts.push(format!("Cohort \"{cohort}\" has a cycle in hierarchy"));
            }
            InactiveCause::AdmissionCheckNotFound(check) => {
                reasons.push(cluster_queue_active_reasons::ADMISSION_CHECK_NOT_FOUND);
                parts.push(format!("references missing AdmissionCheck(s): {check}"));
            }
            InactiveCause::AdmissionCheckInactive(check) => {
                reasons.push(cluster_queue_active_reasons::ADMISSION_CHECK_INACTIVE);
                parts.push(format!("references inactive AdmissionCheck(s): {check}"));
            }
            InactiveCause::TopologyNotFound(topology) => {
                reasons.push(cluster_queue_active_reasons::TOPOLOGY_NOT_FOUND);
                parts.push(format!("references missing Topology: {topology}"));
            }
            InactiveCause::Terminating
            | InactiveCause::Stopped
            | InactiveCause::FlavorNotFound(_) => {}
        }
    }
    match reasons.first() {
        Some(reason) => (
            reason,
            format!("Can't admit new workloads: {}.", parts.join(", ")),
        ),
        None => (
            cluster_queue_active_reasons::UNKNOWN,
            "Can't admit new workloads.".to_string(),
        ),
    }
}

/// A LocalQueue's status: the `Active` condition (following its ClusterQueue in `report`),
/// workload counts and usage. Its fair-sharing status belongs to Admission Fair Sharing and is
/// kept.
pub fn local_queue_status(
    old: Option<&LocalQueueStatus>,
    report: &QueueReport,
    lq: &LocalQueueReport,
    now: &Time,
    generation: Option<i64>,
) -> LocalQueueStatus {
    let mut status = old.cloned().unwrap_or_default();
    let cannot_submit = "Can't submit new workloads to clusterQueue";
    let (active, reason, message) = if lq.stopped {
        (
            false,
            local_queue_active_reasons::STOPPED,
            "LocalQueue is stopped",
        )
    } else {
        match report.cluster_queue(&lq.cluster_queue) {
            None => (
                false,
                local_queue_active_reasons::CLUSTER_QUEUE_DOES_NOT_EXIST,
                cannot_submit,
            ),
            Some(cq) if !cq.inactive.is_empty() => (
                false,
                local_queue_active_reasons::CLUSTER_QUEUE_IS_INACTIVE,
                cannot_submit,
            ),
            Some(_) => (
                true,
                local_queue_active_reasons::READY,
                "Can submit new workloads to localQueue",
            ),
        }
    };
    let active = (active, reason, message.to_string());
    set_active(&mut status.conditions, active, now, generation);
    let usage = |usage| {
        api_usage(
            usage,
            |r| LocalQueueResourceUsage {
                name: r.resource.clone(),
                total: Some(api_quantity(r.total, &r.resource)),
            },
            |name, resources| LocalQueueFlavorUsage { name, resources },
        )
    };
    // Kueue does not count the pending workloads of a stopped LocalQueue.
    let pending = if lq.stopped { 0 } else { lq.pending };
    status.pending_workloads = Some(count(pending));
    status.reserving_workloads = Some(count(lq.reserving));
    status.admitted_workloads = Some(count(lq.admitted));
    status.flavors_reservation = usage(&lq.reservation);
    status.flavors_usage = usage(&lq.usage);
    status
}

/// `usage` in one of the API's shapes: `flavor` builds a flavor's entry from its name and its
/// resources, each converted by `resource`.
fn api_usage<F, R>(
    usage: &[report::FlavorUsage],
    resource: impl Fn(&report::ResourceUsage) -> R,
    flavor: impl Fn(String, Vec<R>) -> F,
) -> Vec<F> {
    usage
        .iter()
        .map(|f| {
            flavor(
                f.flavor.clone(),
                f.resources.iter().map(&resource).collect(),
            )
        })
        .collect()
}

/// Sets a queue's `Active` condition to (status, reason, message).
fn set_active(
    conditions: &mut Vec<Condition>,
    (active, reason, message): (bool, &str, String),
    now: &Time,
    generation: Option<i64>,
) {
    let desired = Desired {
        type_: condition_types::ACTIVE,
        status: active,
        reason,
        message,
        observed_generation: generation,
    };
    set_condition(conditions, desired, now);
}

/// A Cohort's status: its weighted share while fair sharing is on.
pub fn cohort_status(old: Option<&CohortStatus>, cohort: &CohortReport) -> CohortStatus {
    let mut status = old.cloned().unwrap_or_default();
    status.fair_sharing = fair_sharing(status.fair_sharing.take(), cohort.weighted_share);
    status
}

/// Fair-sharing status with `share` as Kueue stores it: rounded up, `i64::MAX` for an infinite
/// share; none while fair sharing is off. Other fields of `old` are kept.
fn fair_sharing(old: Option<FairSharingStatus>, share: Option<f64>) -> Option<FairSharingStatus> {
    let share = share?;
    let weighted_share = if share.is_infinite() {
        i64::MAX
    } else {
        share.ceil() as i64
    };
    Some(FairSharingStatus {
        weighted_share,
        ..old.unwrap_or_default()
    })
}

/// A count as the API's int32 fields hold it.
fn count(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}
