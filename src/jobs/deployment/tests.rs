use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{DeploymentSpec, DeploymentStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use super::*;
use crate::jobs::fixtures::default_scope;
use crate::jobs::{JobScope, OwnerKind};

fn deployment(labels: &[(&str, &str)]) -> Deployment {
    let mut deployment = Deployment::default();
    deployment.metadata.name = Some("web".into());
    deployment.metadata.namespace = Some("team".into());
    if !labels.is_empty() {
        deployment.metadata.labels = Some(
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
    }
    deployment.spec = Some(DeploymentSpec {
        replicas: Some(3),
        ..DeploymentSpec::default()
    });
    deployment
}

fn ready(mut deployment: Deployment, replicas: i32) -> Deployment {
    deployment.status = Some(DeploymentStatus {
        ready_replicas: Some(replicas),
        ..DeploymentStatus::default()
    });
    deployment
}

/// Kueue's default selector for a manager in `kueue-system`.
fn scope(manage_without_queue_name: bool) -> JobScope {
    default_scope(
        manage_without_queue_name,
        OwnerKind::new("apps", "v1", "Deployment"),
    )
}

fn namespace(name: &str) -> BTreeMap<String, String> {
    BTreeMap::from([("kubernetes.io/metadata.name".to_string(), name.to_string())])
}

fn defaulted(
    deployment: &Deployment,
    scope: &JobScope,
    ns: &str,
    default_queue: bool,
) -> Option<Deployment> {
    let labels = namespace(ns);
    default_deployment(
        deployment,
        ParentDefaulting {
            scope,
            namespace_labels: &labels,
            default_local_queue_exists: default_queue,
        },
    )
}

fn template_labels(deployment: &Deployment) -> BTreeMap<String, String> {
    deployment
        .spec
        .as_ref()
        .and_then(|s| s.template.metadata.as_ref())
        .and_then(|m| m.labels.clone())
        .unwrap_or_default()
}

fn template_annotations(deployment: &Deployment) -> BTreeMap<String, String> {
    deployment
        .spec
        .as_ref()
        .and_then(|s| s.template.metadata.as_ref())
        .and_then(|m| m.annotations.clone())
        .unwrap_or_default()
}

#[test]
fn a_queued_deployment_marks_its_pod_template_for_the_pod_webhook() {
    let queued = deployment(&[
        ("kueue.x-k8s.io/queue-name", "lq"),
        ("kueue.x-k8s.io/priority-class", "high"),
    ]);
    let out = defaulted(&queued, &scope(false), "kube-system", false).expect("defaulted");
    assert_eq!(
        template_labels(&out),
        BTreeMap::from([
            ("kueue.x-k8s.io/managed".to_string(), "true".to_string()),
            ("kueue.x-k8s.io/queue-name".to_string(), "lq".to_string()),
            (
                "kueue.x-k8s.io/priority-class".to_string(),
                "high".to_string()
            ),
        ])
    );
    assert_eq!(
        template_annotations(&out).get("kueue.x-k8s.io/pod-suspending-parent"),
        Some(&"deployment".to_string())
    );
    assert_eq!(
        out.metadata, queued.metadata,
        "the Deployment's own labels stay"
    );
    assert_eq!(
        defaulted(&out, &scope(false), "team", false),
        None,
        "defaulting twice changes nothing"
    );
}

#[test]
fn a_changed_queue_is_carried_to_the_template() {
    let first = defaulted(
        &deployment(&[("kueue.x-k8s.io/queue-name", "a")]),
        &scope(false),
        "team",
        false,
    )
    .expect("defaulted");
    let mut moved = first.clone();
    moved
        .metadata
        .labels
        .get_or_insert_default()
        .insert("kueue.x-k8s.io/queue-name".into(), "b".into());
    let out = defaulted(&moved, &scope(false), "team", false).expect("defaulted");
    assert_eq!(
        template_labels(&out).get("kueue.x-k8s.io/queue-name"),
        Some(&"b".to_string())
    );
}

#[test]
fn an_unqueued_deployment_takes_the_default_queue_or_is_left_alone() {
    let plain = deployment(&[]);
    assert_eq!(defaulted(&plain, &scope(false), "team", false), None);
    let out = defaulted(&plain, &scope(false), "team", true).expect("defaulted");
    assert_eq!(
        out.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("kueue.x-k8s.io/queue-name")),
        Some(&"default".to_string())
    );
    assert_eq!(
        template_labels(&out).get("kueue.x-k8s.io/queue-name"),
        Some(&"default".to_string())
    );
    assert_eq!(
        defaulted(&plain, &scope(false), "kube-system", true),
        None,
        "a namespace the selector leaves out keeps its Deployments"
    );
}

#[test]
fn manage_jobs_without_queue_name_marks_an_unqueued_deployment_in_a_selected_namespace() {
    let plain = deployment(&[]);
    let out = defaulted(&plain, &scope(true), "team", false).expect("defaulted");
    let labels = template_labels(&out);
    assert_eq!(
        labels.get("kueue.x-k8s.io/managed"),
        Some(&"true".to_string())
    );
    assert!(!labels.contains_key("kueue.x-k8s.io/queue-name"));
    assert_eq!(defaulted(&plain, &scope(true), "kube-system", false), None);
}

#[test]
fn a_deployment_owned_by_a_managed_parent_is_left_to_it() {
    let mut child = deployment(&[("kueue.x-k8s.io/queue-name", "lq")]);
    child.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        name: "parent".into(),
        uid: "uid".into(),
        controller: Some(true),
        ..OwnerReference::default()
    }]);
    assert_eq!(defaulted(&child, &scope(true), "team", true), None);
}

fn messages(errors: Vec<FieldError>) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

#[test]
fn a_queue_name_must_name_a_local_queue() {
    let bad = deployment(&[("kueue.x-k8s.io/queue-name", "Not_A_Name")]);
    let errors = messages(validate_deployment(None, &bad));
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].starts_with(
            "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"Not_A_Name\": "
        ),
        "{errors:?}"
    );
    assert!(
        validate_deployment(None, &deployment(&[("kueue.x-k8s.io/queue-name", "lq")])).is_empty()
    );
}

#[test]
fn the_queue_may_change_only_while_no_replica_is_ready_and_never_be_dropped() {
    let a = deployment(&[("kueue.x-k8s.io/queue-name", "a")]);
    let b = deployment(&[("kueue.x-k8s.io/queue-name", "b")]);
    assert!(validate_deployment(Some(&a), &b).is_empty());
    assert_eq!(
        messages(validate_deployment(Some(&ready(a.clone(), 1)), &b)),
        ["metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"b\": field is immutable"]
    );
    assert_eq!(
        messages(validate_deployment(Some(&a), &deployment(&[]))),
        ["metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"\": field is immutable"]
    );
    assert!(validate_deployment(Some(&ready(a.clone(), 2)), &a).is_empty());
}

#[test]
fn a_priority_class_may_be_added_only_while_no_replica_is_ready_and_never_removed() {
    let queue = ("kueue.x-k8s.io/queue-name", "lq");
    let plain = deployment(&[queue]);
    let classed = deployment(&[queue, ("kueue.x-k8s.io/priority-class", "high")]);
    assert!(validate_deployment(Some(&plain), &classed).is_empty());
    assert_eq!(
        messages(validate_deployment(
            Some(&ready(plain.clone(), 1)),
            &classed
        )),
        [
            "metadata.labels[kueue.x-k8s.io/priority-class]: Invalid value: \"high\": \
             WorkloadPriorityClass cannot be added to a non-suspended workload"
        ]
    );
    assert_eq!(
        messages(validate_deployment(Some(&classed), &plain)),
        [
            "metadata.labels[kueue.x-k8s.io/priority-class]: Invalid value: \"\": \
             WorkloadPriorityClass cannot be removed from a workload"
        ]
    );
}
