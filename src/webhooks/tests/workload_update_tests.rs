use serde_json::{Value, json};

use super::*;

const WL: KueueValidating = KueueValidating::Workload;

fn reserved() -> Value {
    workload(json!({"status": reserved_status(2, "2")}))
}

#[test]
fn pod_sets_are_frozen_while_quota_is_reserved() {
    let stored = reserved();
    let mut grown = stored.clone();
    grown["spec"]["podSets"][0]["count"] = json!(3);
    assert_denied(
        validate(WL, &grown, Some(&stored)),
        &["spec.podSets[0]: field is immutable while the Workload holds quota"],
    );
    // Lowering a count is how an elastic job scales down; its admission stays as it was.
    let mut shrunk = stored.clone();
    shrunk["spec"]["podSets"][0]["count"] = json!(1);
    assert_allowed(validate(WL, &shrunk, Some(&stored)));
    let no_elastic = gates(&[(Feature::ElasticJobsViaWorkloadSlices, false)]);
    assert_denied(
        validate_with(&no_elastic, WL, &shrunk, Some(&stored)),
        &["spec.podSets[0]"],
    );
    let pending = workload(json!({}));
    let mut edited = pending.clone();
    edited["spec"]["podSets"][0]["count"] = json!(5);
    assert_allowed(validate(WL, &edited, Some(&pending)));
}

#[test]
fn an_admission_may_be_set_or_cleared_but_not_changed() {
    let stored = reserved();
    let mut moved = stored.clone();
    moved["status"]["admission"]["clusterQueue"] = json!("other");
    assert_denied(
        validate(WL, &moved, Some(&stored)),
        &["status.admission: field is immutable"],
    );
    let pending = workload(json!({}));
    assert_allowed(validate(WL, &stored, Some(&pending)));
    let mut cleared = stored.clone();
    cleared["status"] = json!({});
    assert_allowed(validate(WL, &cleared, Some(&stored)));
    let mut placed = stored.clone();
    placed["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"] = json!({
        "levels": ["kubernetes.io/hostname"],
        "slices": [{"domainCount": 1, "valuesPerLevel": [{"universal": "n1"}],
            "podCounts": {"universal": 2}}],
    });
    assert_allowed(validate(WL, &placed, Some(&stored)));
    let no_tas = gates(&[(Feature::TopologyAwareScheduling, false)]);
    assert_denied(
        validate_with(&no_tas, WL, &placed, Some(&stored)),
        &["status.admission"],
    );
}

#[test]
fn a_workload_already_reserved_without_admission_may_converge() {
    let mut status = reserved_status(2, "2");
    status.as_object_mut().expect("status").remove("admission");
    let stored = workload(json!({"status": status}));
    let mut touched = stored.clone();
    touched["metadata"]["labels"] = json!({"a": "b"});
    assert_allowed(validate(WL, &touched, Some(&stored)));
}

#[test]
fn reclaimable_counts_may_not_shrink_while_reserved() {
    let mut stored = reserved();
    stored["status"]["reclaimablePods"] = json!([{"name": "main", "count": 1}]);
    let mut grown = stored.clone();
    grown["status"]["reclaimablePods"][0]["count"] = json!(2);
    assert_allowed(validate(WL, &grown, Some(&stored)));
    let mut shrunk = stored.clone();
    shrunk["status"]["reclaimablePods"][0]["count"] = json!(0);
    assert_denied(
        validate(WL, &shrunk, Some(&stored)),
        &["status.reclaimablePods[main].count: cannot be less than 1"],
    );
    let mut dropped = stored.clone();
    dropped["status"]["reclaimablePods"] = json!([]);
    assert_denied(
        validate(WL, &dropped, Some(&stored)),
        &["status.reclaimablePods[main]: cannot be removed"],
    );
}

fn with_check(state: &str, node_pool: &str) -> Value {
    workload(
        json!({"status": {"admissionChecks": [{"name": "prov", "state": state, "message": "",
        "lastTransitionTime": "2025-01-01T00:00:00Z",
        "podSetUpdates": [{"name": "main", "nodeSelector": {"pool": node_pool}}]}]}}),
    )
}

#[test]
fn updates_of_a_check_that_stays_ready_are_frozen() {
    assert_denied(
        validate(
            WL,
            &with_check("Ready", "b"),
            Some(&with_check("Ready", "a")),
        ),
        &["status.admissionChecks[0].podSetUpdates: field is immutable while the check is Ready"],
    );
    assert_allowed(validate(
        WL,
        &with_check("Ready", "b"),
        Some(&with_check("Pending", "a")),
    ));
}

fn clusters(nominated: &[&str], name: Option<&str>) -> Value {
    workload(json!({"status": {"nominatedClusterNames": nominated, "clusterName": name}}))
}

#[test]
fn a_cluster_name_is_chosen_among_the_nominated() {
    let stored = clusters(&["east", "west"], None);
    assert_allowed(validate(WL, &clusters(&[], Some("west")), Some(&stored)));
    assert_denied(
        validate(WL, &clusters(&[], Some("north")), Some(&stored)),
        &[
            "status.clusterName: when setting clusterName it must be one of the nominatedClusterNames",
        ],
    );
    let mut replacement = clusters(&[], Some("north"));
    replacement["metadata"]["annotations"] =
        json!({"kueue.x-k8s.io/workload-slice-replacement-for": "ns/w-old"});
    assert_allowed(validate(WL, &replacement, Some(&stored)));
}

fn gated(value: Option<&str>) -> Value {
    let annotations = value.map_or(
        json!({}),
        |v| json!({"kueue.x-k8s.io/admission-gated-by": v}),
    );
    workload(json!({"metadata": {"annotations": annotations}}))
}

#[test]
fn admission_gates_may_only_be_removed() {
    let stored = gated(Some("example.com/a,example.com/b"));
    assert_allowed(validate(WL, &gated(Some("example.com/b")), Some(&stored)));
    assert_allowed(validate(WL, &gated(None), Some(&stored)));
    assert_denied(
        validate(
            WL,
            &gated(Some("example.com/a,example.com/c")),
            Some(&stored),
        ),
        &["can only remove gates, not add new ones"],
    );
    assert_denied(
        validate(WL, &gated(Some("example.com/a")), Some(&gated(None))),
        &["cannot add admission gate after creation"],
    );
}
