use serde_json::{Value, json};

use super::*;

const WL: KueueValidating = KueueValidating::Workload;

fn pod_set(name: &str, count: i32, extra: Value) -> Value {
    let mut pod_set = json!({"name": name, "count": count,
        "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}});
    merge(&mut pod_set, extra);
    pod_set
}

#[test]
fn a_valid_workload_is_allowed() {
    assert_allowed(validate(WL, &workload(json!({})), None));
}

#[test]
fn the_shared_conversion_refuses_reserved_keys_and_bad_counts() {
    let pods_key = workload(
        json!({"spec": {"podSets": [pod_set("main", 1, json!({"template": {"spec": {
        "containers": [{"name": "c", "resources": {"limits": {"pods": "1"}}}]}}}))]}}),
    );
    assert_denied(
        validate(WL, &pods_key, None),
        &[
            "Workload \"ns/w\": field spec.podSets[0].template.spec.containers[0].resources.limits.pods: the key is reserved for internal kueue use",
        ],
    );
    let two_min = workload(json!({"spec": {"podSets": [
        pod_set("a", 2, json!({"minCount": 1})), pod_set("b", 2, json!({"minCount": 1}))]}}));
    assert_denied(
        validate(WL, &two_min, None),
        &["at most one pod set may set minCount"],
    );
    let sliced = workload(json!({"spec": {"podSets": [pod_set("main", 4, json!({
        "topologyRequest": {"podSetSliceSize": 2}}))]}}));
    assert_denied(
        validate(WL, &sliced, None),
        &["podSetSliceSize: may not be set when podSetSliceRequiredTopology is not specified"],
    );
}

#[test]
fn partial_admission_and_elastic_jobs_exclude_each_other() {
    let elastic = workload(json!({
        "metadata": {"annotations": {"kueue.x-k8s.io/elastic-job": "true"}},
        "spec": {"podSets": [pod_set("main", 4, json!({"minCount": 2}))]},
    }));
    assert_denied(
        validate(WL, &elastic, None),
        &["spec.podSets: partial admission and elastic job cannot be used together"],
    );
    let gate_off = gates(&[(Feature::ElasticJobsViaWorkloadSlices, false)]);
    assert_allowed(validate_with(&gate_off, WL, &elastic, None));
}

#[test]
fn pod_template_metadata_is_checked_behind_its_gate() {
    let bad = workload(
        json!({"spec": {"podSets": [pod_set("main", 1, json!({"template": {"metadata": {
        "labels": {"app": "a b"}, "annotations": {"Bad Key": "v"}}}}))]}}),
    );
    assert_denied(
        validate(WL, &bad, None),
        &[
            "spec.podSets[0].template.metadata.labels[app]",
            "spec.podSets[0].template.metadata.annotations: \"Bad Key\"",
        ],
    );
    let off = gates(&[(Feature::WorkloadValidationForPodSetMetadata, false)]);
    assert_allowed(validate_with(&off, WL, &bad, None));
}

#[test]
fn reserved_quota_needs_a_consistent_admission() {
    assert_allowed(validate(
        WL,
        &workload(json!({"status": reserved_status(2, "2")})),
        None,
    ));
    let mut missing = reserved_status(2, "2");
    missing.as_object_mut().expect("status").remove("admission");
    assert_denied(
        validate(WL, &workload(json!({"status": missing})), None),
        &["status.admission: must be set while the QuotaReserved condition is true"],
    );
    let mut stranger = reserved_status(2, "2");
    stranger["admission"]["podSetAssignments"][0]["name"] = json!("other");
    assert_denied(
        validate(WL, &workload(json!({"status": stranger})), None),
        &["status.admission.podSetAssignments[0].name: \"other\" is not a pod set"],
    );
    assert_denied(
        validate(
            WL,
            &workload(json!({"status": reserved_status(2, "1001m")})),
            None,
        ),
        &["status.admission.podSetAssignments[0].resourceUsage.cpu: is not a multiple of 2"],
    );
    let mut bytes = reserved_status(2, "2");
    bytes["admission"]["podSetAssignments"][0]["resourceUsage"]["memory"] = json!("3");
    assert_denied(
        validate(WL, &workload(json!({"status": bytes})), None),
        &["resourceUsage.memory: is not a multiple of 2"],
    );
}

fn condition(type_: &str, status: &str, reason: &str) -> Value {
    json!({"type": type_, "status": status, "reason": reason, "message": "",
        "lastTransitionTime": "2025-01-01T00:00:00Z"})
}

#[test]
fn conditions_follow_kubernetes_rules() {
    let good =
        workload(json!({"status": {"conditions": [condition("Finished", "True", "Succeeded")]}}));
    assert_allowed(validate(WL, &good, None));
    let bad = workload(json!({"status": {"conditions": [
        condition("Finished", "Maybe", "Succeeded"),
        condition("Evicted", "True", "not a reason"),
        condition("Evicted", "True", "Preempted"),
    ]}}));
    assert_denied(
        validate(WL, &bad, None),
        &[
            "status.conditions[0].status: must be True, False or Unknown",
            "status.conditions[1].reason",
            "status.conditions[2].type: \"Evicted\" appears more than once",
        ],
    );
}

#[test]
fn reclaimable_pods_name_pod_sets_within_their_count() {
    let good = workload(json!({"status": {"reclaimablePods": [{"name": "main", "count": 2}]}}));
    assert_allowed(validate(WL, &good, None));
    let bad = workload(json!({"status": {"reclaimablePods": [
        {"name": "other", "count": 1}, {"name": "main", "count": 3}]}}));
    assert_denied(
        validate(WL, &bad, None),
        &[
            "status.reclaimablePods[other].name: must name a pod set",
            "status.reclaimablePods[main].count: should be less or equal to 2",
        ],
    );
}

fn check_with_update(update: Value) -> Value {
    json!({"admissionChecks": [{"name": "prov", "state": "Ready", "message": "",
        "lastTransitionTime": "2025-01-01T00:00:00Z", "podSetUpdates": [update]}]})
}

#[test]
fn admission_check_updates_name_pod_sets_and_hold_valid_metadata() {
    let good = check_with_update(json!({"name": "main", "nodeSelector": {"pool": "a"},
        "tolerations": [{"key": "spot", "operator": "Exists"}]}));
    assert_allowed(validate(WL, &workload(json!({"status": good})), None));
    let bad = check_with_update(json!({"name": "other", "nodeSelector": {"pool": "a b"},
        "annotations": {"-x": "1"}, "tolerations": [{"key": "a b", "operator": "Exists"}]}));
    assert_denied(
        validate(WL, &workload(json!({"status": bad})), None),
        &[
            "status.admissionChecks[0].podSetUpdates[0].name: \"other\" is not a pod set",
            "podSetUpdates[0].nodeSelector[pool]",
            "podSetUpdates[0].annotations: \"-x\"",
            "podSetUpdates[0].tolerations[0].key",
        ],
    );
}

fn gated(value: &str) -> Value {
    workload(json!({"metadata": {"annotations": {"kueue.x-k8s.io/admission-gated-by": value}}}))
}

#[test]
fn admission_gates_are_domain_prefixed_and_unique() {
    assert_allowed(validate(WL, &gated("example.com/a, example.com/b"), None));
    let field = "metadata.annotations[kueue.x-k8s.io/admission-gated-by]";
    for (value, reason) in [
        (
            "example.com/a,example.com/a",
            "duplicate gate name: example.com/a",
        ),
        (
            "example.com/a,,example.com/b",
            "cannot contain empty gate names",
        ),
        ("plain", "must be a domain-prefixed path"),
        ("Example.com/a", "domain must be a DNS-1123 subdomain"),
    ] {
        assert_denied(validate(WL, &gated(value), None), &[field, reason]);
    }
    let long = format!("example.com/{}", "g".repeat(60));
    assert_denied(
        validate(WL, &gated(&long), None),
        &["must have at most 63 characters"],
    );
    let off = gates(&[(Feature::AdmissionGatedBy, false)]);
    assert_allowed(validate_with(&off, WL, &gated("plain"), None));
}

#[test]
fn a_priority_boost_is_a_signed_integer_behind_its_gate() {
    let boosted = |v: &str| {
        workload(json!({"metadata": {"annotations": {"kueue.x-k8s.io/priority-boost": v}}}))
    };
    let on = gates(&[(Feature::PriorityBoost, true)]);
    assert_allowed(validate_with(&on, WL, &boosted("-5"), None));
    assert_denied(
        validate_with(&on, WL, &boosted(""), None),
        &["use \"0\" explicitly, empty string is not allowed"],
    );
    assert_denied(
        validate_with(&on, WL, &boosted("high"), None),
        &["must be a valid signed integer"],
    );
    assert_allowed(validate(WL, &boosted(""), None));
}
