use serde_json::json;

use super::*;
use crate::checks::provisioning::fixtures::*;

/// The `prov` entry of `workload`.
fn entry(workload: &Workload) -> AdmissionCheckState {
    workload.status.as_ref().unwrap().admission_checks[0].clone()
}

/// The entry decided from `request` under `config` for `workload`, at 300 s.
fn decided(
    workload: &Workload,
    request: &ProvisioningRequest,
    config: &ProvisioningRequestConfigSpec,
) -> AdmissionCheckState {
    next_entry(
        &entry(workload),
        workload,
        Source::Request(request, config),
        &at(300),
    )
}

#[test]
fn a_provisioned_request_makes_the_check_ready_with_its_pod_set_updates() {
    let workload = workload();
    let config = config_with(json!({"podSetUpdates": {"nodeSelector": [
        {"key": "cloud.example.com/nodepool", "valueFromProvisioningClassDetail": "nodepool"},
        {"key": "absent", "valueFromProvisioningClassDetail": "missing-detail"},
    ]}}));
    let provisioned = request(1, &[("Provisioned", "True", "capacity is ready")]);
    let next = decided(&workload, &provisioned, &config);
    assert_eq!(next.state, CheckState::Ready);
    assert_eq!(next.message, "capacity is ready");
    assert_eq!(next.last_transition_time, at(300));
    let name = format!("{WORKLOAD}-{CHECK}-1");
    let updates: Vec<_> = next
        .pod_set_updates
        .iter()
        .map(|u| (u.name.as_str(), &u.annotations, &u.node_selector))
        .collect();
    let annotations = std::collections::BTreeMap::from([
        (
            CLASS_ANNOTATION.to_string(),
            "queued-provisioning.gke.io".to_string(),
        ),
        (CONSUME_ANNOTATION.to_string(), name.clone()),
    ]);
    let selector = std::collections::BTreeMap::from([(
        "cloud.example.com/nodepool".to_string(),
        "pool-7".to_string(),
    )]);
    assert_eq!(
        updates,
        [
            ("driver", &annotations, &selector),
            ("workers", &annotations, &selector)
        ]
    );
    // Ready stays Ready: its time and updates do not move.
    let ready = workload_with_entry(serde_json::to_value(&next).unwrap());
    let again = next_entry(
        &entry(&ready),
        &ready,
        Source::Request(&provisioned, &config),
        &at(900),
    );
    assert_eq!(again, next);
}

#[test]
fn a_failed_request_is_retried_with_a_backoff_until_the_limit() {
    let config = config_with(json!({"retryStrategy": {
        "backoffLimitCount": 2, "backoffBaseSeconds": 10, "backoffMaxSeconds": 15}}));
    let failed = |attempt| request(attempt, &[("Failed", "True", "out of stock")]);
    let first = decided(&workload(), &failed(1), &config);
    assert_eq!(first.state, CheckState::Retry);
    assert_eq!(first.message, "Retrying after failure: out of stock");
    assert_eq!(first.requeue_after_seconds, Some(10));
    assert_eq!(first.last_transition_time, at(300));

    // After the eviction reset the entry to Pending with one retry, attempt 1 is old news.
    let reset = workload_with_entry(json!({"name": CHECK, "state": "Pending", "message": "",
        "retryCount": 1, "requeueAfterSeconds": 10,
        "lastTransitionTime": "2026-03-01T10:05:00Z"}));
    let old = decided(&reset, &failed(1), &config);
    assert_eq!(old.state, CheckState::Pending);
    assert_eq!(old.message, "Retrying after failure: out of stock");
    // Attempt 2 fails: retried again, waiting twice as long but no more than the maximum.
    let second = decided(&reset, &failed(2), &config);
    assert_eq!(second.state, CheckState::Retry);
    assert_eq!(second.requeue_after_seconds, Some(15));
    // Attempt 3 is past the limit of 2: rejected with the autoscaler's message.
    let last = decided(&reset, &failed(3), &config);
    assert_eq!(last.state, CheckState::Rejected);
    assert_eq!(last.message, "out of stock");
}

#[test]
fn no_retry_when_the_limit_is_zero() {
    let config = config_with(json!({"retryStrategy": {"backoffLimitCount": 0}}));
    let failed = request(1, &[("Failed", "True", "no capacity")]);
    assert_eq!(
        decided(&workload(), &failed, &config).state,
        CheckState::Rejected
    );
}

#[test]
fn an_expired_booking_retries_only_before_admission() {
    let expired = request(
        1,
        &[
            ("Provisioned", "True", "ok"),
            ("BookingExpired", "True", "too late"),
        ],
    );
    let next = decided(&workload(), &expired, &config());
    assert_eq!(next.state, CheckState::Retry);
    assert_eq!(next.message, "Retrying after booking expired: too late");
    assert_eq!(next.requeue_after_seconds, Some(60));

    let admitted = workload_with_condition("Admitted", "True");
    let ready = {
        let mut value = serde_json::to_value(&admitted).unwrap();
        value["status"]["admissionChecks"][0]["state"] = json!("Ready");
        serde_json::from_value::<Workload>(value).unwrap()
    };
    assert_eq!(decided(&ready, &expired, &config()), entry(&ready));
}

#[test]
fn revoked_capacity_rejects_an_active_unfinished_workload() {
    let revoked = request(
        1,
        &[
            ("Provisioned", "True", "ok"),
            ("CapacityRevoked", "True", "nodes gone"),
        ],
    );
    let next = decided(&workload(), &revoked, &config());
    assert_eq!(
        (next.state, next.message.as_str()),
        (CheckState::Rejected, "nodes gone")
    );
    let finished = workload_with_condition("Finished", "True");
    assert_eq!(decided(&finished, &revoked, &config()), entry(&finished));
    let inactive = workload_with(json!({"spec": {"active": false}}));
    assert_eq!(decided(&inactive, &revoked, &config()), entry(&inactive));
}

#[test]
fn while_the_autoscaler_works_the_check_is_pending_with_its_progress() {
    let accepted = request(
        1,
        &[
            ("Accepted", "True", ""),
            ("Provisioned", "False", "ETA 10:30"),
        ],
    );
    let next = decided(&workload(), &accepted, &config());
    assert_eq!(
        (next.state, next.message.as_str()),
        (CheckState::Pending, "ETA 10:30")
    );
    assert_eq!(
        next.last_transition_time,
        entry(&workload()).last_transition_time
    );
    // Nothing reported yet: a message left over from before is cleared.
    let stale = workload_with_entry(json!({"name": CHECK, "state": "Pending",
        "message": "Error creating ProvisioningRequest", "lastTransitionTime": "2026-03-01T10:02:00Z"}));
    let fresh = decided(&stale, &request(1, &[]), &config());
    assert_eq!(
        (fresh.state, fresh.message.as_str()),
        (CheckState::Pending, "")
    );
}

#[test]
fn an_inactive_check_waits_and_an_unneeded_one_is_ready() {
    let workload = workload();
    let inactive = next_entry(&entry(&workload), &workload, Source::Inactive, &at(1));
    assert_eq!(
        (inactive.state, inactive.message.as_str()),
        (CheckState::Pending, "the check is not active")
    );
    let unneeded = next_entry(&entry(&workload), &workload, Source::NotNeeded, &at(1));
    assert_eq!(
        (unneeded.state, unneeded.message.as_str()),
        (CheckState::Ready, "the provisioning request is not needed")
    );
    assert_eq!(unneeded.last_transition_time, at(1));
}

#[test]
fn the_backoff_doubles_up_to_its_maximum() {
    let waits: Vec<i32> = (1..=7).map(|n| backoff_seconds(n, 60, 1800)).collect();
    assert_eq!(waits, [60, 120, 240, 480, 960, 1800, 1800]);
    assert_eq!(backoff_seconds(3, 10, 0), 40, "no maximum");
    assert_eq!(backoff_seconds(40, 60, 1800), 1800);
}
