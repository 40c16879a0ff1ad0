use serde_json::{Value, json};

use super::*;
use crate::engine::features::FeatureGates;
use crate::jobs::OwnerKind;
use crate::jobs::fixtures::default_scope;
use crate::webhooks::review;
use crate::webhooks::tests::apply_patch;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

const NAMESPACE: &str = "team-a";

/// A pod `train` in `team-a` with `labels` and `annotations` merged into its metadata.
fn pod(labels: Value, annotations: Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "train", "namespace": NAMESPACE, "labels": labels,
                     "annotations": annotations},
        "spec": {"containers": [
            {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]},
    })
}

fn queued() -> Value {
    json!({"kueue.x-k8s.io/queue-name": "lq"})
}

fn request(operation: &str, object: &Value, old: Option<&Value>) -> AdmissionRequest {
    let body = json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "1", "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "name": object["metadata"]["name"], "namespace": object["metadata"]["namespace"],
            "operation": operation, "object": object, "oldObject": old,
        }
    });
    review::parse(body.to_string().as_bytes()).expect("a well-formed review")
}

/// Kueue's shipped configuration: `pod` listed, batch Jobs managed, the default namespace
/// selector (everything but `kube-system` and `kueue-system`).
fn with_pods() -> Webhooks {
    Webhooks {
        gates: FeatureGates::default(),
        frameworks: ["batch/job", FRAMEWORK].into_iter().collect(),
        pods: PodSettings {
            plain_pods: true,
            scope: default_scope(false, OwnerKind::new("batch", "v1", "Job")),
            namespaces: NamespaceView::default(),
        },
    }
}

/// The pod as the API server stores it after the defaulting webhook's answer.
#[track_caller]
fn defaulted(webhooks: &Webhooks, object: &Value) -> Value {
    match default(webhooks, &request("CREATE", object, None)) {
        Verdict::Patch(ops) => apply_patch(object.clone(), &ops),
        Verdict::Allow => object.clone(),
        other => panic!("the defaulting webhook refused: {other:?}"),
    }
}

/// Whether the pod holds the admission gate (with TAS, on by default, the topology gate too).
fn admission_gated(pod: &Value) -> bool {
    gates(pod).contains(&"kueue.x-k8s.io/admission")
}

fn gates(pod: &Value) -> Vec<&str> {
    pod["spec"]["schedulingGates"]
        .as_array()
        .map(|g| g.iter().filter_map(|g| g["name"].as_str()).collect())
        .unwrap_or_default()
}

#[track_caller]
fn denial(verdict: Verdict) -> String {
    match verdict {
        Verdict::Deny(message) => message,
        other => panic!("expected a denial, got {other:?}"),
    }
}

#[test]
fn a_queued_pod_is_gated_labelled_and_kept_by_the_finalizer() {
    let created = defaulted(&with_pods(), &pod(queued(), json!({})));
    assert_eq!(
        gates(&created),
        ["kueue.x-k8s.io/admission", "kueue.x-k8s.io/topology"],
        "TopologyAwareScheduling is on by default"
    );
    assert_eq!(
        created["metadata"]["labels"]["kueue.x-k8s.io/managed"],
        "true"
    );
    assert_eq!(
        created["metadata"]["labels"]["kueue.x-k8s.io/queue-name"],
        "lq"
    );
    assert_eq!(
        created["metadata"]["finalizers"],
        json!(["kueue.x-k8s.io/managed"])
    );
    assert!(
        created["metadata"]["annotations"]["kueue.x-k8s.io/role-hash"].is_string(),
        "{created}"
    );
    assert_eq!(
        created["spec"]["containers"],
        pod(queued(), json!({}))["spec"]["containers"],
        "the rest of the pod is untouched"
    );
}

#[test]
fn with_tas_the_topology_gate_and_the_index_label_are_added() {
    let mut webhooks = with_pods();
    webhooks.gates.set(Feature::TopologyAwareScheduling, false);
    let created = defaulted(&webhooks, &pod(queued(), json!({})));
    assert_eq!(gates(&created), ["kueue.x-k8s.io/admission"]);
    webhooks.gates.set(Feature::TopologyAwareScheduling, true);
    let mut labels = queued();
    labels["apps.kubernetes.io/pod-index"] = json!("3");
    let annotations =
        json!({"kueue.x-k8s.io/pod-group-pod-index-label": "apps.kubernetes.io/pod-index"});
    let created = defaulted(&webhooks, &pod(labels, annotations));
    assert_eq!(
        gates(&created),
        ["kueue.x-k8s.io/admission", "kueue.x-k8s.io/topology"]
    );
    assert_eq!(
        created["metadata"]["labels"]["kueue.x-k8s.io/pod-group-pod-index"],
        "3"
    );
}

#[test]
fn a_pod_without_queue_takes_the_namespace_default_local_queue() {
    let mut webhooks = with_pods();
    webhooks.pods.namespaces = NamespaceView::fixed(&[], &[NAMESPACE]);
    let created = defaulted(&webhooks, &pod(json!({}), json!({})));
    assert_eq!(
        created["metadata"]["labels"]["kueue.x-k8s.io/queue-name"],
        "default"
    );
    assert!(admission_gated(&created), "{created}");
    webhooks.pods.namespaces = NamespaceView::fixed(&[], &["elsewhere"]);
    assert_eq!(
        default(
            &webhooks,
            &request("CREATE", &pod(json!({}), json!({})), None)
        ),
        Verdict::Allow,
        "another namespace's default LocalQueue is not this pod's"
    );
}

#[test]
fn pods_outside_the_managed_namespaces_are_untouched() {
    let mut webhooks = with_pods();
    webhooks.pods.scope.manage_without_queue_name = true;
    let mut system = pod(json!({}), json!({}));
    system["metadata"]["namespace"] = json!("kube-system");
    assert_eq!(
        default(&webhooks, &request("CREATE", &system, None)),
        Verdict::Allow,
        "kube-system is not managed, whatever manageJobsWithoutQueueName says"
    );
    let managed = defaulted(&webhooks, &pod(json!({}), json!({})));
    assert!(
        admission_gated(&managed),
        "the same pod in a managed namespace is taken over"
    );

    // A selector on another label reads the namespace's labels from the watch.
    webhooks.pods.scope.namespace_selector = LabelSelector {
        match_labels: Some([("kueue".to_owned(), "on".to_owned())].into()),
        match_expressions: None,
    };
    webhooks.pods.namespaces = NamespaceView::fixed(&[(NAMESPACE, &[("kueue", "off")])], &[]);
    let queued_pod = pod(queued(), json!({}));
    assert_eq!(
        default(&webhooks, &request("CREATE", &queued_pod, None)),
        Verdict::Allow
    );
    webhooks.pods.namespaces = NamespaceView::fixed(&[(NAMESPACE, &[("kueue", "on")])], &[]);
    assert!(admission_gated(&defaulted(&webhooks, &queued_pod)));
}

#[test]
fn pods_of_a_managed_job_kind_are_left_to_their_integration() {
    let mut child = pod(queued(), json!({}));
    child["metadata"]["ownerReferences"] = json!([{"apiVersion": "batch/v1", "kind": "Job",
        "name": "train", "uid": "u", "controller": true}]);
    assert_eq!(
        default(&with_pods(), &request("CREATE", &child, None)),
        Verdict::Allow
    );
    child["metadata"]["ownerReferences"][0]["kind"] = json!("CronJobRun");
    assert!(
        admission_gated(&defaulted(&with_pods(), &child)),
        "an owner of a kind no integration manages does not matter"
    );
}

#[test]
fn a_parent_suspended_pod_is_gated_without_the_finalizer_even_when_pod_is_only_implied() {
    let mut webhooks = with_pods();
    webhooks.pods.plain_pods = false;
    assert_eq!(
        default(
            &webhooks,
            &request("CREATE", &pod(queued(), json!({})), None)
        ),
        Verdict::Allow,
        "with pod only implied by deployment, plain pods are not taken over"
    );
    let mut member = pod(
        json!({}),
        json!({"kueue.x-k8s.io/pod-suspending-parent": "deployment"}),
    );
    member["metadata"]["namespace"] = json!("kube-system");
    let created = defaulted(&webhooks, &member);
    assert!(admission_gated(&created), "{created}");
    assert!(created["metadata"]["finalizers"].is_null(), "{created}");
}

#[test]
fn with_the_integration_disabled_both_webhooks_do_nothing() {
    let mut webhooks = with_pods();
    webhooks.frameworks.remove(FRAMEWORK);
    let queued_pod = pod(queued(), json!({}));
    assert_eq!(
        default(&webhooks, &request("CREATE", &queued_pod, None)),
        Verdict::Allow
    );
    let broken = pod(
        json!({"kueue.x-k8s.io/pod-group-name": "g", "kueue.x-k8s.io/managed": "false"}),
        json!({}),
    );
    assert_eq!(
        validate(&webhooks, &request("CREATE", &broken, None)),
        Verdict::Allow
    );
}

#[test]
fn a_group_member_without_total_count_is_refused_naming_the_annotation() {
    let member = pod(
        json!({"kueue.x-k8s.io/pod-group-name": "training"}),
        json!({}),
    );
    let message = denial(validate(&with_pods(), &request("CREATE", &member, None)));
    assert_eq!(
        message,
        "metadata.annotations[kueue.x-k8s.io/pod-group-total-count]: Required value: both the \
         'kueue.x-k8s.io/pod-group-total-count' annotation and the 'kueue.x-k8s.io/pod-group-name' \
         label should be set"
    );
    let complete = pod(
        json!({"kueue.x-k8s.io/pod-group-name": "training"}),
        json!({"kueue.x-k8s.io/pod-group-total-count": "2"}),
    );
    assert_eq!(
        validate(&with_pods(), &request("CREATE", &complete, None)),
        Verdict::Allow
    );
}

#[test]
fn every_broken_rule_is_listed_as_kubernetes_joins_field_errors() {
    let bad = pod(
        json!({"kueue.x-k8s.io/queue-name": "Not_A_Queue", "kueue.x-k8s.io/managed": "false"}),
        json!({"kueue.x-k8s.io/podset-slice-size": "2"}),
    );
    let message = denial(validate(&with_pods(), &request("CREATE", &bad, None)));
    assert!(
        message.starts_with(
            "[metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"Not_A_Queue\""
        ),
        "{message}"
    );
    assert!(
        message.contains("metadata.labels[kueue.x-k8s.io/managed]: Forbidden"),
        "{message}"
    );
    assert!(
        message.contains("kueue.x-k8s.io/podset-slice-required-topology"),
        "{message}"
    );
    assert!(message.ends_with(']'), "{message}");
}

/// `pod` with the admission gate, as the defaulting webhook left it.
fn gated(mut pod: Value) -> Value {
    pod["spec"]["schedulingGates"] = json!([{"name": "kueue.x-k8s.io/admission"}]);
    pod
}

#[test]
fn the_queue_may_change_only_while_the_pod_waits_for_admission() {
    let moved_labels = json!({"kueue.x-k8s.io/queue-name": "other"});
    // Kueue counts a gated pod as a suspended job, whose queue may change.
    let old = gated(pod(queued(), json!({})));
    let new = gated(pod(moved_labels.clone(), json!({})));
    assert_eq!(
        validate(&with_pods(), &request("UPDATE", &new, Some(&old))),
        Verdict::Allow
    );
    // Once admitted (ungated) it runs, and the queue is fixed.
    let old = pod(queued(), json!({}));
    let new = pod(moved_labels, json!({}));
    assert_eq!(
        denial(validate(&with_pods(), &request("UPDATE", &new, Some(&old)))),
        "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"other\": field is immutable"
    );
}

#[test]
fn a_gated_pod_may_not_drop_its_queue_where_a_default_local_queue_exists() {
    let mut webhooks = with_pods();
    let old = gated(pod(queued(), json!({})));
    let new = gated(pod(json!({}), json!({})));
    assert_eq!(
        validate(&webhooks, &request("UPDATE", &new, Some(&old))),
        Verdict::Allow
    );
    webhooks.pods.namespaces = NamespaceView::fixed(&[], &[NAMESPACE]);
    let message = denial(validate(&webhooks, &request("UPDATE", &new, Some(&old))));
    assert!(
        message.contains("queue-name must not be empty in namespace with default queue"),
        "{message}"
    );
}

#[test]
fn the_group_name_is_fixed_once_set() {
    let member = |name: &str| {
        pod(
            json!({"kueue.x-k8s.io/pod-group-name": name}),
            json!({"kueue.x-k8s.io/pod-group-total-count": "2"}),
        )
    };
    let message = denial(validate(
        &with_pods(),
        &request("UPDATE", &member("other"), Some(&member("training"))),
    ));
    assert_eq!(
        message,
        "metadata.labels[kueue.x-k8s.io/pod-group-name]: Invalid value: \"other\": field is immutable"
    );
}

#[test]
fn a_pod_naming_no_class_takes_the_default_workload_priority_class_unless_a_parent_suspends_it() {
    let mut webhooks = with_pods();
    webhooks.pods.namespaces = NamespaceView::default().with_default_workload_priority_class();
    let out = defaulted(&webhooks, &pod(queued(), json!({})));
    assert_eq!(
        out["metadata"]["labels"]["kueue.x-k8s.io/priority-class"],
        json!("default")
    );
    let by_parent = pod(
        json!({}),
        json!({"kueue.x-k8s.io/pod-suspending-parent": "deployment"}),
    );
    let out = defaulted(&webhooks, &by_parent);
    assert_eq!(
        out["metadata"]["labels"].get("kueue.x-k8s.io/priority-class"),
        None
    );
}
