use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::checks::provisioning::fixtures::*;
use crate::checks::provisioning::templates::merged_pod_sets;

#[test]
fn a_request_takes_the_configs_class_and_parameters_and_the_workloads_annotations() {
    let workload = workload_with(json!({"metadata": {"annotations": {
        "provreq.kueue.x-k8s.io/ValidUntilSeconds": "60",
        "provreq.kueue.x-k8s.io/maxRunDurationSeconds": "7200",
        "other.example.com/key": "ignored",
    }}}));
    let merged = merged_pod_sets(&workload, &config()).unwrap();
    let request = new_request(&workload, "wl-prov-1", &config(), &merged);
    assert_eq!(request.metadata.name.as_deref(), Some("wl-prov-1"));
    assert_eq!(request.metadata.namespace.as_deref(), Some(NAMESPACE));
    assert_eq!(
        request.metadata.labels.as_ref().unwrap()["kueue.x-k8s.io/managed"],
        "true"
    );
    assert_eq!(
        request.spec.provisioning_class_name,
        "queued-provisioning.gke.io"
    );
    // The Workload's annotation overrides the config's parameter of the same name.
    assert_eq!(
        request.spec.parameters,
        BTreeMap::from([
            ("ValidUntilSeconds".to_string(), "60".to_string()),
            ("maxRunDurationSeconds".to_string(), "7200".to_string()),
        ])
    );
    let pod_sets: Vec<(&str, i32)> = request
        .spec
        .pod_sets
        .iter()
        .map(|p| (p.pod_template_ref.name.as_str(), p.count))
        .collect();
    assert_eq!(
        pod_sets,
        [("ppt-wl-prov-1-driver", 1), ("ppt-wl-prov-1-workers", 4)]
    );
    let owner = &request.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.name.as_str(), owner.uid.as_str()),
        (WORKLOAD, WORKLOAD_UID)
    );
    assert_eq!(owner.block_owner_deletion, Some(true));
    // The whole request as the API receives it: parameters always present.
    let wire = serde_json::to_value(&request).unwrap();
    assert_eq!(wire["apiVersion"], "autoscaling.x-k8s.io/v1");
    assert_eq!(wire["kind"], "ProvisioningRequest");
    assert_eq!(
        wire["spec"]["podSets"][0]["podTemplateRef"]["name"],
        "ppt-wl-prov-1-driver"
    );
}

#[test]
fn a_request_is_in_step_with_its_config_while_class_and_parameters_match() {
    let request = request(1, &[]);
    assert!(synced_with_config(&request, &config()));
    // Extra parameters on the request (from annotations) do not matter.
    assert!(synced_with_config(
        &request,
        &config_with(json!({"parameters": null}))
    ));
    assert!(!synced_with_config(
        &request,
        &config_with(json!({"provisioningClassName": "check-capacity.autoscaling.x-k8s.io"}))
    ));
    assert!(!synced_with_config(
        &request,
        &config_with(json!({"parameters": {"maxRunDurationSeconds": "60"}}))
    ));
    assert!(!synced_with_config(
        &request,
        &config_with(json!({"parameters": {"other": "1"}}))
    ));
}

#[test]
fn the_autoscalers_null_lists_read_as_empty() {
    let read: ProvisioningRequest = serde_json::from_value(json!({
        "apiVersion": "autoscaling.x-k8s.io/v1", "kind": "ProvisioningRequest",
        "metadata": {"name": "r", "namespace": "n"},
        "spec": {"podSets": [{"podTemplateRef": {"name": "t"}, "count": 1}],
                 "provisioningClassName": "c", "parameters": null},
        "status": {"conditions": null, "provisioningClassDetails": null},
    }))
    .unwrap();
    assert!(read.spec.parameters.is_empty());
    assert!(read.status.unwrap().conditions.is_empty());
}
