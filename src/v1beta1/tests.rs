//! Named field mappings, with Kueue's `*_conversion_test.go` cases as the reference.

use serde_json::{Value, json};

use super::{Version, convert};
use crate::api::keys::kuota_annotations::CONVERSION_DATA;
use crate::engine::features::{Feature, FeatureGates};

fn gates() -> FeatureGates {
    FeatureGates::default()
}

fn up(object: Value) -> Value {
    convert(object, Version::V1beta2, &gates()).expect("converts to v1beta2")
}

fn down(object: Value) -> Value {
    convert(object, Version::V1beta1, &gates()).expect("converts to v1beta1")
}

/// The object as Kueue's conversion writes it: without kuota's conversion data.
fn as_kueue_writes(mut object: Value) -> Value {
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut)
        && let Some(annotations) = metadata
            .get_mut("annotations")
            .and_then(Value::as_object_mut)
    {
        annotations.remove(CONVERSION_DATA);
        if annotations.is_empty() {
            metadata.remove("annotations");
        }
    }
    object
}

fn has_conversion_data(object: &Value) -> bool {
    object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(CONVERSION_DATA))
        .is_some()
}

fn object(version: &str, kind: &str, body: Value) -> Value {
    let mut object = json!({
        "apiVersion": format!("kueue.x-k8s.io/{version}"),
        "kind": kind,
        "metadata": { "name": "test-object", "namespace": "default" },
    });
    if let (Some(object), Value::Object(body)) = (object.as_object_mut(), body) {
        object.extend(body);
    }
    object
}

/// Asserts Kueue's mapping both ways and that each round trip gives the object back.
fn assert_lossless(v1beta1: &Value) {
    assert_eq!(&down(up(v1beta1.clone())), v1beta1);
}

#[test]
fn cluster_queue_complete_as_kueue_converts_it() {
    let v1beta1 = object(
        "v1beta1",
        "ClusterQueue",
        json!({
            "spec": {
                "cohort": "prod-cohort",
                "admissionChecks": ["multikueue-check"],
                "flavorFungibility": { "whenCanPreempt": "TryNextFlavor", "whenCanBorrow": "MayStopSearch" },
                "queueingStrategy": "StrictFIFO",
            },
            "status": {
                "fairSharing": {
                    "weightedShare": 100,
                    "admissionFairSharingStatus": {
                        "consumedResources": { "cpu": "10" },
                        "lastUpdate": "2025-01-01T00:00:00Z",
                    },
                },
                "conditions": [{ "type": "Active", "status": "True", "reason": "Ready" }],
                "pendingWorkloads": 5,
            },
        }),
    );
    let v1beta2 = up(v1beta1.clone());
    assert_eq!(
        as_kueue_writes(v1beta2.clone()),
        object(
            "v1beta2",
            "ClusterQueue",
            json!({
                "spec": {
                    "cohortName": "prod-cohort",
                    "admissionChecksStrategy": { "admissionChecks": [{ "name": "multikueue-check" }] },
                    "flavorFungibility": { "whenCanPreempt": "TryNextFlavor", "whenCanBorrow": "MayStopSearch" },
                    "queueingStrategy": "StrictFIFO",
                },
                "status": {
                    "fairSharing": { "weightedShare": 100 },
                    "conditions": [{ "type": "Active", "status": "True", "reason": "Ready" }],
                    "pendingWorkloads": 5,
                },
            })
        )
    );
    assert!(has_conversion_data(&v1beta2));
    assert_eq!(down(v1beta2), v1beta1);
}

#[test]
fn cluster_queue_cohort_name_is_cohort_in_v1beta1() {
    let v1beta2 = object(
        "v1beta2",
        "ClusterQueue",
        json!({ "spec": { "cohortName": "team-a" } }),
    );
    let v1beta1 = down(v1beta2.clone());
    assert_eq!(
        v1beta1,
        object(
            "v1beta1",
            "ClusterQueue",
            json!({ "spec": { "cohort": "team-a" } })
        )
    );
    assert_eq!(up(v1beta1), v1beta2);
}

#[test]
fn retired_flavor_fungibility_policies_become_may_stop_search() {
    for (member, retired) in [("whenCanBorrow", "Borrow"), ("whenCanPreempt", "Preempt")] {
        let v1beta1 = object(
            "v1beta1",
            "ClusterQueue",
            json!({ "spec": { "flavorFungibility": { member: retired } } }),
        );
        let v1beta2 = up(v1beta1.clone());
        assert_eq!(
            v1beta2.pointer(&format!("/spec/flavorFungibility/{member}")),
            Some(&json!("MayStopSearch"))
        );
        assert_eq!(down(v1beta2), v1beta1);
    }
}

#[test]
fn a_policy_changed_in_v1beta2_is_not_restored_from_the_conversion_data() {
    let v1beta1 = object(
        "v1beta1",
        "ClusterQueue",
        json!({ "spec": { "flavorFungibility": { "whenCanBorrow": "Borrow" } } }),
    );
    let mut v1beta2 = up(v1beta1);
    v1beta2["spec"]["flavorFungibility"]["whenCanBorrow"] = json!("TryNextFlavor");
    let v1beta1 = down(v1beta2);
    assert_eq!(
        v1beta1.pointer("/spec/flavorFungibility/whenCanBorrow"),
        Some(&json!("TryNextFlavor"))
    );
    assert!(!has_conversion_data(&v1beta1));
}

#[test]
fn admission_checks_strategy_is_kept_without_admission_checks() {
    let strategy = json!({ "admissionChecks": [{ "name": "check", "onFlavors": ["a"] }] });
    let v1beta1 = object(
        "v1beta1",
        "ClusterQueue",
        json!({ "spec": { "admissionChecksStrategy": strategy } }),
    );
    let v1beta2 = up(v1beta1.clone());
    assert_eq!(
        v1beta2.pointer("/spec/admissionChecksStrategy"),
        Some(&strategy)
    );
    assert!(!has_conversion_data(&v1beta2));
    assert_eq!(down(v1beta2), v1beta1);
}

#[test]
fn concurrent_admission_policy_survives_a_trip_through_v1beta1() {
    let v1beta2 = object(
        "v1beta2",
        "ClusterQueue",
        json!({ "spec": { "concurrentAdmissionPolicy": { "migration": { "mode": "RetainFirstAdmission" } } } }),
    );
    let v1beta1 = down(v1beta2.clone());
    assert_eq!(v1beta1.pointer("/spec/concurrentAdmissionPolicy"), None);
    assert!(has_conversion_data(&v1beta1));
    assert_eq!(up(v1beta1), v1beta2);
}

#[test]
fn local_queue_flavor_usage_is_flavors_usage() {
    let usage =
        json!([{ "name": "default-flavor", "resources": [{ "name": "cpu", "total": "10" }] }]);
    let v1beta1 = object(
        "v1beta1",
        "LocalQueue",
        json!({ "spec": { "clusterQueue": "cq" }, "status": { "flavorUsage": usage, "pendingWorkloads": 1 } }),
    );
    let v1beta2 = up(v1beta1.clone());
    assert_eq!(
        v1beta2,
        object(
            "v1beta2",
            "LocalQueue",
            json!({ "spec": { "clusterQueue": "cq" }, "status": { "flavorsUsage": usage, "pendingWorkloads": 1 } })
        )
    );
    assert_eq!(down(v1beta2), v1beta1);
}

#[test]
fn local_queue_flavors_are_only_in_v1beta1() {
    let v1beta1 = object(
        "v1beta1",
        "LocalQueue",
        json!({ "status": { "flavors": [{ "name": "f", "resources": ["cpu"] }] } }),
    );
    let v1beta2 = up(v1beta1.clone());
    assert_eq!(as_kueue_writes(v1beta2.clone())["status"], json!({}));
    assert_lossless(&v1beta1);
}

#[test]
fn admission_check_retry_delay_is_only_in_v1beta1() {
    let v1beta1 = object(
        "v1beta1",
        "AdmissionCheck",
        json!({ "spec": { "controllerName": "c", "retryDelayMinutes": 15 } }),
    );
    let v1beta2 = up(v1beta1.clone());
    assert_eq!(
        as_kueue_writes(v1beta2.clone())["spec"],
        json!({ "controllerName": "c" })
    );
    assert_eq!(down(v1beta2), v1beta1);
}

#[test]
fn workload_accumulated_execution_time_is_renamed() {
    for seconds in [0, 7200] {
        let v1beta1 = object(
            "v1beta1",
            "Workload",
            json!({ "status": { "accumulatedPastExexcutionTimeSeconds": seconds } }),
        );
        let v1beta2 = up(v1beta1.clone());
        assert_eq!(
            v1beta2,
            object(
                "v1beta2",
                "Workload",
                json!({ "status": { "accumulatedPastExecutionTimeSeconds": seconds } })
            )
        );
        assert_eq!(down(v1beta2), v1beta1);
    }
}

#[test]
fn workload_priority_class_source_is_a_reference() {
    let cases = [
        (
            "scheduling.k8s.io/priorityclass",
            json!({ "group": "scheduling.k8s.io", "kind": "PriorityClass", "name": "low" }),
        ),
        (
            "kueue.x-k8s.io/workloadpriorityclass",
            json!({ "group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "low" }),
        ),
    ];
    for (source, reference) in cases {
        let v1beta1 = object(
            "v1beta1",
            "Workload",
            json!({ "spec": { "priority": 100, "priorityClassSource": source, "priorityClassName": "low" } }),
        );
        let v1beta2 = up(v1beta1.clone());
        assert_eq!(
            v1beta2,
            object(
                "v1beta2",
                "Workload",
                json!({ "spec": { "priority": 100, "priorityClassRef": reference } })
            )
        );
        assert_eq!(down(v1beta2), v1beta1);
    }
}

#[test]
fn a_priority_class_without_a_known_source_is_dropped_and_kept_aside() {
    let v1beta1 = object(
        "v1beta1",
        "Workload",
        json!({ "spec": { "priorityClassSource": "", "priorityClassName": "low" } }),
    );
    let v1beta2 = up(v1beta1.clone());
    assert_eq!(as_kueue_writes(v1beta2.clone())["spec"], json!({}));
    assert_eq!(down(v1beta2), v1beta1);
}

#[test]
fn preemption_gates_and_slice_constraints_survive_a_trip_through_v1beta1() {
    let v1beta2 = object(
        "v1beta2",
        "Workload",
        json!({
            "spec": {
                "preemptionGates": [{ "name": "g" }],
                "podSets": [{ "name": "main", "count": 2, "topologyRequest": {
                    "required": "rack",
                    "podsetSliceRequiredTopologyConstraints": [{ "topology": "block", "size": 2 }],
                } }],
            },
            "status": { "preemptionGates": [{ "name": "g", "position": "Open" }] },
        }),
    );
    let v1beta1 = down(v1beta2.clone());
    assert_eq!(
        as_kueue_writes(v1beta1.clone()),
        object(
            "v1beta1",
            "Workload",
            json!({
                "spec": { "podSets": [{ "name": "main", "count": 2, "topologyRequest": { "required": "rack" } }] },
                "status": {},
            })
        )
    );
    assert_eq!(up(v1beta1), v1beta2);
}

fn with_topology_assignment(version: &str, assignment: Value) -> Value {
    object(
        version,
        "Workload",
        json!({ "status": { "admission": { "clusterQueue": "cq", "podSetAssignments": [
            { "name": "main", "topologyAssignment": assignment },
        ] } } }),
    )
}

#[test]
fn topology_domains_are_compact_slices() {
    let domains = json!({ "levels": ["a", "b"], "domains": [
        { "values": ["a1", "b1"], "count": 10 },
        { "values": ["a1", "b2"], "count": 20 },
    ] });
    let slices = json!({ "levels": ["a", "b"], "slices": [{
        "domainCount": 2,
        "valuesPerLevel": [
            { "universal": "a1" },
            { "individual": { "prefix": "b", "roots": ["1", "2"] } },
        ],
        "podCounts": { "individual": [10, 20] },
    }] });
    let v1beta1 = with_topology_assignment("v1beta1", domains);
    let v1beta2 = up(v1beta1.clone());
    assert_eq!(v1beta2, with_topology_assignment("v1beta2", slices));
    assert_eq!(down(v1beta2), v1beta1);
}

#[test]
fn several_slices_list_their_domains_in_order() {
    let slices = json!({ "levels": ["a", "b"], "slices": [
        {
            "domainCount": 2,
            "valuesPerLevel": [
                { "universal": "a1" },
                { "individual": { "prefix": "b", "roots": ["1", "2"] } },
            ],
            "podCounts": { "individual": [10, 20] },
        },
        {
            "domainCount": 2,
            "valuesPerLevel": [
                { "universal": "a2" },
                { "individual": { "roots": ["first", "second"], "suffix": "-in-a2" } },
            ],
            "podCounts": { "universal": 50 },
        },
    ] });
    let v1beta2 = with_topology_assignment("v1beta2", slices);
    let v1beta1 = down(v1beta2.clone());
    assert_eq!(
        as_kueue_writes(v1beta1.clone()),
        with_topology_assignment(
            "v1beta1",
            json!({ "levels": ["a", "b"], "domains": [
                { "values": ["a1", "b1"], "count": 10 },
                { "values": ["a1", "b2"], "count": 20 },
                { "values": ["a2", "first-in-a2"], "count": 50 },
                { "values": ["a2", "second-in-a2"], "count": 50 },
            ] })
        )
    );
    // Kueue would encode these four domains as one slice; the two slices come back unchanged.
    assert!(has_conversion_data(&v1beta1));
    assert_eq!(up(v1beta1), v1beta2);
}

#[test]
fn hostname_runs_follow_the_encoding_gate() {
    let hosts: Vec<Value> = ["x-1", "x-2", "y-1", "y-2"]
        .iter()
        .map(|h| json!({ "values": [h], "count": 1 }))
        .collect();
    let v1beta1 = with_topology_assignment(
        "v1beta1",
        json!({ "levels": ["kubernetes.io/hostname"], "domains": hosts }),
    );
    let slices = |gates: &FeatureGates| {
        let v1beta2 = convert(v1beta1.clone(), Version::V1beta2, gates).expect("converts");
        v1beta2
            .pointer("/status/admission/podSetAssignments/0/topologyAssignment/slices")
            .and_then(Value::as_array)
            .map_or(0, Vec::len)
    };
    let off = gates().with(Feature::TASAssignmentsEncodingByHostnamePrefix, false);
    assert_eq!(slices(&off), 1);
    assert_lossless(&v1beta1);
}

#[test]
fn identical_kinds_change_only_their_api_version() {
    for kind in [
        "ResourceFlavor",
        "Topology",
        "WorkloadPriorityClass",
        "ProvisioningRequestConfig",
    ] {
        let v1beta1 = object("v1beta1", kind, json!({ "spec": { "anything": [1, 2] } }));
        let v1beta2 = up(v1beta1.clone());
        assert_eq!(
            v1beta2,
            object("v1beta2", kind, json!({ "spec": { "anything": [1, 2] } }))
        );
        assert_eq!(down(v1beta2), v1beta1);
    }
}

#[test]
fn an_object_at_the_desired_version_is_returned_as_it_is() {
    let v1beta2 = object(
        "v1beta2",
        "ClusterQueue",
        json!({ "spec": { "cohortName": "x" } }),
    );
    assert_eq!(up(v1beta2.clone()), v1beta2);
}

#[test]
fn bad_input_names_the_object_field_and_reason() {
    let cases = [
        (object("v1", "ClusterQueue", json!({})), "apiVersion"),
        (object("v1beta1", "Job", json!({})), "kind"),
        (
            object(
                "v1beta1",
                "ClusterQueue",
                json!({ "spec": { "admissionChecks": "x" } }),
            ),
            "spec.admissionChecks",
        ),
        (
            with_topology_assignment(
                "v1beta1",
                json!({ "levels": ["a"], "domains": [{ "values": ["a", "b"], "count": 1 }] }),
            ),
            "status.admission.podSetAssignments[0].topologyAssignment.domains[0].values",
        ),
        (
            with_topology_assignment(
                "v1beta1",
                json!({ "levels": ["a"], "domains": [{ "values": ["a"], "count": -1 }] }),
            ),
            "status.admission.podSetAssignments[0].topologyAssignment.domains[0].count",
        ),
        (
            object("v1beta1", "Workload", json!({ "spec": "text" })),
            "spec",
        ),
    ];
    for (input, field) in cases {
        let error = convert(input, Version::V1beta2, &gates()).expect_err("refused");
        assert_eq!(error.field, field, "{error}");
        assert!(error.object.ends_with("default/test-object"), "{error}");
        assert!(!error.reason.is_empty());
    }
    let slices = with_topology_assignment(
        "v1beta2",
        json!({ "levels": ["a"], "slices": [{ "domainCount": 2, "valuesPerLevel": [{ "individual": { "roots": ["x"] } }], "podCounts": { "universal": 1 } }] }),
    );
    let error = convert(slices, Version::V1beta1, &gates()).expect_err("refused");
    assert_eq!(
        error.field,
        "status.admission.podSetAssignments[0].topologyAssignment.slices[0].valuesPerLevel[0]"
    );
    let annotated = json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort",
        "metadata": { "name": "c", "annotations": { CONVERSION_DATA: "{" } },
    });
    let error = convert(annotated, Version::V1beta1, &gates()).expect_err("refused");
    assert_eq!(
        error.field,
        format!("metadata.annotations[{CONVERSION_DATA}]")
    );
    assert_eq!(error.object, "Cohort c");
}
