use serde_json::{Value, json};

use super::*;
use crate::engine::features::FeatureGates;
use crate::jobs::OwnerKind;
use crate::jobs::fixtures::default_scope;
use crate::webhooks::namespaces::NamespaceView;
use crate::webhooks::review;
use crate::webhooks::settings::PodSettings;
use crate::webhooks::tests::apply_patch;
use crate::webhooks::{Endpoint, INTEGRATIONS};

const NAMESPACE: &str = "team-a";

/// A LeaderWorkerSet `lws` in `team-a` of 2 groups of 3 with a leader, `labels` on its metadata.
fn lws(labels: Value) -> Value {
    let template = json!({"spec": {"containers": [
        {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}]}});
    json!({
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "lws", "namespace": NAMESPACE, "labels": labels},
        "spec": {"replicas": 2, "leaderWorkerTemplate": {
            "size": 3, "leaderTemplate": template, "workerTemplate": template}},
    })
}

fn request(operation: &str, object: &Value, old: Option<&Value>) -> AdmissionRequest {
    let body = json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "1",
            "kind": {"group": "leaderworkerset.x-k8s.io", "version": "v1", "kind": "LeaderWorkerSet"},
            "name": object["metadata"]["name"], "namespace": object["metadata"]["namespace"],
            "operation": operation, "object": object, "oldObject": old,
        }
    });
    review::parse(body.to_string().as_bytes()).expect("a well-formed review")
}

fn with_lws() -> Webhooks {
    Webhooks {
        gates: FeatureGates::default(),
        frameworks: [LEADERWORKERSET_FRAMEWORK, "pod"].into_iter().collect(),
        pods: PodSettings {
            plain_pods: false,
            scope: default_scope(
                false,
                OwnerKind::new("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet"),
            ),
            namespaces: NamespaceView::default(),
        },
    }
}

fn endpoint(mutate: bool) -> Endpoint {
    let integration = INTEGRATIONS
        .iter()
        .find(|i| i.framework == LEADERWORKERSET_FRAMEWORK)
        .expect("the leaderworkerset integration is served");
    assert_eq!(
        Endpoint::ValidateJob(integration).path(),
        "/validate-leaderworkerset-x-k8s-io-v1-leaderworkerset"
    );
    if mutate {
        Endpoint::MutateJob(integration)
    } else {
        Endpoint::ValidateJob(integration)
    }
}

#[track_caller]
fn defaulted(webhooks: &Webhooks, object: &Value) -> Value {
    match endpoint(true).decide(webhooks, &request("CREATE", object, None)) {
        Verdict::Patch(ops) => apply_patch(object.clone(), &ops),
        Verdict::Allow => object.clone(),
        other => panic!("the defaulting webhook refused: {other:?}"),
    }
}

fn validated(webhooks: &Webhooks, object: &Value, old: Option<&Value>) -> Verdict {
    let operation = if old.is_some() { "UPDATE" } else { "CREATE" };
    endpoint(false).decide(webhooks, &request(operation, object, old))
}

#[test]
fn a_queued_lws_has_its_pod_templates_marked_and_everything_else_kept() {
    let object = lws(json!({"kueue.x-k8s.io/queue-name": "lq"}));
    let created = defaulted(&with_lws(), &object);
    for template in ["leaderTemplate", "workerTemplate"] {
        let meta = &created["spec"]["leaderWorkerTemplate"][template]["metadata"];
        assert_eq!(meta["labels"]["kueue.x-k8s.io/queue-name"], json!("lq"));
        assert_eq!(
            meta["annotations"]["kueue.x-k8s.io/pod-suspending-parent"],
            json!("leaderworkerset.x-k8s.io/leaderworkerset")
        );
        assert_eq!(
            created["spec"]["leaderWorkerTemplate"][template]["spec"],
            object["spec"]["leaderWorkerTemplate"][template]["spec"]
        );
    }
    assert_eq!(
        created["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]["annotations"]["kueue.x-k8s.io/pod-index-offset"],
        json!("1"),
        "TAS is on by default"
    );
    assert_eq!(created["spec"]["replicas"], json!(2));
}

#[test]
fn an_lws_naming_no_queue_and_a_disabled_integration_are_left_alone() {
    let plain = lws(json!({}));
    assert_eq!(defaulted(&with_lws(), &plain), plain);
    let mut webhooks = with_lws();
    webhooks.frameworks.remove(LEADERWORKERSET_FRAMEWORK);
    let queued = lws(json!({"kueue.x-k8s.io/queue-name": "lq"}));
    assert_eq!(defaulted(&webhooks, &queued), queued);
    let mut resized = queued.clone();
    resized["spec"]["leaderWorkerTemplate"]["size"] = json!(4);
    assert_eq!(
        validated(&webhooks, &resized, Some(&queued)),
        Verdict::Allow
    );
}

#[test]
fn a_managed_lws_may_not_change_its_group_size() {
    let queued = lws(json!({"kueue.x-k8s.io/queue-name": "lq"}));
    assert_eq!(validated(&with_lws(), &queued, None), Verdict::Allow);
    let mut resized = queued.clone();
    resized["spec"]["leaderWorkerTemplate"]["size"] = json!(4);
    match validated(&with_lws(), &resized, Some(&queued)) {
        Verdict::Deny(message) => assert!(
            message.contains(
                "spec.leaderWorkerTemplate.size: Invalid value: \"4\": field is immutable"
            ),
            "{message}"
        ),
        other => panic!("a resize must be refused: {other:?}"),
    }
    let mut scaled = queued.clone();
    scaled["spec"]["replicas"] = json!(5);
    assert_eq!(
        validated(&with_lws(), &scaled, Some(&queued)),
        Verdict::Allow,
        "the number of groups may change"
    );
}

#[test]
fn an_elastic_lws_and_an_admission_gate_added_later_are_refused() {
    let mut webhooks = with_lws();
    webhooks
        .gates
        .set(Feature::ElasticJobsViaWorkloadSlices, true);
    let mut elastic = lws(json!({"kueue.x-k8s.io/queue-name": "lq"}));
    elastic["metadata"]["annotations"] = json!({"kueue.x-k8s.io/elastic-job": "true"});
    match validated(&webhooks, &elastic, None) {
        Verdict::Deny(message) => assert!(
            message.contains("elastic job is not supported for \"leaderworkerset.x-k8s.io/v1, Kind=LeaderWorkerSet\""),
            "{message}"
        ),
        other => panic!("an elastic LeaderWorkerSet must be refused: {other:?}"),
    }
    let queued = lws(json!({"kueue.x-k8s.io/queue-name": "lq"}));
    let mut gated = queued.clone();
    gated["metadata"]["annotations"] =
        json!({"kueue.x-k8s.io/admission-gated-by": "example.com/gate"});
    match validated(&with_lws(), &gated, Some(&queued)) {
        Verdict::Deny(message) => {
            assert!(
                message.contains("cannot add admission gate after creation"),
                "{message}"
            )
        }
        other => panic!("a gate added later must be refused: {other:?}"),
    }
}
