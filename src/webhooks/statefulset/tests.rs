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

/// A StatefulSet `db` in `team-a` of `replicas` replicas with `labels` on its metadata.
fn statefulset(labels: Value, replicas: i32) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "replicas": replicas,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [
                    {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}]},
            },
        },
    })
}

fn request(operation: &str, object: &Value, old: Option<&Value>) -> AdmissionRequest {
    let body = json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "1", "kind": {"group": "apps", "version": "v1", "kind": "StatefulSet"},
            "name": object["metadata"]["name"], "namespace": object["metadata"]["namespace"],
            "operation": operation, "object": object, "oldObject": old,
        }
    });
    review::parse(body.to_string().as_bytes()).expect("a well-formed review")
}

/// `statefulset` listed, which implies `pod`; the default namespace selector.
fn with_statefulsets() -> Webhooks {
    Webhooks {
        gates: FeatureGates::default(),
        frameworks: [STATEFULSET_FRAMEWORK, "pod"].into_iter().collect(),
        pods: PodSettings {
            plain_pods: false,
            scope: default_scope(false, OwnerKind::new("apps", "v1", "StatefulSet")),
            namespaces: NamespaceView::default(),
        },
    }
}

fn endpoint(mutate: bool) -> Endpoint {
    let integration = INTEGRATIONS
        .iter()
        .find(|i| i.framework == STATEFULSET_FRAMEWORK)
        .expect("the statefulset integration is served");
    assert_eq!(
        Endpoint::MutateJob(integration).path(),
        "/mutate-apps-v1-statefulset"
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
fn a_queued_statefulsets_pod_template_is_marked_suspended_by_it() {
    let created = defaulted(
        &with_statefulsets(),
        &statefulset(json!({"kueue.x-k8s.io/queue-name": "lq"}), 3),
    );
    assert_eq!(
        created["spec"]["template"]["metadata"]["annotations"],
        json!({"kueue.x-k8s.io/pod-suspending-parent": "statefulset"})
    );
}

#[test]
fn a_statefulset_naming_no_queue_is_left_alone() {
    let object = statefulset(json!({}), 3);
    assert_eq!(defaulted(&with_statefulsets(), &object), object);
}

#[test]
fn a_disabled_integration_allows_everything_unchanged() {
    let mut webhooks = with_statefulsets();
    webhooks.frameworks.remove(STATEFULSET_FRAMEWORK);
    let object = statefulset(json!({"kueue.x-k8s.io/queue-name": "lq"}), 3);
    assert_eq!(defaulted(&webhooks, &object), object);
    let resized = statefulset(json!({"kueue.x-k8s.io/queue-name": "lq"}), 5);
    assert_eq!(
        validated(&webhooks, &resized, Some(&object)),
        Verdict::Allow
    );
}

#[test]
fn a_managed_statefulset_scales_only_to_and_from_zero() {
    let webhooks = with_statefulsets();
    let queued = json!({"kueue.x-k8s.io/queue-name": "lq"});
    let three = statefulset(queued.clone(), 3);
    match validated(&webhooks, &statefulset(queued.clone(), 5), Some(&three)) {
        Verdict::Deny(message) => assert!(
            message.contains("spec.replicas: Invalid value: \"5\": field is immutable"),
            "{message}"
        ),
        other => panic!("a resize must be refused: {other:?}"),
    }
    let zero = statefulset(queued.clone(), 0);
    assert_eq!(validated(&webhooks, &zero, Some(&three)), Verdict::Allow);
    assert_eq!(validated(&webhooks, &three, Some(&zero)), Verdict::Allow);
}

#[test]
fn a_statefulset_another_framework_suspends_is_not_checked() {
    let webhooks = with_statefulsets();
    let mut object = statefulset(json!({"kueue.x-k8s.io/queue-name": "lq"}), 3);
    object["spec"]["template"]["metadata"]["annotations"] =
        json!({"kueue.x-k8s.io/pod-suspending-parent": "leaderworkerset.x-k8s.io/leaderworkerset"});
    let mut resized = object.clone();
    resized["spec"]["replicas"] = json!(5);
    assert_eq!(defaulted(&webhooks, &object), object);
    assert_eq!(
        validated(&webhooks, &resized, Some(&object)),
        Verdict::Allow
    );
}

/// As Kueue's StatefulSet webhook: an elastic StatefulSet is refused, and admission gates are
/// well formed on creation and only removed afterwards.
#[test]
fn a_statefulsets_elastic_and_admission_gate_annotations_are_checked() {
    let webhooks = with_statefulsets();
    let annotated = |annotations: Value| {
        let mut object = statefulset(json!({"kueue.x-k8s.io/queue-name": "lq"}), 3);
        object["metadata"]["annotations"] = annotations;
        object
    };
    let denied = |verdict: Verdict| match verdict {
        Verdict::Deny(message) => message,
        other => panic!("refused: {other:?}"),
    };
    let elastic = annotated(json!({"kueue.x-k8s.io/elastic-job": "true"}));
    assert!(denied(validated(&webhooks, &elastic, None)).contains("elastic job is not supported"),);
    let malformed = annotated(json!({"kueue.x-k8s.io/admission-gated-by": "a,,b"}));
    assert!(
        denied(validated(&webhooks, &malformed, None)).contains("cannot contain empty gate names")
    );
    let gated = annotated(json!({"kueue.x-k8s.io/admission-gated-by": "example.com/a"}));
    assert_eq!(validated(&webhooks, &gated, None), Verdict::Allow);
    let more =
        annotated(json!({"kueue.x-k8s.io/admission-gated-by": "example.com/a,example.com/b"}));
    assert!(denied(validated(&webhooks, &more, Some(&gated))).contains("can only remove gates"),);
    let plain = annotated(json!({}));
    assert_eq!(validated(&webhooks, &plain, Some(&gated)), Verdict::Allow);
}
