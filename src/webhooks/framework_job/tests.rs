use serde_json::{Value, json};

use super::*;
use crate::jobs::OwnerKind;
use crate::jobs::fixtures::default_scope;
use crate::jobs::kinds::{JOBSET, PYTORCHJOB};
use crate::webhooks::review::{self, PatchOp};

fn jobset(labels: Value, suspend: Option<bool>) -> Value {
    let mut spec = json!({"replicatedJobs": [{"name": "workers", "replicas": 2, "template": {
        "spec": {"parallelism": 1, "completions": 1, "template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}}}]});
    if let Some(suspend) = suspend {
        spec["suspend"] = json!(suspend);
    }
    json!({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
           "metadata": {"name": "train", "namespace": "team-a", "labels": labels},
           "spec": spec})
}

fn pytorchjob(labels: Value) -> Value {
    let template = json!({"spec": {"containers": [{"name": "pytorch",
        "resources": {"requests": {"cpu": "1"}}}]}});
    json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
           "metadata": {"name": "train", "namespace": "team-a", "labels": labels},
           "spec": {"pytorchReplicaSpecs": {
               "Master": {"replicas": 1, "template": template},
               "Worker": {"replicas": 2, "template": template}}}})
}

fn request(kind: &str, operation: &str, object: &Value, old: Option<&Value>) -> AdmissionRequest {
    let body = json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "1", "kind": {"group": "g", "version": "v", "kind": kind},
            "name": "train", "namespace": "team-a", "operation": operation,
            "object": object, "oldObject": old,
        }
    });
    review::parse(body.to_string().as_bytes()).expect("a well-formed review")
}

/// JobSet and PyTorchJob listed, Kueue's default namespace selector.
fn webhooks() -> Webhooks {
    let mut webhooks = Webhooks {
        frameworks: ["jobset.x-k8s.io/jobset", "kubeflow.org/pytorchjob"]
            .into_iter()
            .collect(),
        ..Webhooks::default()
    };
    webhooks.pods.scope = default_scope(
        false,
        OwnerKind::new("jobset.x-k8s.io", "v1alpha2", "JobSet"),
    );
    webhooks
}

fn queued() -> Value {
    json!({"kueue.x-k8s.io/queue-name": "lq"})
}

#[test]
fn a_job_naming_a_queue_is_suspended_on_creation_each_kind_at_its_own_field() {
    let created = request("JobSet", "CREATE", &jobset(queued(), Some(false)), None);
    assert_eq!(
        default(&JOBSET, &webhooks(), &created),
        Verdict::Patch(vec![PatchOp::add("/spec/suspend", json!(true))])
    );
    let created = request("PyTorchJob", "CREATE", &pytorchjob(queued()), None);
    assert_eq!(
        default(&PYTORCHJOB, &webhooks(), &created),
        Verdict::Patch(vec![PatchOp::add(
            "/spec/runPolicy",
            json!({"suspend": true})
        )])
    );
}

#[test]
fn a_job_naming_no_queue_or_of_a_kind_not_enabled_is_left_alone() {
    let unqueued = request("JobSet", "CREATE", &jobset(json!({}), None), None);
    assert_eq!(default(&JOBSET, &webhooks(), &unqueued), Verdict::Allow);
    let disabled = Webhooks {
        frameworks: ["kubeflow.org/pytorchjob"].into_iter().collect(),
        ..webhooks()
    };
    let queued = request("JobSet", "CREATE", &jobset(queued(), None), None);
    assert_eq!(default(&JOBSET, &disabled, &queued), Verdict::Allow);
    let mut bad = jobset(json!({"kueue.x-k8s.io/queue-name": "Not_A_Queue"}), None);
    bad["spec"]["replicatedJobs"] = json!("not a list");
    assert_eq!(
        validate(&JOBSET, &disabled, &request("JobSet", "CREATE", &bad, None)),
        Verdict::Allow
    );
}

#[test]
fn a_job_whose_workload_could_not_be_built_is_refused_naming_the_field() {
    let bad_queue = jobset(
        json!({"kueue.x-k8s.io/queue-name": "Not_A_Queue"}),
        Some(true),
    );
    let Verdict::Deny(message) = validate(
        &JOBSET,
        &webhooks(),
        &request("JobSet", "CREATE", &bad_queue, None),
    ) else {
        panic!("an invalid queue name is refused");
    };
    assert!(message.contains("kueue.x-k8s.io/queue-name"), "{message}");
    let good = jobset(queued(), Some(true));
    assert_eq!(
        validate(
            &JOBSET,
            &webhooks(),
            &request("JobSet", "CREATE", &good, None)
        ),
        Verdict::Allow
    );
}

#[test]
fn the_queue_name_of_a_running_job_is_immutable_and_a_suspended_ones_may_change() {
    let running = jobset(queued(), Some(false));
    let moved = jobset(json!({"kueue.x-k8s.io/queue-name": "other"}), Some(false));
    let Verdict::Deny(message) = validate(
        &JOBSET,
        &webhooks(),
        &request("JobSet", "UPDATE", &moved, Some(&running)),
    ) else {
        panic!("a running JobSet keeps its queue");
    };
    assert!(message.contains("JobSet team-a/train"), "{message}");
    assert!(message.contains("immutable"), "{message}");
    let suspended = jobset(queued(), Some(true));
    let moved = jobset(json!({"kueue.x-k8s.io/queue-name": "other"}), Some(true));
    assert_eq!(
        validate(
            &JOBSET,
            &webhooks(),
            &request("JobSet", "UPDATE", &moved, Some(&suspended))
        ),
        Verdict::Allow
    );
}
