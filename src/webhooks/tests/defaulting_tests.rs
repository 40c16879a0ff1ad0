use serde_json::json;

use super::*;
use crate::webhooks::review::PatchOp;

const FINALIZER: &str = "kueue.x-k8s.io/resource-in-use";

fn flavor(metadata: serde_json::Value) -> serde_json::Value {
    let mut object = json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
        "metadata": {"name": "f"}, "spec": {}});
    merge(&mut object["metadata"], metadata);
    object
}

#[test]
fn queues_and_flavors_get_the_resource_in_use_finalizer_on_create() {
    let webhooks = Webhooks::default();
    let queue = cluster_queue("cq", json!({}));
    assert_eq!(
        mutate_with(&webhooks, KueueMutating::ClusterQueue, &queue),
        Verdict::Patch(vec![PatchOp::add(
            "/metadata/finalizers",
            json!([FINALIZER])
        )])
    );
    let with_other = flavor(json!({"finalizers": ["example.com/keep"]}));
    assert_eq!(
        mutate_with(&webhooks, KueueMutating::ResourceFlavor, &with_other),
        Verdict::Patch(vec![PatchOp::add(
            "/metadata/finalizers/-",
            json!(FINALIZER)
        )])
    );
}

#[test]
fn a_finalizer_already_there_is_not_added_twice() {
    let has = flavor(json!({"finalizers": [FINALIZER]}));
    assert_eq!(
        mutate_with(&Webhooks::default(), KueueMutating::ResourceFlavor, &has),
        Verdict::Patch(Vec::new())
    );
}

#[test]
fn defaulting_acts_on_create_only() {
    let queue = cluster_queue("cq", json!({}));
    let update = request("UPDATE", &queue, Some(&queue));
    let verdict =
        Endpoint::Mutate(KueueMutating::ClusterQueue).decide(&Webhooks::default(), &update);
    assert_eq!(verdict, Verdict::Allow);
}

fn with_min_counts() -> serde_json::Value {
    workload(json!({"spec": {"podSets": [
        {"name": "a", "count": 4, "minCount": 2, "template": {"spec": {"containers": [{"name": "c"}]}}},
        {"name": "b", "count": 1, "template": {"spec": {"containers": [{"name": "c"}]}}},
        {"name": "c", "count": 3, "minCount": 1, "template": {"spec": {"containers": [{"name": "c"}]}}},
    ]}}))
}

#[test]
fn min_counts_are_dropped_when_partial_admission_is_off() {
    let off = gates(&[(Feature::PartialAdmission, false)]);
    assert_eq!(
        mutate_with(&off, KueueMutating::Workload, &with_min_counts()),
        Verdict::Patch(vec![
            PatchOp::remove("/spec/podSets/0/minCount"),
            PatchOp::remove("/spec/podSets/2/minCount"),
        ])
    );
}

#[test]
fn min_counts_stay_when_partial_admission_is_on() {
    let on = gates(&[(Feature::PartialAdmission, true)]);
    assert_eq!(
        mutate_with(&on, KueueMutating::Workload, &with_min_counts()),
        Verdict::Patch(Vec::new())
    );
}
