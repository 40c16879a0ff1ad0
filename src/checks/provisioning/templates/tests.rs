use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Toleration;
use serde_json::json;

use super::*;
use crate::checks::provisioning::fixtures::*;

fn counts(merged: &[MergedPodSet<'_>]) -> Vec<(String, i32)> {
    merged
        .iter()
        .map(|m| (m.pod_set.name.clone(), m.count))
        .collect()
}

#[test]
fn every_pod_set_with_pods_is_covered_when_no_resource_is_named() {
    let workload = workload();
    assert!(request_needed(&workload, &config()).unwrap());
    let merged = merged_pod_sets(&workload, &config()).unwrap();
    assert_eq!(
        counts(&merged),
        [("driver".to_string(), 1), ("workers".to_string(), 4)]
    );
}

#[test]
fn managed_resources_keep_only_the_pod_sets_using_them() {
    let gpus = config_with(json!({"managedResources": ["nvidia.com/gpu"]}));
    let workload = workload();
    assert!(request_needed(&workload, &gpus).unwrap());
    // The workers' GPU is only a limit: a limit counts as using the resource.
    assert_eq!(
        counts(&merged_pod_sets(&workload, &gpus).unwrap()),
        [("workers".to_string(), 4)]
    );
    let tpus = config_with(json!({"managedResources": ["google.com/tpu"]}));
    assert!(!request_needed(&workload, &tpus).unwrap());
    assert!(merged_pod_sets(&workload, &tpus).unwrap().is_empty());
}

#[test]
fn the_admitted_count_wins_and_a_pod_set_admitted_without_pods_is_left_out() {
    let mut value = workload_json();
    value["status"]["admission"]["podSetAssignments"][1]["count"] = json!(0);
    let workload: Workload = serde_json::from_value(value).unwrap();
    assert_eq!(
        counts(&merged_pod_sets(&workload, &config()).unwrap()),
        [("driver".to_string(), 1)]
    );
    let gpus = config_with(json!({"managedResources": ["nvidia.com/gpu"]}));
    assert!(!request_needed(&workload, &gpus).unwrap());
}

#[test]
fn a_pod_set_without_an_assignment_is_an_error_naming_it() {
    let mut value = workload_json();
    value["status"]["admission"]["podSetAssignments"] =
        json!([{"name": "driver", "count": 1, "flavors": {"cpu": "gpu-a"}}]);
    let workload: Workload = serde_json::from_value(value).unwrap();
    let error = merged_pod_sets(&workload, &config()).unwrap_err();
    assert_eq!(
        error,
        ProvisioningError::MissingAssignment {
            workload: ObjectKey::new(NAMESPACE, WORKLOAD),
            pod_set: "workers".into(),
        }
    );
    assert!(error.to_string().contains("\"workers\""), "{error}");
}

/// Three pod sets: `a` and `b` with equal templates, `c` asking for the same cpu written as
/// millicores but with another image.
fn three_pod_sets() -> Workload {
    let pod = |image: &str, cpu: &str| {
        json!({"spec": {"containers": [
            {"name": "c", "image": image, "resources": {"requests": {"cpu": cpu}}}]}})
    };
    let mut value = workload_json();
    value["spec"]["podSets"] = json!([
        {"name": "a", "count": 1, "template": pod("x:1", "1")},
        {"name": "b", "count": 2, "template": pod("x:1", "1")},
        {"name": "c", "count": 3, "template": pod("y:2", "1000m")},
    ]);
    value["status"]["admission"]["podSetAssignments"] = json!([
        {"name": "a", "count": 1}, {"name": "b", "count": 2}, {"name": "c", "count": 3}]);
    serde_json::from_value(value).unwrap()
}

#[test]
fn the_merge_policy_decides_which_pod_sets_share_one() {
    let workload = three_pod_sets();
    let none = merged_pod_sets(&workload, &config()).unwrap();
    assert_eq!(none.len(), 3);
    let identical = config_with(json!({"podSetMergePolicy": "IdenticalPodTemplates"}));
    assert_eq!(
        counts(&merged_pod_sets(&workload, &identical).unwrap()),
        [("a".to_string(), 3), ("c".to_string(), 3)]
    );
    // Only what the scheduler reads counts, and 1000m is 1 cpu.
    let scheduling =
        config_with(json!({"podSetMergePolicy": "IdenticalWorkloadSchedulingRequirements"}));
    assert_eq!(
        counts(&merged_pod_sets(&workload, &scheduling).unwrap()),
        [("a".to_string(), 6)]
    );
}

#[test]
fn scheduling_requirements_differ_on_a_node_selector() {
    let mut value = serde_json::to_value(three_pod_sets()).unwrap();
    value["spec"]["podSets"][2]["template"]["spec"]["nodeSelector"] = json!({"zone": "b"});
    let workload: Workload = serde_json::from_value(value).unwrap();
    let scheduling =
        config_with(json!({"podSetMergePolicy": "IdenticalWorkloadSchedulingRequirements"}));
    assert_eq!(
        counts(&merged_pod_sets(&workload, &scheduling).unwrap()),
        [("a".to_string(), 3), ("c".to_string(), 3)]
    );
}

#[test]
fn a_pod_template_carries_the_flavor_and_limits_as_requests() {
    let workload = workload();
    let merged = merged_pod_sets(&workload, &config()).unwrap();
    let flavors = BTreeMap::from([(
        "gpu-a".to_string(),
        FlavorInfo {
            node_labels: BTreeMap::from([("pool".to_string(), "a100".to_string())]),
            tolerations: vec![Toleration {
                key: Some("gpu".into()),
                operator: Some("Exists".into()),
                ..Toleration::default()
            }],
        },
    )]);
    let template = pod_template(
        &workload,
        &merged[1],
        "ppt-r-workers",
        &flavors,
        &FeatureGates::default(),
    )
    .unwrap();
    let meta = &template.metadata;
    assert_eq!(meta.name.as_deref(), Some("ppt-r-workers"));
    assert_eq!(meta.namespace.as_deref(), Some(NAMESPACE));
    assert_eq!(
        meta.labels.as_ref().unwrap()["kueue.x-k8s.io/managed"],
        "true"
    );
    let owner = &meta.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.uid.as_str()),
        ("Workload", WORKLOAD, WORKLOAD_UID)
    );
    assert_eq!(owner.controller, Some(true));
    let pod = template.template.unwrap();
    assert_eq!(pod.metadata.unwrap().labels.unwrap()["app"], "train");
    let spec = pod.spec.unwrap();
    assert_eq!(spec.node_selector.unwrap()["pool"], "a100");
    assert_eq!(spec.tolerations.unwrap()[0].key.as_deref(), Some("gpu"));
    let requests = spec.containers[0]
        .resources
        .as_ref()
        .unwrap()
        .requests
        .clone()
        .unwrap();
    assert_eq!(requests["cpu"].0, "2");
    assert_eq!(requests["nvidia.com/gpu"].0, "1", "the limit stands in");
}

#[test]
fn a_pod_template_needs_its_flavors() {
    let workload = workload();
    let merged = merged_pod_sets(&workload, &config()).unwrap();
    let error = pod_template(
        &workload,
        &merged[0],
        "ppt-r-driver",
        &BTreeMap::new(),
        &FeatureGates::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&error, ProvisioningError::PodTemplate { pod_set, .. } if pod_set == "driver"),
        "{error:?}"
    );
    assert!(error.to_string().contains("gpu-a"), "{error}");
}
