use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{StatefulSetSpec, StatefulSetStatus};

use super::*;
use crate::api::keys::labels;
use crate::jobs::fixtures::default_scope;
use crate::jobs::{JobScope, OwnerKind, queue_name};

fn statefulset(labels: &[(&str, &str)], replicas: i32) -> StatefulSet {
    let mut statefulset = StatefulSet::default();
    statefulset.metadata.name = Some("db".into());
    statefulset.metadata.namespace = Some("team".into());
    if !labels.is_empty() {
        statefulset.metadata.labels = Some(
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
    }
    statefulset.spec = Some(StatefulSetSpec {
        replicas: Some(replicas),
        ..StatefulSetSpec::default()
    });
    statefulset
}

fn with_status(mut statefulset: StatefulSet, replicas: i32, ready: i32) -> StatefulSet {
    statefulset.status = Some(StatefulSetStatus {
        replicas,
        ready_replicas: Some(ready),
        ..StatefulSetStatus::default()
    });
    statefulset
}

fn scope(manage_without_queue_name: bool) -> JobScope {
    default_scope(
        manage_without_queue_name,
        OwnerKind::new("apps", "v1", "StatefulSet"),
    )
}

fn defaulted(statefulset: &StatefulSet, scope: &JobScope, default_queue: bool) -> StatefulSet {
    let namespace_labels =
        BTreeMap::from([("kubernetes.io/metadata.name".to_owned(), "team".to_owned())]);
    default_statefulset(
        statefulset,
        ParentDefaulting {
            scope,
            namespace_labels: &namespace_labels,
            default_local_queue_exists: default_queue,
        },
    )
    .unwrap_or_else(|| statefulset.clone())
}

fn template_annotation(statefulset: &StatefulSet) -> Option<String> {
    statefulset
        .spec
        .as_ref()?
        .template
        .metadata
        .as_ref()?
        .annotations
        .as_ref()?
        .get(annotations::POD_SUSPENDING_PARENT)
        .cloned()
}

const MANAGED: StatefulSetUpdateFacts = StatefulSetUpdateFacts { managed: true };

#[test]
fn a_queued_statefulset_has_its_pod_template_marked() {
    let sts = statefulset(&[(labels::QUEUE_NAME, "lq")], 3);
    let out = defaulted(&sts, &scope(false), false);
    assert_eq!(template_annotation(&out).as_deref(), Some("statefulset"));
}

#[test]
fn a_statefulset_without_queue_is_left_alone() {
    let sts = statefulset(&[], 3);
    let scope = scope(false);
    assert!(
        default_statefulset(
            &sts,
            ParentDefaulting {
                scope: &scope,
                namespace_labels: &BTreeMap::new(),
                default_local_queue_exists: false,
            }
        )
        .is_none()
    );
}

#[test]
fn a_statefulset_without_queue_takes_the_default_local_queue() {
    let sts = statefulset(&[], 3);
    let out = defaulted(&sts, &scope(false), true);
    assert_eq!(queue_name(&out.metadata), Some("default"));
    assert_eq!(template_annotation(&out).as_deref(), Some("statefulset"));
}

#[test]
fn a_malformed_queue_name_is_refused_naming_the_label() {
    let errors = validate_statefulset(
        None,
        &statefulset(&[(labels::QUEUE_NAME, "Not_A_Name")], 1),
        MANAGED,
    );
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].field,
        "metadata.labels[kueue.x-k8s.io/queue-name]"
    );
}

#[test]
fn the_queue_changes_only_while_no_replica_is_ready() {
    let old = statefulset(&[(labels::QUEUE_NAME, "a")], 2);
    let new = statefulset(&[(labels::QUEUE_NAME, "b")], 2);
    assert!(validate_statefulset(Some(&old), &new, MANAGED).is_empty());
    let running = with_status(old, 2, 1);
    let errors = validate_statefulset(Some(&running), &new, MANAGED);
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].detail, "field is immutable");
    let dropped = statefulset(&[], 2);
    let old = statefulset(&[(labels::QUEUE_NAME, "a")], 2);
    assert_eq!(validate_statefulset(Some(&old), &dropped, MANAGED).len(), 1);
}

#[test]
fn a_priority_class_is_never_removed() {
    let old = statefulset(
        &[(labels::QUEUE_NAME, "a"), (labels::PRIORITY_CLASS, "high")],
        2,
    );
    let new = statefulset(&[(labels::QUEUE_NAME, "a")], 2);
    let errors = validate_statefulset(Some(&old), &new, MANAGED);
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].field,
        "metadata.labels[kueue.x-k8s.io/priority-class]"
    );
}

#[test]
fn a_managed_statefulset_cannot_be_resized_between_nonzero_counts() {
    let old = statefulset(&[(labels::QUEUE_NAME, "a")], 2);
    let new = statefulset(&[(labels::QUEUE_NAME, "a")], 3);
    let errors = validate_statefulset(Some(&old), &new, MANAGED);
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].field, "spec.replicas");
    assert_eq!(errors[0].kind, FieldErrorKind::Invalid);
    let unmanaged = StatefulSetUpdateFacts::default();
    assert!(validate_statefulset(Some(&old), &new, unmanaged).is_empty());
}

#[test]
fn a_managed_statefulset_scales_to_zero_and_back() {
    let three = statefulset(&[(labels::QUEUE_NAME, "a")], 3);
    let zero = statefulset(&[(labels::QUEUE_NAME, "a")], 0);
    assert!(validate_statefulset(Some(&three), &zero, MANAGED).is_empty());
    assert!(validate_statefulset(Some(&zero), &three, MANAGED).is_empty());
}

#[test]
fn scaling_up_from_zero_waits_for_the_scale_down() {
    let zero = statefulset(&[(labels::QUEUE_NAME, "a")], 0);
    let terminating = with_status(statefulset(&[(labels::QUEUE_NAME, "a")], 2), 1, 0);
    let errors = validate_statefulset(Some(&zero), &terminating, MANAGED);
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].kind, FieldErrorKind::Forbidden);
    assert_eq!(errors[0].detail, "scaling down is still in progress");
}

#[test]
fn replicas_default_to_one() {
    let mut unset = statefulset(&[(labels::QUEUE_NAME, "a")], 1);
    if let Some(spec) = unset.spec.as_mut() {
        spec.replicas = None;
    }
    let one = statefulset(&[(labels::QUEUE_NAME, "a")], 1);
    assert!(validate_statefulset(Some(&unset), &one, MANAGED).is_empty());
    let two = statefulset(&[(labels::QUEUE_NAME, "a")], 2);
    assert_eq!(validate_statefulset(Some(&unset), &two, MANAGED).len(), 1);
}

/// Kueue's `ValidateImmutablePodGroupPodSpec`: what of the pod template decides admission may
/// not change under a managed StatefulSet's Workload; the rest (an image) may.
#[test]
fn a_managed_statefulsets_pod_requests_cannot_change() {
    let with_container = |cpu: &str, image: &str| {
        let mut s = statefulset(&[(labels::QUEUE_NAME, "a")], 2);
        let template = &mut s.spec.as_mut().expect("a spec").template;
        template.spec = Some(
            serde_json::from_value(serde_json::json!({"containers": [{"name": "c",
                "image": image, "resources": {"requests": {"cpu": cpu}}}]}))
            .expect("a pod spec"),
        );
        s
    };
    let old = with_container("1", "v1");
    let errors = validate_statefulset(Some(&old), &with_container("2", "v1"), MANAGED);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].field, "spec.template.spec");
    assert_eq!(errors[0].detail, "field is immutable");
    assert!(validate_statefulset(Some(&old), &with_container("1", "v2"), MANAGED).is_empty());
    let unmanaged = StatefulSetUpdateFacts::default();
    assert!(validate_statefulset(Some(&old), &with_container("2", "v1"), unmanaged).is_empty());
}
