use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;

fn at(text: &str) -> Time {
    Time(text.parse().unwrap())
}

#[test]
fn a_target_is_set_once_and_keeps_its_transition_time() {
    let first = deactivation_target(
        &WorkloadStatus::default(),
        "RequeuingLimitExceeded",
        "exceeding the maximum number of re-queuing retries",
        &at("2026-11-23T10:00:00Z"),
        Some(3),
    );
    let target = &first.conditions[0];
    assert_eq!(
        (
            target.type_.as_str(),
            target.status.as_str(),
            target.reason.as_str(),
            target.message.as_str(),
            target.observed_generation,
        ),
        (
            "DeactivationTarget",
            "True",
            "RequeuingLimitExceeded",
            "exceeding the maximum number of re-queuing retries",
            Some(3),
        )
    );
    let again = deactivation_target(
        &first,
        "RequeuingLimitExceeded",
        "exceeding the maximum number of re-queuing retries",
        &at("2026-11-23T11:00:00Z"),
        Some(3),
    );
    assert_eq!(again, first);
}

#[test]
fn only_an_active_target_awaits_deactivation() {
    let mut w = Workload::new("job", Default::default());
    assert!(!awaits_deactivation(&w));
    w.status = Some(deactivation_target(
        &WorkloadStatus::default(),
        "RequeuingLimitExceeded",
        "m",
        &at("2026-11-23T10:00:00Z"),
        None,
    ));
    assert!(awaits_deactivation(&w));
    w.spec.active = Some(false);
    assert!(!awaits_deactivation(&w));
    assert!(is_deactivation_target(&w));
}
