use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::PodSpec;

use super::*;

fn spec(json: serde_json::Value) -> PodSpec {
    serde_json::from_value(json).expect("a pod spec")
}

fn reason(result: Result<(), ModelError>) -> String {
    result.expect_err("refused").to_string()
}

#[test]
fn label_maps_need_qualified_keys_and_label_values() {
    let good = BTreeMap::from([
        ("cloud.example.com/pool".to_string(), "a-1".to_string()),
        ("zone".to_string(), String::new()),
    ]);
    assert!(labels("ResourceFlavor", "f", "spec.nodeLabels", &good).is_ok());

    let bad_key = BTreeMap::from([("Bad Key".to_string(), "v".to_string())]);
    let message = reason(labels("ResourceFlavor", "f", "spec.nodeLabels", &bad_key));
    assert!(
        message.contains("ResourceFlavor \"f\": field spec.nodeLabels: \"Bad Key\""),
        "{message}"
    );

    let bad_value = BTreeMap::from([("zone".to_string(), "-a".to_string())]);
    let message = reason(labels("ResourceFlavor", "f", "spec.nodeLabels", &bad_value));
    assert!(message.contains("field spec.nodeLabels[zone]"), "{message}");
}

#[test]
fn pods_is_a_reserved_key_in_requests_and_limits() {
    let pod = spec(serde_json::json!({"containers": [
        {"name": "a", "resources": {"limits": {"pods": "1"}}}
    ]}));
    let message = reason(pod_resources(
        "Workload",
        "ns/w",
        "spec.podSets[0].template.spec",
        &pod,
    ));
    assert!(
        message.contains(
            "field spec.podSets[0].template.spec.containers[0].resources.limits.pods: the key is reserved for internal kueue use"
        ),
        "{message}"
    );
}

#[test]
fn negative_amounts_are_refused_wherever_they_appear() {
    for (pod, field) in [
        (
            serde_json::json!({"containers": [{"name": "a"}],
                "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "-1"}}}]}),
            "initContainers[0].resources.requests.cpu",
        ),
        (
            serde_json::json!({"containers": [{"name": "a", "resources": {"limits": {"memory": "-1Gi"}}}]}),
            "containers[0].resources.limits.memory",
        ),
        (
            serde_json::json!({"containers": [{"name": "a"}], "resources": {"requests": {"cpu": "-100m"}}}),
            "resources.requests.cpu",
        ),
    ] {
        let message = reason(pod_resources("Workload", "ns/w", "t", &spec(pod)));
        assert!(
            message.contains(&format!("field t.{field}: must not be negative")),
            "{message}"
        );
    }
}

#[test]
fn ordinary_pod_resources_pass() {
    let pod = spec(serde_json::json!({"containers": [
        {"name": "a", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2", "example.com/gpu": "1"}}}
    ], "resources": {"limits": {"memory": "1Gi"}}}));
    assert!(pod_resources("Workload", "ns/w", "t", &pod).is_ok());
}
