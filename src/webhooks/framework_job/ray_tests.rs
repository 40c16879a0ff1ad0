//! The Ray kinds through the framework webhook: their own checks only for a job Kueue's Ray
//! webhooks would manage, and a RayJob on an existing cluster needs no Workload.

use serde_json::{Value, json};

use super::*;
use crate::jobs::OwnerKind;
use crate::jobs::fixtures::default_scope;
use crate::jobs::kinds::{RAYCLUSTER, RAYJOB};
use crate::webhooks::review;

fn template() -> Value {
    json!({"spec": {"containers": [{"name": "ray", "image": "ray:2",
        "resources": {"requests": {"cpu": "1"}}}]}})
}

fn cluster_spec(autoscaling: bool) -> Value {
    json!({"enableInTreeAutoscaling": autoscaling,
        "headGroupSpec": {"template": template()},
        "workerGroupSpecs": [{"groupName": "workers", "replicas": 1, "template": template()}]})
}

fn object(kind: &str, labels: Value, spec: Value) -> Value {
    json!({"apiVersion": "ray.io/v1", "kind": kind,
        "metadata": {"name": "ray", "namespace": "team-a", "labels": labels}, "spec": spec})
}

fn webhooks(manage_without_queue_name: bool) -> Webhooks {
    let mut webhooks = Webhooks {
        frameworks: ["ray.io/raycluster", "ray.io/rayjob"].into_iter().collect(),
        ..Webhooks::default()
    };
    webhooks.pods.scope = default_scope(
        manage_without_queue_name,
        OwnerKind::new("ray.io", "v1", "RayJob"),
    );
    webhooks
}

fn create(kind: &dyn JobKind, webhooks: &Webhooks, object: &Value) -> Verdict {
    let body = json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "1", "kind": {"group": "ray.io", "version": "v1", "kind": object["kind"]},
            "name": "ray", "namespace": "team-a", "operation": "CREATE", "object": object}
    });
    let request = review::parse(body.to_string().as_bytes()).expect("a well-formed review");
    validate(kind, webhooks, &request)
}

#[test]
fn autoscaling_is_refused_only_for_a_raycluster_kueue_would_manage() {
    let queued = object(
        "RayCluster",
        json!({"kueue.x-k8s.io/queue-name": "lq"}),
        cluster_spec(true),
    );
    match create(&RAYCLUSTER, &webhooks(false), &queued) {
        Verdict::Deny(message) => {
            assert!(
                message.contains("spec.enableInTreeAutoscaling"),
                "{message}"
            )
        }
        other => panic!("expected a denial, got {other:?}"),
    }
    let unqueued = object("RayCluster", json!({}), cluster_spec(true));
    assert_eq!(
        create(&RAYCLUSTER, &webhooks(false), &unqueued),
        Verdict::Allow
    );
    assert!(matches!(
        create(&RAYCLUSTER, &webhooks(true), &unqueued),
        Verdict::Deny(_)
    ));
    let plain = object(
        "RayCluster",
        json!({"kueue.x-k8s.io/queue-name": "lq"}),
        cluster_spec(false),
    );
    assert_eq!(
        create(&RAYCLUSTER, &webhooks(false), &plain),
        Verdict::Allow
    );
}

#[test]
fn a_queued_rayjob_on_an_existing_cluster_is_allowed_without_a_cluster_spec() {
    let on_existing = object(
        "RayJob",
        json!({"kueue.x-k8s.io/queue-name": "lq"}),
        json!({"clusterSelector": {"ray.io/cluster": "shared"}}),
    );
    assert_eq!(
        create(&RAYJOB, &webhooks(false), &on_existing),
        Verdict::Allow
    );
    let without_cluster = object(
        "RayJob",
        json!({"kueue.x-k8s.io/queue-name": "lq"}),
        json!({"shutdownAfterJobFinishes": true}),
    );
    match create(&RAYJOB, &webhooks(false), &without_cluster) {
        Verdict::Deny(message) => assert!(message.contains("spec.rayClusterSpec"), "{message}"),
        other => panic!("expected a denial, got {other:?}"),
    }
}
