//! A Workload's `status.admissionChecks`, as Kueue's workload controller keeps them: one entry per
//! check its ClusterQueue's strategy applies, added `Pending` and sorted by name; reset to
//! `Pending` when the Workload is evicted; and what a `Retry` or `Rejected` check means for it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::SignedDuration;

use super::conditions::is_true;
use crate::api::WorkloadStatus;
use crate::api::keys::condition_types;
use crate::api::rare_list::RareList;
use crate::api::workload_status::{AdmissionCheckState, CheckState, DelayedTopologyRequestState};

/// Brings `entries` to exactly the checks `required` names (sorted): a missing one is added
/// `Pending` at `now`, one no longer required is dropped, and the rest keep what their
/// controllers wrote.
pub fn sync(entries: &mut RareList<AdmissionCheckState>, required: &[String], now: &Time) {
    let in_line = entries.len() == required.len()
        && entries
            .iter()
            .zip(required)
            .all(|(e, name)| e.name == *name);
    if in_line {
        return;
    }
    let mut kept: Vec<AdmissionCheckState> = required
        .iter()
        .map(|name| {
            entries
                .iter()
                .find(|e| e.name == *name)
                .cloned()
                .unwrap_or_else(|| AdmissionCheckState {
                    name: name.clone(),
                    state: CheckState::Pending,
                    last_transition_time: now.clone(),
                    message: String::new(),
                    requeue_after_seconds: None,
                    retry_count: None,
                    pod_set_updates: Vec::new(),
                })
        })
        .collect();
    kept.sort_by(|a, b| a.name.cmp(&b.name));
    *entries = kept.into();
}

/// Whether every check said Ready (true without checks).
pub fn all_ready(entries: &[AdmissionCheckState]) -> bool {
    entries.iter().all(|e| e.state == CheckState::Ready)
}

/// Kueue's eviction sets every check back to `Pending`, saying what it was, and counts a retry.
pub fn reset_on_eviction(entries: &mut RareList<AdmissionCheckState>, now: &Time) {
    let reset: Vec<AdmissionCheckState> = entries
        .iter()
        .map(|e| {
            if e.state == CheckState::Pending {
                return e.clone();
            }
            AdmissionCheckState {
                name: e.name.clone(),
                state: CheckState::Pending,
                last_transition_time: now.clone(),
                message: format!(
                    "Reset to Pending after eviction. Previously: {}",
                    e.state.as_str()
                ),
                requeue_after_seconds: e.requeue_after_seconds,
                retry_count: (e.state == CheckState::Retry)
                    .then(|| e.retry_count.unwrap_or(0).saturating_add(1)),
                pod_set_updates: Vec::new(),
            }
        })
        .collect();
    *entries = reset.into();
}

/// What the checks in `state` say, as Kueue words it: `AdmissionCheck in Retry state: "a" (why)`,
/// or `None` when no check is in that state.
pub fn message(entries: &[AdmissionCheckState], state: CheckState) -> Option<String> {
    let mut matching: Vec<&AdmissionCheckState> =
        entries.iter().filter(|e| e.state == state).collect();
    if matching.is_empty() {
        return None;
    }
    matching.sort_by(|a, b| a.name.cmp(&b.name));
    let parts: Vec<String> = matching
        .iter()
        .map(|e| match e.message.as_str() {
            "" => format!("{:?}", e.name),
            why => format!("{:?} ({why})", e.name),
        })
        .collect();
    let noun = if matching.len() > 1 {
        "AdmissionChecks"
    } else {
        "AdmissionCheck"
    };
    Some(format!(
        "{noun} in {} state: {}",
        state.as_str(),
        parts.join("; ")
    ))
}

/// When a Workload evicted for its `Retry` checks may be admitted again: the latest of each such
/// check's transition time plus its `requeueAfterSeconds` (Kueue's `GetMaxRetryTime`); `None`
/// when no check asks for a wait.
pub fn retry_at(entries: &[AdmissionCheckState]) -> Option<Time> {
    entries
        .iter()
        .filter(|e| e.state == CheckState::Retry)
        .filter_map(|e| {
            let seconds = e.requeue_after_seconds?;
            let at = e
                .last_transition_time
                .0
                .checked_add(SignedDuration::from_secs(i64::from(seconds)))
                .ok()?;
            Some(at)
        })
        .max()
        .map(Time)
}

/// What Kueue's workload controller does about a Workload's checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckOutcome {
    /// A check said Rejected: the Workload is marked for deactivation with this message.
    Reject { message: String },
    /// A check said Retry: the Workload is evicted with this message and waits until `until`
    /// (`None`: no check asked for a wait).
    Retry {
        message: String,
        until: Option<Time>,
    },
}

/// What `status`'s checks ask for, as Kueue's `reconcileCheckBasedEviction` reads them: nothing
/// for a Workload already evicted, Rejected before Retry.
pub fn outcome(status: &WorkloadStatus) -> Option<CheckOutcome> {
    if is_true(&status.conditions, condition_types::EVICTED) {
        return None;
    }
    let checks = &status.admission_checks;
    if let Some(rejected) = message(checks, CheckState::Rejected) {
        return Some(CheckOutcome::Reject { message: rejected });
    }
    let retry = message(checks, CheckState::Retry)?;
    Some(CheckOutcome::Retry {
        message: format!("Evicted due to {retry}"),
        until: retry_at(checks),
    })
}

/// Whether a Workload's reservation waits only for the placement of its delayed topology
/// requests (Kueue's `NeedsSecondPass`): it holds quota, it has checks and every one said Ready,
/// a pod set's topology request is still Pending, and it is neither admitted, evicted nor
/// finished.
pub fn awaits_placement(status: &WorkloadStatus) -> bool {
    let Some(admission) = &status.admission else {
        return false;
    };
    let conditions = &status.conditions;
    let pending = admission.pod_set_assignments.iter().any(|a| {
        a.topology_assignment.is_none()
            && a.delayed_topology_request == Some(DelayedTopologyRequestState::Pending)
    });
    pending
        && !status.admission_checks.is_empty()
        && all_ready(&status.admission_checks)
        && ![
            condition_types::ADMITTED,
            condition_types::EVICTED,
            condition_types::FINISHED,
        ]
        .iter()
        .any(|type_| is_true(conditions, type_))
}

#[cfg(test)]
mod tests;
