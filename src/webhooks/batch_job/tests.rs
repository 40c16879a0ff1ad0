use serde_json::{Value, json};

use super::*;
use crate::engine::features::Feature;
use crate::jobs::OwnerKind;
use crate::jobs::fixtures::default_scope;
use crate::webhooks::NamespaceView;
use crate::webhooks::review::{self, PatchOp};

fn job(labels: Value, annotations: Value, suspend: Option<bool>) -> Value {
    let mut spec = json!({
        "parallelism": 3,
        "completions": 3,
        "template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]}},
    });
    if let Some(suspend) = suspend {
        spec["suspend"] = json!(suspend);
    }
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "team-a", "labels": labels,
                     "annotations": annotations},
        "spec": spec,
    })
}

fn request(operation: &str, object: &Value, old: Option<&Value>) -> AdmissionRequest {
    let body = json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "1", "kind": {"group": "batch", "version": "v1", "kind": "Job"},
            "name": "train", "namespace": "team-a", "operation": operation,
            "object": object, "oldObject": old,
        }
    });
    review::parse(body.to_string().as_bytes()).expect("a well-formed review")
}

/// `batch/job` and `jobset` listed, Kueue's default namespace selector.
fn with_jobs() -> Webhooks {
    let mut webhooks = Webhooks {
        frameworks: [FRAMEWORK].into_iter().collect(),
        ..Webhooks::default()
    };
    webhooks.pods.scope = default_scope(
        false,
        OwnerKind::new("jobset.x-k8s.io", "v1alpha2", "JobSet"),
    );
    webhooks
}

fn in_namespace(mut job: Value, namespace: &str) -> Value {
    job["metadata"]["namespace"] = json!(namespace);
    job
}

fn queued() -> Value {
    json!({"kueue.x-k8s.io/queue-name": "lq"})
}

#[test]
fn a_job_naming_a_queue_is_suspended_on_creation() {
    let created = request("CREATE", &job(queued(), json!({}), None), None);
    assert_eq!(
        default(&with_jobs(), &created),
        Verdict::Patch(vec![PatchOp::add("/spec/suspend", json!(true))])
    );
    let running = request("CREATE", &job(queued(), json!({}), Some(false)), None);
    assert_eq!(
        default(&with_jobs(), &running),
        Verdict::Patch(vec![PatchOp::add("/spec/suspend", json!(true))]),
        "suspend: false is overridden, as Kueue does"
    );
}

#[test]
fn jobs_kuota_does_not_manage_are_left_alone() {
    let plain = request("CREATE", &job(json!({}), json!({}), None), None);
    assert_eq!(default(&with_jobs(), &plain), Verdict::Allow);
    let already = request("CREATE", &job(queued(), json!({}), Some(true)), None);
    assert_eq!(default(&with_jobs(), &already), Verdict::Allow);
    let disabled = request("CREATE", &job(queued(), json!({}), None), None);
    assert_eq!(default(&Webhooks::default(), &disabled), Verdict::Allow);
    let mut owned = job(queued(), json!({}), None);
    owned["metadata"]["ownerReferences"] = json!([{"apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet", "name": "js", "uid": "u", "controller": true}]);
    assert_eq!(
        default(&with_jobs(), &request("CREATE", &owned, None)),
        Verdict::Allow,
        "a child Job is suspended by its parent's integration"
    );
}

#[test]
fn an_invalid_queue_name_or_annotation_is_refused_naming_the_job_and_key() {
    let bad_queue = job(
        json!({"kueue.x-k8s.io/queue-name": "Not_A_Queue"}),
        json!({}),
        None,
    );
    let Verdict::Deny(message) = validate(&with_jobs(), &request("CREATE", &bad_queue, None))
    else {
        panic!("an invalid queue name must be refused");
    };
    assert!(
        message.contains("team-a/train") && message.contains("kueue.x-k8s.io/queue-name"),
        "{message}"
    );
    let bad_min = job(
        queued(),
        json!({"kueue.x-k8s.io/job-min-parallelism": "many"}),
        None,
    );
    let Verdict::Deny(message) = validate(&with_jobs(), &request("CREATE", &bad_min, None)) else {
        panic!("a min-parallelism that is not a number must be refused");
    };
    assert!(
        message.contains("kueue.x-k8s.io/job-min-parallelism"),
        "{message}"
    );
}

#[test]
fn a_valid_job_and_a_missing_priority_class_are_accepted() {
    let good = job(queued(), json!({}), None);
    assert_eq!(
        validate(&with_jobs(), &request("CREATE", &good, None)),
        Verdict::Allow
    );
    let mut classed = queued();
    classed["kueue.x-k8s.io/priority-class"] = json!("not-created-yet");
    let later = job(classed, json!({}), None);
    assert_eq!(
        validate(&with_jobs(), &request("CREATE", &later, None)),
        Verdict::Allow,
        "the Workload waits for the class; the Job is not refused"
    );
}

#[test]
fn a_running_job_keeps_its_queue_and_priority_class() {
    let running = job(queued(), json!({}), Some(false));
    let moved = job(
        json!({"kueue.x-k8s.io/queue-name": "other"}),
        json!({}),
        Some(false),
    );
    let Verdict::Deny(message) = validate(&with_jobs(), &request("UPDATE", &moved, Some(&running)))
    else {
        panic!("the queue of a running Job must not change");
    };
    assert!(message.contains("field is immutable"), "{message}");

    let suspended_old = job(queued(), json!({}), Some(true));
    let suspended_new = job(
        json!({"kueue.x-k8s.io/queue-name": "other"}),
        json!({}),
        Some(true),
    );
    assert_eq!(
        validate(
            &with_jobs(),
            &request("UPDATE", &suspended_new, Some(&suspended_old))
        ),
        Verdict::Allow,
        "a suspended Job may move to another queue"
    );

    let mut classed = queued();
    classed["kueue.x-k8s.io/priority-class"] = json!("high");
    let added = job(classed.clone(), json!({}), Some(false));
    assert!(matches!(
        validate(&with_jobs(), &request("UPDATE", &added, Some(&running))),
        Verdict::Deny(m) if m.contains("cannot be added")
    ));
    let removed_from = job(classed, json!({}), Some(true));
    let removed = job(queued(), json!({}), Some(true));
    assert!(matches!(
        validate(&with_jobs(), &request("UPDATE", &removed, Some(&removed_from))),
        Verdict::Deny(m) if m.contains("cannot be removed")
    ));
}

#[test]
fn a_partially_admitted_running_job_keeps_its_parallelism() {
    let partial = json!({"kueue.x-k8s.io/job-min-parallelism": "1"});
    let old = job(queued(), partial.clone(), Some(false));
    let mut new = old.clone();
    new["spec"]["parallelism"] = json!(2);
    assert!(matches!(
        validate(&with_jobs(), &request("UPDATE", &new, Some(&old))),
        Verdict::Deny(m) if m.contains("spec.parallelism")
    ));
}

#[test]
fn with_manage_jobs_without_queue_name_every_job_in_a_selected_namespace_is_suspended() {
    let mut webhooks = with_jobs();
    webhooks.pods.scope.manage_without_queue_name = true;
    let plain = job(json!({}), json!({}), None);
    assert_eq!(
        default(&webhooks, &request("CREATE", &plain, None)),
        Verdict::Patch(vec![PatchOp::add("/spec/suspend", json!(true))])
    );
    let system = in_namespace(plain.clone(), "kube-system");
    assert_eq!(
        default(&webhooks, &request("CREATE", &system, None)),
        Verdict::Allow,
        "kube-system is not selected"
    );
    let mut scheduled = plain;
    scheduled["metadata"]["ownerReferences"] = json!([{"apiVersion": "batch/v1",
        "kind": "CronJob", "name": "nightly", "uid": "u", "controller": true}]);
    assert_eq!(
        default(&webhooks, &request("CREATE", &scheduled, None)),
        Verdict::Patch(vec![PatchOp::add("/spec/suspend", json!(true))]),
        "a CronJob is no integration: its Jobs are top-level"
    );
}

#[test]
fn a_job_naming_no_queue_goes_to_the_namespaces_default_local_queue() {
    let mut webhooks = with_jobs();
    webhooks.pods.namespaces = NamespaceView::fixed(
        &[
            ("team-a", &[("kubernetes.io/metadata.name", "team-a")]),
            (
                "kube-system",
                &[("kubernetes.io/metadata.name", "kube-system")],
            ),
        ],
        &["team-a", "kube-system"],
    );
    let plain = job(json!({}), json!({}), None);
    assert_eq!(
        default(&webhooks, &request("CREATE", &plain, None)),
        Verdict::Patch(vec![
            PatchOp::add(
                "/metadata/labels/kueue.x-k8s.io~1queue-name",
                json!("default")
            ),
            PatchOp::add("/spec/suspend", json!(true)),
        ])
    );
    let system = in_namespace(plain, "kube-system");
    assert_eq!(
        default(&webhooks, &request("CREATE", &system, None)),
        Verdict::Allow,
        "only in a selected namespace"
    );
    let named = job(queued(), json!({}), Some(true));
    assert_eq!(
        default(&webhooks, &request("CREATE", &named, None)),
        Verdict::Allow,
        "a queue named is kept"
    );
}

#[test]
fn an_unmanaged_job_is_not_held_to_the_integrations_rules() {
    let broken = json!({"kueue.x-k8s.io/job-min-parallelism": "0"});
    let plain = job(json!({}), broken.clone(), None);
    assert_eq!(
        validate(&with_jobs(), &request("CREATE", &plain, None)),
        Verdict::Allow
    );
    let mut webhooks = with_jobs();
    webhooks.pods.scope.manage_without_queue_name = true;
    assert!(
        matches!(
            validate(&webhooks, &request("CREATE", &plain, None)),
            Verdict::Deny(_)
        ),
        "managed without a queue name, it is"
    );
}

#[test]
fn the_queue_name_stays_in_a_namespace_with_a_default_local_queue() {
    let old = job(queued(), json!({}), Some(true));
    let unlabelled = job(json!({}), json!({}), Some(true));
    let update = request("UPDATE", &unlabelled, Some(&old));
    assert_eq!(
        validate(&with_jobs(), &update),
        Verdict::Allow,
        "no default LocalQueue: the label may go"
    );
    let mut webhooks = with_jobs();
    webhooks.pods.namespaces = NamespaceView::fixed(&[], &["team-a"]);
    assert_eq!(
        validate(&webhooks, &update),
        Verdict::Deny(
            "Job team-a/train: label kueue.x-k8s.io/queue-name: queue-name must not be empty in \
             namespace with default queue"
                .into()
        )
    );
}

#[test]
fn a_job_naming_no_class_takes_the_default_workload_priority_class_when_it_exists() {
    let mut webhooks = with_jobs();
    webhooks.pods.namespaces = NamespaceView::default().with_default_workload_priority_class();
    // Also over a pod PriorityClass, as in Kueue.
    let mut plain = job(queued(), json!({}), Some(true));
    plain["spec"]["template"]["spec"]["priorityClassName"] = json!("pods-high");
    assert_eq!(
        default(&webhooks, &request("CREATE", &plain, None)),
        Verdict::Patch(vec![PatchOp::add(
            "/metadata/labels/kueue.x-k8s.io~1priority-class",
            json!("default")
        )])
    );
    let named = job(
        json!({"kueue.x-k8s.io/queue-name": "lq", "kueue.x-k8s.io/priority-class": "high"}),
        json!({}),
        Some(true),
    );
    assert_eq!(
        default(&webhooks, &request("CREATE", &named, None)),
        Verdict::Allow,
        "a class named is kept"
    );
    let mut owned = plain.clone();
    owned["metadata"]["ownerReferences"] = json!([{"apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet", "name": "set", "uid": "u", "controller": true}]);
    assert_eq!(
        default(&webhooks, &request("CREATE", &owned, None)),
        Verdict::Allow,
        "a Job of a managed JobSet is its parent's"
    );
    webhooks
        .gates
        .set(Feature::WorkloadPriorityClassDefaulting, false);
    assert_eq!(
        default(&webhooks, &request("CREATE", &plain, None)),
        Verdict::Allow,
        "the gate is off"
    );
    assert_eq!(
        default(&with_jobs(), &request("CREATE", &plain, None)),
        Verdict::Allow,
        "no class named default"
    );
}
