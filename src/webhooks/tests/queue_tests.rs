use serde_json::{Value, json};

use super::*;
use crate::api::rule_messages::{
    BORROW_WITHOUT_RECLAIM, BORROWING_LIMIT_WITHOUT_COHORT, PREFERENCE_NEEDS_TRY_NEXT_FLAVOR,
    TOPOLOGY_NEEDS_NODE_LABELS,
};

const CQ: KueueValidating = KueueValidating::ClusterQueue;
const QUOTA: &str = "spec.resourceGroups[0].flavors[0].resources[0]";

fn quota(extra: Value) -> Value {
    let mut resource = json!({"name": "cpu", "nominalQuota": "4"});
    merge(&mut resource, extra);
    json!({"resourceGroups": [{"coveredResources": ["cpu"],
        "flavors": [{"name": "default", "resources": [resource]}]}]})
}

#[test]
fn a_valid_queue_is_allowed() {
    assert_allowed(validate(CQ, &cluster_queue("cq", json!({})), None));
}

#[test]
fn limits_need_a_cohort() {
    let lending = cluster_queue("cq", quota(json!({"lendingLimit": "1"})));
    assert_denied(
        validate(CQ, &lending, None),
        &[&format!(
            "ClusterQueue \"cq\": field {QUOTA}.lendingLimit: must be nil when cohort is empty"
        )],
    );
    let borrowing = cluster_queue("cq", quota(json!({"borrowingLimit": "1"})));
    assert_denied(
        validate(CQ, &borrowing, None),
        &[BORROWING_LIMIT_WITHOUT_COHORT],
    );
    let mut in_cohort = quota(json!({"lendingLimit": "1", "borrowingLimit": "1"}));
    in_cohort["cohortName"] = json!("team");
    assert_allowed(validate(CQ, &cluster_queue("cq", in_cohort), None));
}

#[test]
fn a_lending_limit_stays_within_the_nominal_quota() {
    let mut spec = quota(json!({"lendingLimit": "5"}));
    spec["cohortName"] = json!("team");
    assert_denied(
        validate(CQ, &cluster_queue("cq", spec), None),
        &[&format!(
            "{QUOTA}.lendingLimit: must be less than or equal to the nominalQuota"
        )],
    );
}

#[test]
fn quotas_are_not_negative() {
    let negative = cluster_queue("cq", quota(json!({"nominalQuota": "-1"})));
    assert_denied(
        validate(CQ, &negative, None),
        &[&format!("{QUOTA}.nominalQuota: must not be negative")],
    );
}

#[test]
fn resources_are_named_as_covered_label_keys_once() {
    let misnamed = cluster_queue("cq", quota(json!({"name": "memory"})));
    assert_denied(
        validate(CQ, &misnamed, None),
        &[&format!(
            "{QUOTA}.name: must match the name in coveredResources"
        )],
    );
    let bad_name = cluster_queue(
        "cq",
        json!({"resourceGroups": [{"coveredResources": ["bad name"],
            "flavors": [{"name": "default", "resources": [{"name": "bad name", "nominalQuota": "1"}]}]}]}),
    );
    assert_denied(
        validate(CQ, &bad_name, None),
        &["spec.resourceGroups[0].coveredResources[0]: \"bad name\""],
    );
    let group = |flavor: &str| {
        json!({"coveredResources": ["cpu"],
            "flavors": [{"name": flavor, "resources": [{"name": "cpu", "nominalQuota": "1"}]}]})
    };
    let twice = cluster_queue("cq", json!({"resourceGroups": [group("a"), group("b")]}));
    assert_denied(
        validate(CQ, &twice, None),
        &[
            "spec.resourceGroups[1].coveredResources",
            "covered by more than one group",
        ],
    );
}

#[test]
fn a_positive_weight_must_exceed_one_nano() {
    let tiny = cluster_queue("cq", json!({"fairSharing": {"weight": "1n"}}));
    assert_denied(
        validate(CQ, &tiny, None),
        &["spec.fairSharing.weight: When not 0, weight must be > 10e-9"],
    );
    let zero = cluster_queue("cq", json!({"fairSharing": {"weight": "0"}}));
    assert_allowed(validate(CQ, &zero, None));
}

#[test]
fn the_namespace_selector_is_a_valid_selector() {
    let bad_key = cluster_queue(
        "cq",
        json!({"namespaceSelector": {"matchLabels": {"a b": "x"}}}),
    );
    assert_denied(
        validate(CQ, &bad_key, None),
        &["spec.namespaceSelector.matchLabels"],
    );
    let bad_operator = cluster_queue(
        "cq",
        json!({"namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "Near"}]}}),
    );
    assert_denied(
        validate(CQ, &bad_operator, None),
        &["unsupported operator \"Near\""],
    );
}

#[test]
fn policies_follow_kueues_combination_rules() {
    let borrow = cluster_queue(
        "cq",
        json!({"preemption": {"reclaimWithinCohort": "Never",
            "borrowWithinCohort": {"policy": "LowerPriority"}}}),
    );
    assert_denied(validate(CQ, &borrow, None), &[BORROW_WITHOUT_RECLAIM]);
    let preference = cluster_queue(
        "cq",
        json!({"flavorFungibility": {"preference": "PreemptionOverBorrowing"}}),
    );
    assert_denied(
        validate(CQ, &preference, None),
        &[PREFERENCE_NEEDS_TRY_NEXT_FLAVOR],
    );
}

fn with_check(on_flavors: &[&str], flavor: &str) -> Value {
    json!({
        "admissionChecksStrategy": {"admissionChecks": [{"name": "prov", "onFlavors": on_flavors}]},
        "resourceGroups": [{"coveredResources": ["cpu"],
            "flavors": [{"name": flavor, "resources": [{"name": "cpu", "nominalQuota": "1"}]}]}],
    })
}

#[test]
fn admission_checks_apply_to_flavors_of_the_queue() {
    assert_allowed(validate(
        CQ,
        &cluster_queue("cq", with_check(&["default"], "default")),
        None,
    ));
    let unknown = cluster_queue("cq", with_check(&["default", "gpu"], "default"));
    assert_denied(
        validate(CQ, &unknown, None),
        &[
            "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[1]",
            "\"gpu\" is not a flavor",
        ],
    );
}

#[test]
fn an_unchanged_legacy_on_flavors_entry_survives_an_update() {
    let mut stored = cluster_queue("cq", with_check(&["gpu"], "default"));
    let mut edited = stored.clone();
    edited["spec"]["stopPolicy"] = json!("Hold");
    assert_allowed(validate(CQ, &edited, Some(&stored)));
    let strict = gates(&[(Feature::RejectUpdatesToCQWithInvalidOnFlavors, true)]);
    assert_denied(
        validate_with(&strict, CQ, &edited, Some(&stored)),
        &["onFlavors[0]"],
    );
    // A changed entry, or changed flavors, are checked again.
    stored["spec"]["admissionChecksStrategy"]["admissionChecks"][0]["onFlavors"] = json!(["tpu"]);
    assert_denied(validate(CQ, &edited, Some(&stored)), &["onFlavors[0]"]);
}

fn concurrent(extra: Value) -> Value {
    let mut spec =
        json!({"concurrentAdmissionPolicy": {"migration": {"mode": "TryPreferredFlavors"}}});
    merge(&mut spec, extra);
    cluster_queue("cq", spec)
}

#[test]
fn concurrent_admission_follows_kueues_rules_when_its_gate_is_on() {
    let on = gates(&[(Feature::ConcurrentAdmission, true)]);
    assert_allowed(validate_with(&on, CQ, &concurrent(json!({})), None));
    let strict = concurrent(json!({"queueingStrategy": "StrictFIFO"}));
    assert_denied(
        validate_with(&on, CQ, &strict, None),
        &["spec.queueingStrategy: StrictFIFO queueing strategy cannot be used"],
    );
    assert_allowed(validate(CQ, &strict, None));
    let retain = concurrent(json!({"concurrentAdmissionPolicy": {"migration": {
        "mode": "RetainFirstAdmission", "constraints": {}}}}));
    assert_denied(
        validate_with(&on, CQ, &retain, None),
        &["migration.constraints: may only be set when migration.mode is \"TryPreferredFlavors\""],
    );
    let last = concurrent(json!({"concurrentAdmissionPolicy": {"migration": {
        "constraints": {"lastAcceptableFlavorName": "spot"}}}}));
    assert_denied(
        validate_with(&on, CQ, &last, None),
        &["lastAcceptableFlavorName: must be one of the flavors defined in the ClusterQueue"],
    );
    let mut two_groups = concurrent(json!({}));
    let second = json!({"coveredResources": ["memory"],
        "flavors": [{"name": "mem", "resources": [{"name": "memory", "nominalQuota": "1Gi"}]}]});
    two_groups["spec"]["resourceGroups"]
        .as_array_mut()
        .expect("groups")
        .push(second);
    assert_denied(
        validate_with(&on, CQ, &two_groups, None),
        &["spec.resourceGroups: must have exactly one ResourceGroup"],
    );
}

#[test]
fn the_concurrent_admission_policy_is_immutable() {
    let stored = concurrent(json!({}));
    let changed = concurrent(
        json!({"concurrentAdmissionPolicy": {"migration": {"mode": "RetainFirstAdmission"}}}),
    );
    assert_denied(
        validate(CQ, &changed, Some(&stored)),
        &["spec.concurrentAdmissionPolicy: field is immutable"],
    );
    assert_allowed(validate(CQ, &stored, Some(&stored)));
}

#[test]
fn every_broken_rule_is_reported() {
    let mut spec = with_check(&["gpu"], "default");
    merge(&mut spec, quota(json!({"lendingLimit": "1"})));
    spec["admissionChecksStrategy"] =
        json!({"admissionChecks": [{"name": "p", "onFlavors": ["gpu"]}]});
    let message = denial(validate(CQ, &cluster_queue("cq", spec), None));
    assert!(
        message.contains("lendingLimit") && message.contains("onFlavors[0]"),
        "{message}"
    );
}

fn cohort(spec: Value) -> Value {
    json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort",
        "metadata": {"name": "team"}, "spec": spec})
}

#[test]
fn cohort_limits_need_a_parent_and_may_lend_beyond_nominal() {
    let orphan = cohort(quota(json!({"lendingLimit": "1"})));
    assert_denied(
        validate(KueueValidating::Cohort, &orphan, None),
        &[&format!(
            "Cohort \"team\": field {QUOTA}.lendingLimit: must be nil when parent is empty"
        )],
    );
    let mut child = quota(json!({"lendingLimit": "9"}));
    child["parentName"] = json!("org");
    assert_allowed(validate(KueueValidating::Cohort, &cohort(child), None));
}

fn flavor(spec: Value) -> Value {
    json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
        "metadata": {"name": "f"}, "spec": spec})
}

#[test]
fn flavors_hold_label_syntax_and_unique_taints() {
    const RF: KueueValidating = KueueValidating::ResourceFlavor;
    let good = flavor(json!({
        "nodeLabels": {"cloud.example.com/pool": "spot"},
        "nodeTaints": [{"key": "spot", "value": "true", "effect": "NoSchedule"}],
        "tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}],
    }));
    assert_allowed(validate(RF, &good, None));
    for (spec, fragments) in [
        (
            json!({"nodeLabels": {"pool": "not ok"}}),
            vec!["ResourceFlavor \"f\": field spec.nodeLabels[pool]"],
        ),
        (
            json!({"nodeLabels": {"/pool": "a"}}),
            vec!["field spec.nodeLabels: \"/pool\""],
        ),
        (
            json!({"nodeTaints": [{"key": "a b", "effect": "NoSchedule"}]}),
            vec!["spec.nodeTaints[0].key"],
        ),
        (
            json!({"nodeTaints": [{"key": "a", "value": "x y", "effect": "NoSchedule"}]}),
            vec!["spec.nodeTaints[0].value"],
        ),
        (
            json!({"nodeTaints": [{"key": "a", "effect": "NoSchedule"}, {"key": "a", "value": "v", "effect": "NoSchedule"}]}),
            vec!["spec.nodeTaints[1]: taints must be unique by key and effect pair"],
        ),
        (
            json!({"tolerations": [{"key": "-bad", "operator": "Exists"}]}),
            vec!["spec.tolerations[0].key"],
        ),
        (
            json!({"tolerations": [{"key": "a", "operator": "Exists", "value": "v"}]}),
            vec!["spec.tolerations[0].value: must be empty when operator is Exists"],
        ),
        (
            json!({"topologyName": "default"}),
            vec![TOPOLOGY_NEEDS_NODE_LABELS],
        ),
    ] {
        assert_denied(validate(RF, &flavor(spec), None), &fragments);
    }
}
