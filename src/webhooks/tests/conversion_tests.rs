//! The ConversionReview wire format: objects converted to the desired version, and failures that
//! name the object, the field and the reason.

use serde_json::{Value, json};

use crate::engine::features::FeatureGates;
use crate::webhooks::conversion::review;

const UID: &str = "0000-conversion";

fn conversion_review(desired: &str, objects: Vec<Value>) -> Vec<u8> {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": { "uid": UID, "desiredAPIVersion": desired, "objects": objects },
    })
    .to_string()
    .into_bytes()
}

fn cluster_queue(version: &str, spec: Value) -> Value {
    json!({
        "apiVersion": format!("kueue.x-k8s.io/{version}"),
        "kind": "ClusterQueue",
        "metadata": { "name": "cq" },
        "spec": spec,
    })
}

fn answer(body: &[u8]) -> Value {
    review(body, &FeatureGates::default()).expect("a ConversionReview")
}

#[test]
fn every_object_is_converted_to_the_desired_version() {
    let objects = vec![
        cluster_queue("v1beta1", json!({ "cohort": "team" })),
        cluster_queue("v1beta2", json!({ "cohortName": "other" })),
    ];
    let answer = answer(&conversion_review("kueue.x-k8s.io/v1beta2", objects));
    assert_eq!(answer["apiVersion"], "apiextensions.k8s.io/v1");
    assert_eq!(answer["kind"], "ConversionReview");
    let response = &answer["response"];
    assert_eq!(response["uid"], UID);
    assert_eq!(response["result"]["status"], "Success");
    assert_eq!(
        response["convertedObjects"],
        json!([
            cluster_queue("v1beta2", json!({ "cohortName": "team" })),
            cluster_queue("v1beta2", json!({ "cohortName": "other" })),
        ])
    );
}

#[test]
fn objects_convert_down_to_v1beta1() {
    let workload = json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": { "name": "w", "namespace": "ns" },
        "spec": { "priorityClassRef": { "group": "scheduling.k8s.io", "kind": "PriorityClass", "name": "high" } },
        "status": { "accumulatedPastExecutionTimeSeconds": 60 },
    });
    let answer = answer(&conversion_review("kueue.x-k8s.io/v1beta1", vec![workload]));
    assert_eq!(
        answer["response"]["convertedObjects"][0],
        json!({
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "Workload",
            "metadata": { "name": "w", "namespace": "ns" },
            "spec": { "priorityClassSource": "scheduling.k8s.io/priorityclass", "priorityClassName": "high" },
            "status": { "accumulatedPastExexcutionTimeSeconds": 60 },
        })
    );
}

#[test]
fn a_bad_object_fails_the_review_naming_object_field_and_reason() {
    let objects = vec![
        cluster_queue("v1beta1", json!({})),
        cluster_queue("v1beta1", json!({ "admissionChecks": [1] })),
    ];
    let answer = answer(&conversion_review("kueue.x-k8s.io/v1beta2", objects));
    let response = &answer["response"];
    assert_eq!(response["uid"], UID);
    assert_eq!(response["result"]["status"], "Failure");
    assert_eq!(response["convertedObjects"], json!([]));
    assert_eq!(
        response["result"]["message"],
        "objects[1]: ClusterQueue cq: spec.admissionChecks[0]: must be an AdmissionCheck name"
    );
}

#[test]
fn an_unknown_desired_version_fails_the_review() {
    let answer = answer(&conversion_review("kueue.x-k8s.io/v1alpha1", vec![]));
    let result = &answer["response"]["result"];
    assert_eq!(result["status"], "Failure");
    let message = result["message"].as_str().expect("a message");
    assert!(
        message.starts_with("desiredAPIVersion: \"kueue.x-k8s.io/v1alpha1\""),
        "{message}"
    );
}

#[test]
fn a_body_that_is_not_a_conversion_review_is_refused() {
    for body in [
        &b"not json"[..],
        br#"{"request": {"uid": "x"}}"#,
        br#"{"kind": "ConversionReview"}"#,
    ] {
        let message = review(body, &FeatureGates::default()).expect_err("refused");
        assert!(message.contains("ConversionReview"), "{message}");
    }
}
