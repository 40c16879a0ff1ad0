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

/// A Deployment `web` in `team-a` of two replicas with `labels` on its metadata.
fn deployment(labels: Value) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
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
            "uid": "1", "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "name": object["metadata"]["name"], "namespace": object["metadata"]["namespace"],
            "operation": operation, "object": object, "oldObject": old,
        }
    });
    review::parse(body.to_string().as_bytes()).expect("a well-formed review")
}

/// `deployment` listed, which implies `pod`; the default namespace selector.
fn with_deployments() -> Webhooks {
    Webhooks {
        gates: FeatureGates::default(),
        frameworks: [DEPLOYMENT_FRAMEWORK, "pod"].into_iter().collect(),
        pods: PodSettings {
            plain_pods: false,
            scope: default_scope(false, OwnerKind::new("apps", "v1", "Deployment")),
            namespaces: NamespaceView::default(),
        },
    }
}

fn endpoint(mutate: bool) -> Endpoint {
    let integration = INTEGRATIONS
        .iter()
        .find(|i| i.framework == DEPLOYMENT_FRAMEWORK)
        .expect("the deployment integration is served");
    if mutate {
        Endpoint::MutateJob(integration)
    } else {
        Endpoint::ValidateJob(integration)
    }
}

/// The Deployment as the API server stores it after the defaulting webhook's answer.
#[track_caller]
fn defaulted(webhooks: &Webhooks, operation: &str, object: &Value, old: Option<&Value>) -> Value {
    match endpoint(true).decide(webhooks, &request(operation, object, old)) {
        Verdict::Patch(ops) => apply_patch(object.clone(), &ops),
        Verdict::Allow => object.clone(),
        other => panic!("the defaulting webhook refused: {other:?}"),
    }
}

fn validated(webhooks: &Webhooks, object: &Value, old: Option<&Value>) -> Verdict {
    let operation = if old.is_some() { "UPDATE" } else { "CREATE" };
    endpoint(false).decide(webhooks, &request(operation, object, old))
}

/// A pod the Deployment's ReplicaSet would create from its template.
fn pod_from(deployment: &Value) -> Value {
    let template = &deployment["spec"]["template"];
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-5d4f8-x2k9q", "namespace": NAMESPACE,
            "labels": template["metadata"]["labels"],
            "annotations": template["metadata"]["annotations"],
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                 "name": "web-5d4f8", "uid": "rs", "controller": true}],
        },
        "spec": template["spec"],
    })
}

#[test]
fn a_queued_deployments_pods_are_gated_by_the_pod_webhook() {
    let webhooks = with_deployments();
    let created = defaulted(
        &webhooks,
        "CREATE",
        &deployment(json!({"kueue.x-k8s.io/queue-name": "lq"})),
        None,
    );
    let template = &created["spec"]["template"]["metadata"];
    assert_eq!(
        template["labels"],
        json!({"app": "web", "kueue.x-k8s.io/managed": "true", "kueue.x-k8s.io/queue-name": "lq"})
    );
    assert_eq!(
        template["annotations"]["kueue.x-k8s.io/pod-suspending-parent"],
        "deployment"
    );
    assert_eq!(validated(&webhooks, &created, None), Verdict::Allow);

    // `pod` is only implied here, so the Pod webhook takes over this pod because of its parent.
    let pod = pod_from(&created);
    let pod_endpoint = INTEGRATIONS
        .iter()
        .find(|i| i.framework == "pod")
        .map(Endpoint::MutateJob)
        .expect("the pod integration is served");
    let gated = match pod_endpoint.decide(&webhooks, &request("CREATE", &pod, None)) {
        Verdict::Patch(ops) => apply_patch(pod.clone(), &ops),
        other => panic!("the pod was not taken over: {other:?}"),
    };
    let gates: Vec<&str> = gated["spec"]["schedulingGates"]
        .as_array()
        .map(|g| g.iter().filter_map(|g| g["name"].as_str()).collect())
        .unwrap_or_default();
    assert!(gates.contains(&"kueue.x-k8s.io/admission"), "{gated}");
    assert_eq!(
        gated["metadata"]["finalizers"],
        Value::Null,
        "a parent-suspended pod gets no finalizer, as with Kueue's default gates"
    );
}

#[test]
fn a_deployment_naming_no_queue_is_left_alone_unless_a_default_local_queue_exists() {
    let mut webhooks = with_deployments();
    let plain = deployment(json!({}));
    assert_eq!(defaulted(&webhooks, "CREATE", &plain, None), plain);
    webhooks.pods.namespaces = NamespaceView::fixed(&[], &[NAMESPACE]);
    let created = defaulted(&webhooks, "CREATE", &plain, None);
    assert_eq!(
        created["metadata"]["labels"]["kueue.x-k8s.io/queue-name"],
        "default"
    );
    assert_eq!(
        created["spec"]["template"]["metadata"]["labels"]["kueue.x-k8s.io/queue-name"],
        "default"
    );
}

#[test]
fn an_update_that_moves_a_waiting_deployment_carries_the_queue_to_its_pods() {
    let webhooks = with_deployments();
    let old = defaulted(
        &webhooks,
        "CREATE",
        &deployment(json!({"kueue.x-k8s.io/queue-name": "a"})),
        None,
    );
    let mut moved = old.clone();
    moved["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = json!("b");
    let updated = defaulted(&webhooks, "UPDATE", &moved, Some(&old));
    assert_eq!(
        updated["spec"]["template"]["metadata"]["labels"]["kueue.x-k8s.io/queue-name"],
        "b"
    );
    assert_eq!(validated(&webhooks, &updated, Some(&old)), Verdict::Allow);

    let mut running = old.clone();
    running["status"] = json!({"replicas": 2, "readyReplicas": 1});
    assert_eq!(
        validated(&webhooks, &updated, Some(&running)),
        Verdict::Deny(
            "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"b\": field is immutable"
                .into()
        )
    );
}

#[test]
fn every_broken_rule_is_listed_in_one_denial() {
    let webhooks = with_deployments();
    let old = deployment(json!({"kueue.x-k8s.io/queue-name": "lq",
                                "kueue.x-k8s.io/priority-class": "high"}));
    let new = deployment(json!({"kueue.x-k8s.io/queue-name": "Bad_Name"}));
    let Verdict::Deny(message) = validated(&webhooks, &new, Some(&old)) else {
        panic!("refused expected");
    };
    assert!(message.starts_with('['), "{message}");
    assert!(message.contains("Invalid value: \"Bad_Name\""), "{message}");
    assert!(
        message.contains("WorkloadPriorityClass cannot be removed from a workload"),
        "{message}"
    );
}

#[test]
fn with_the_integration_disabled_both_webhooks_do_nothing() {
    let mut webhooks = with_deployments();
    webhooks.frameworks = ["batch/job"].into_iter().collect();
    let queued = deployment(json!({"kueue.x-k8s.io/queue-name": "Bad_Name"}));
    assert_eq!(
        endpoint(true).decide(&webhooks, &request("CREATE", &queued, None)),
        Verdict::Allow
    );
    assert_eq!(validated(&webhooks, &queued, None), Verdict::Allow);
}

#[test]
fn a_deployment_naming_no_class_and_its_pods_take_the_default_workload_priority_class() {
    let mut webhooks = with_deployments();
    webhooks.pods.namespaces = NamespaceView::default().with_default_workload_priority_class();
    let queued = deployment(json!({"kueue.x-k8s.io/queue-name": "lq"}));
    let out = defaulted(&webhooks, "CREATE", &queued, None);
    assert_eq!(
        out["metadata"]["labels"]["kueue.x-k8s.io/priority-class"],
        json!("default")
    );
    assert_eq!(
        out["spec"]["template"]["metadata"]["labels"]["kueue.x-k8s.io/priority-class"],
        json!("default")
    );
    let named = deployment(json!({"kueue.x-k8s.io/queue-name": "lq",
                                  "kueue.x-k8s.io/priority-class": "high"}));
    let out = defaulted(&webhooks, "CREATE", &named, None);
    assert_eq!(
        out["spec"]["template"]["metadata"]["labels"]["kueue.x-k8s.io/priority-class"],
        json!("high")
    );
    let plain = defaulted(&with_deployments(), "CREATE", &queued, None);
    assert_eq!(
        plain["metadata"]["labels"].get("kueue.x-k8s.io/priority-class"),
        None
    );
}
