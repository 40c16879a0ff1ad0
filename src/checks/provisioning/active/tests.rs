use serde_json::json;

use super::*;
use crate::checks::provisioning::fixtures::at;

fn check(parameters: serde_json::Value, conditions: serde_json::Value) -> AdmissionCheck {
    serde_json::from_value(json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck",
        "metadata": {"name": "prov", "generation": 3},
        "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request", "parameters": parameters},
        "status": {"conditions": conditions},
    }))
    .unwrap()
}

fn reference(group: &str, kind: &str, name: &str) -> serde_json::Value {
    json!({"apiGroup": group, "kind": kind, "name": name})
}

#[test]
fn the_parameters_must_name_a_provisioning_request_config() {
    let valid = check(
        reference("kueue.x-k8s.io", "ProvisioningRequestConfig", "gpu"),
        json!([]),
    );
    assert!(is_provisioning_check(&valid));
    assert_eq!(config_name(&valid), Ok("gpu"));
    let cases = [
        (json!(null), "missing parameters reference"),
        (
            reference("kueue.x-k8s.io", "ProvisioningRequestConfig", ""),
            "empty name: bad parameters reference",
        ),
        (
            reference("example.com", "ProvisioningRequestConfig", "gpu"),
            "wrong group \"example.com\", expecting \"kueue.x-k8s.io\": bad parameters reference",
        ),
        (
            reference("kueue.x-k8s.io", "MultiKueueConfig", "gpu"),
            "wrong kind \"MultiKueueConfig\", expecting \"ProvisioningRequestConfig\": bad parameters reference",
        ),
    ];
    for (parameters, why) in cases {
        assert_eq!(
            config_name(&check(parameters, json!([]))),
            Err(why.to_string())
        );
    }
}

#[test]
fn a_check_is_active_while_its_config_exists() {
    let prov = check(
        reference("kueue.x-k8s.io", "ProvisioningRequestConfig", "gpu"),
        json!([]),
    );
    let active = active_condition(&prov, |name| name == "gpu", &at(5)).unwrap();
    assert_eq!(
        (
            active.type_.as_str(),
            active.status.as_str(),
            active.reason.as_str()
        ),
        ("Active", "True", "Active")
    );
    assert_eq!(active.message.as_str(), "The admission check is active");
    assert_eq!(active.observed_generation, Some(3));
    assert_eq!(active.last_transition_time, at(5));

    let missing = active_condition(&prov, |_| false, &at(5)).unwrap();
    assert_eq!(
        (missing.status.as_str(), missing.reason.as_str()),
        ("False", "BadParametersRef")
    );
    assert_eq!(
        missing.message.as_str(),
        "provisioningrequestconfigs.kueue.x-k8s.io \"gpu\" not found"
    );
}

#[test]
fn only_a_change_of_status_is_written() {
    let true_since = json!([{"type": "Active", "status": "True", "reason": "Active",
        "message": "The admission check is active", "lastTransitionTime": "2026-03-01T09:00:00Z"}]);
    let prov = check(
        reference("kueue.x-k8s.io", "ProvisioningRequestConfig", "gpu"),
        true_since,
    );
    assert_eq!(active_condition(&prov, |_| true, &at(5)), None);
    let lost = active_condition(&prov, |_| false, &at(5)).unwrap();
    let conditions = with_active(&prov, lost.clone());
    assert_eq!(conditions, vec![lost]);
}
