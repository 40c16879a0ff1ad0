//! A check's entry in a Workload's `status.admissionChecks` from its current ProvisioningRequest
//! (Kueue's `syncCheckStates`): `Provisioned` makes it Ready with the pod set updates that send
//! the pods to the capacity; `Failed`, and `BookingExpired` before admission, make it Retry with
//! a backoff while attempts remain and Rejected after; `CapacityRevoked` rejects an active
//! Workload; otherwise it is Pending, showing the autoscaler's progress.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;

use super::names::{Attempt, attempt_of, pod_template_name};
use crate::api::keys::condition_types::{ADMITTED, FINISHED};
use crate::api::keys::provisioning::{
    ACCEPTED, BOOKING_EXPIRED, CAPACITY_REVOKED, CHECK_INACTIVE_MESSAGE, CLASS_ANNOTATION,
    CONSUME_ANNOTATION, FAILED, NO_REQUEST_NEEDED, PROVISIONED,
};
use crate::api::provisioning_request_config::{ProvisioningRequestConfigSpec, Retry};
use crate::api::workload_status::{AdmissionCheckState, CheckState, PodSetUpdate};
use crate::api::{HasConditions, ProvisioningRequest, Workload};

/// What a check's entry is decided from.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// The AdmissionCheck has no valid configuration: the check is inactive.
    Inactive,
    /// No pod set uses a managed resource: nothing to provision.
    NotNeeded,
    /// The check's current request.
    Request(&'a ProvisioningRequest, &'a ProvisioningRequestConfigSpec),
}

/// The entry `current` becomes for `workload` from `source` at `now`.
pub fn next_entry(
    current: &AdmissionCheckState,
    workload: &Workload,
    source: Source<'_>,
    now: &Time,
) -> AdmissionCheckState {
    let mut next = current.clone();
    match source {
        Source::Inactive => {
            next.state = CheckState::Pending;
            next.message = CHECK_INACTIVE_MESSAGE.to_owned();
        }
        Source::NotNeeded => {
            if next.state != CheckState::Ready {
                next.state = CheckState::Ready;
                next.message = NO_REQUEST_NEEDED.to_owned();
                next.pod_set_updates.clear();
            }
        }
        Source::Request(request, config) => from_request(&mut next, workload, request, config),
    }
    if next.state != current.state {
        next.last_transition_time = now.clone();
    }
    next
}

/// The entry from the request's conditions, in Kueue's order of precedence.
fn from_request(
    entry: &mut AdmissionCheckState,
    workload: &Workload,
    request: &ProvisioningRequest,
    config: &ProvisioningRequestConfigSpec,
) {
    let retry = config.retry();
    let attempt =
        attempt_of(&request.name_any(), &workload.name_any(), &entry.name).unwrap_or(Attempt(1));
    let message_of = |type_: &str| {
        request
            .condition(type_)
            .map(|c| c.message.as_str().to_owned())
            .unwrap_or_default()
    };
    if request.condition_is_true(FAILED) {
        retry_or_reject(entry, attempt, retry, "failure", &message_of(FAILED));
    } else if request.condition_is_true(CAPACITY_REVOKED) {
        // Rejected so that the Workload is deactivated: its replacement pods would wait forever
        // for nodes the autoscaler has already removed.
        if workload.spec.active.unwrap_or(true) && !workload.condition_is_true(FINISHED) {
            entry.state = CheckState::Rejected;
            entry.message = message_of(CAPACITY_REVOKED);
        }
    } else if request.condition_is_true(BOOKING_EXPIRED) {
        // Once admitted, the pods hold the capacity: an expired booking changes nothing.
        if !workload.condition_is_true(ADMITTED) {
            retry_or_reject(
                entry,
                attempt,
                retry,
                "booking expired",
                &message_of(BOOKING_EXPIRED),
            );
        }
    } else if request.condition_is_true(PROVISIONED) {
        if entry.state != CheckState::Ready {
            entry.state = CheckState::Ready;
            entry.pod_set_updates = pod_set_updates(workload, request, config);
            entry.message = message_of(PROVISIONED);
        }
    } else if request.condition_is_true(ACCEPTED) {
        // The autoscaler's progress (an estimate of when) is on its Provisioned condition.
        if request.condition(PROVISIONED).is_some() {
            entry.message = message_of(PROVISIONED);
            entry.state = CheckState::Pending;
        }
    } else {
        entry.message = String::new();
        entry.state = CheckState::Pending;
    }
}

/// A failed attempt: Retry with a backoff while `attempt` is within the limit (once per attempt:
/// an attempt the Workload has already been retried for leaves the state alone), else Rejected.
fn retry_or_reject(
    entry: &mut AdmissionCheckState,
    attempt: Attempt,
    retry: Retry,
    what: &str,
    message: &str,
) {
    if attempt.0 <= retry.limit_count {
        entry.message = format!("Retrying after {what}: {message}");
        let retries = entry.retry_count.unwrap_or(0);
        if attempt.0 > retries {
            entry.state = CheckState::Retry;
            entry.requeue_after_seconds = Some(backoff_seconds(
                retries.saturating_add(1),
                retry.base_seconds,
                retry.max_seconds,
            ));
        }
    } else {
        entry.state = CheckState::Rejected;
        entry.message = message.to_owned();
    }
}

/// The wait before retry `retry` (from 1): `base * 2^(retry-1)` seconds, at most `max` (no
/// limit when 0), as Kueue's backoff, whose jitter stays below a second.
pub fn backoff_seconds(retry: i32, base: i32, max: i32) -> i32 {
    let cap = if max == 0 { i64::MAX } else { i64::from(max) };
    let mut next = i64::from(base);
    let mut wait = 0;
    for _ in 0..retry.max(0) {
        wait = next;
        if wait >= cap {
            break;
        }
        next = next.saturating_mul(2).min(cap);
    }
    i32::try_from(wait).unwrap_or(i32::MAX)
}

/// For each pod set of the provisioned request, the Workload's pod set gets the request's name
/// and class as annotations, and the nodeSelector entries the config takes from the request's
/// `provisioningClassDetails` (a detail the request lacks is left out).
pub fn pod_set_updates(
    workload: &Workload,
    request: &ProvisioningRequest,
    config: &ProvisioningRequestConfigSpec,
) -> Vec<PodSetUpdate> {
    let request_name = request.name_any();
    let details = request
        .status
        .as_ref()
        .map(|s| &s.provisioning_class_details);
    request
        .spec
        .pod_sets
        .iter()
        .map(|covered| {
            let name = workload
                .spec
                .pod_sets
                .iter()
                .find(|ps| {
                    pod_template_name(&request_name, &ps.name) == covered.pod_template_ref.name
                })
                .map(|ps| ps.name.clone())
                .unwrap_or_default();
            let mut update = PodSetUpdate {
                name,
                ..PodSetUpdate::default()
            };
            update
                .annotations
                .insert(CONSUME_ANNOTATION.to_owned(), request_name.clone());
            update.annotations.insert(
                CLASS_ANNOTATION.to_owned(),
                request.spec.provisioning_class_name.clone(),
            );
            let selectors = config.pod_set_updates.iter().flat_map(|u| &u.node_selector);
            for selector in selectors {
                match details.and_then(|d| d.get(&selector.value_from_provisioning_class_detail)) {
                    Some(value) => {
                        update
                            .node_selector
                            .insert(selector.key.clone(), value.clone());
                    }
                    None => tracing::info!(
                        request = %request_name,
                        detail = %selector.value_from_provisioning_class_detail,
                        "skipping detail not found in the ProvisioningClassDetails"
                    ),
                }
            }
            update
        })
        .collect()
}

#[cfg(test)]
mod tests;
