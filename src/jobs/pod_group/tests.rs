use serde_json::json;

use super::*;
use crate::jobs::fixtures::pod;

fn group_member(name: &str, total: &str) -> Pod {
    pod(
        name,
        json!({"metadata": {
            "labels": {(labels::POD_GROUP_NAME): "training"},
            "annotations": {(annotations::POD_GROUP_TOTAL_COUNT): total}
        }}),
    )
}

fn gates(pod: &Pod) -> Vec<String> {
    pod.spec
        .as_ref()
        .and_then(|s| s.scheduling_gates.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|g| g.name)
        .collect()
}

const TAS: PodDefaulting = PodDefaulting {
    manage_without_queue_name: false,
    default_local_queue_exists: false,
    topology_aware_scheduling: true,
};

#[test]
fn the_group_name_annotation_wins_over_the_label() {
    let both = pod(
        "p",
        json!({"metadata": {
            "labels": {(labels::POD_GROUP_NAME): "from-label"},
            "annotations": {(annotations::POD_GROUP_NAME): "from-annotation"}
        }}),
    );
    assert_eq!(pod_group_name(&both), Some("from-annotation"));
    let empty_annotation = pod(
        "p",
        json!({"metadata": {
            "labels": {(labels::POD_GROUP_NAME): "from-label"},
            "annotations": {(annotations::POD_GROUP_NAME): ""}
        }}),
    );
    assert_eq!(pod_group_name(&empty_annotation), Some("from-label"));
    assert_eq!(pod_group_name(&pod("p", json!({}))), None);
}

#[test]
fn a_consistent_group_and_a_single_pod_are_valid() {
    assert_eq!(validate_pod(&group_member("a", "3")), Vec::new());
    assert_eq!(validate_pod(&pod("single", json!({}))), Vec::new());
}

#[test]
fn group_name_and_total_count_go_together() {
    let count_only = pod(
        "p",
        json!({"metadata": {"annotations": {(annotations::POD_GROUP_TOTAL_COUNT): "2"}}}),
    );
    let errors = validate_pod(&count_only);
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].to_string(),
        "metadata.labels[kueue.x-k8s.io/pod-group-name]: Required value: both the \
         'kueue.x-k8s.io/pod-group-total-count' annotation and the 'kueue.x-k8s.io/pod-group-name' \
         label should be set"
    );
    let name_only = pod(
        "p",
        json!({"metadata": {"annotations": {(annotations::POD_GROUP_NAME): "g"}}}),
    );
    let errors = validate_pod(&name_only);
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].field,
        "metadata.annotations[kueue.x-k8s.io/pod-group-total-count]"
    );
    assert!(errors[0].detail.ends_with("annotation should be set"));
}

#[test]
fn the_total_count_is_a_positive_integer_and_the_name_an_object_name() {
    for bad in ["0", "-1", "two", ""] {
        let errors = validate_pod(&group_member("a", bad));
        assert_eq!(errors.len(), 1, "{bad:?}");
        assert_eq!(errors[0].kind, FieldErrorKind::Invalid);
        assert_eq!(
            errors[0].to_string(),
            format!(
                "metadata.annotations[kueue.x-k8s.io/pod-group-total-count]: Invalid value: \
                 {bad:?}: group total count must be a positive integer"
            )
        );
    }
    let bad_name = pod(
        "p",
        json!({"metadata": {
            "labels": {(labels::POD_GROUP_NAME): "Not_A_Name"},
            "annotations": {(annotations::POD_GROUP_TOTAL_COUNT): "1"}
        }}),
    );
    let errors = validate_pod(&bad_name);
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].field,
        "metadata.labels[kueue.x-k8s.io/pod-group-name]"
    );
}

#[test]
fn the_managed_label_can_only_be_true() {
    let wrong = pod(
        "p",
        json!({"metadata": {"labels": {(labels::MANAGED): "yes"}}}),
    );
    let errors = validate_pod(&wrong);
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].kind, FieldErrorKind::Forbidden);
    assert_eq!(
        errors[0].to_string(),
        "metadata.labels[kueue.x-k8s.io/managed]: Forbidden: managed label value can only be 'true'"
    );
}

#[test]
fn a_group_name_is_immutable_and_unretriable_stays_unretriable() {
    let old = group_member("a", "2");
    let renamed = pod(
        "a",
        json!({"metadata": {
            "labels": {(labels::POD_GROUP_NAME): "other"},
            "annotations": {(annotations::POD_GROUP_TOTAL_COUNT): "2"}
        }}),
    );
    let errors = validate_pod_update(&old, &renamed);
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].detail, "field is immutable");
    assert_eq!(validate_pod_update(&old, &old), Vec::new());

    let mut unretriable = old.clone();
    unretriable
        .metadata
        .annotations
        .get_or_insert_default()
        .insert(
            annotations::RETRIABLE_IN_GROUP.to_owned(),
            "false".to_owned(),
        );
    let errors = validate_pod_update(&unretriable, &old);
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].detail,
        "unretriable pod group can't be converted to retriable"
    );
}

#[test]
fn a_pod_with_a_queue_is_gated_marked_and_hashed() {
    let defaulted = default_pod(&pod("p", json!({})), TAS).unwrap();
    assert_eq!(
        gates(&defaulted),
        vec![
            scheduling_gates::ADMISSION.to_owned(),
            scheduling_gates::TOPOLOGY.to_owned()
        ]
    );
    assert_eq!(label(&defaulted, labels::MANAGED), Some("true"));
    assert_eq!(
        defaulted.metadata.finalizers,
        Some(vec![finalizers::MANAGED.to_owned()])
    );
    let hash = annotation(&defaulted, annotations::ROLE_HASH).unwrap();
    assert_eq!(hash.len(), 8);
    assert!(hash.bytes().all(|b| b.is_ascii_hexdigit()));
    // Defaulting again changes nothing.
    assert_eq!(default_pod(&defaulted, TAS), Some(defaulted));
}

#[test]
fn without_tas_only_the_admission_gate_is_added() {
    let settings = PodDefaulting {
        topology_aware_scheduling: false,
        ..TAS
    };
    let defaulted = default_pod(&pod("p", json!({})), settings).unwrap();
    assert_eq!(
        gates(&defaulted),
        vec![scheduling_gates::ADMISSION.to_owned()]
    );
}

#[test]
fn a_pod_without_a_queue_is_left_alone_unless_a_default_queue_or_the_setting_applies() {
    let no_queue = pod("p", json!({"metadata": {"labels": null}}));
    assert_eq!(default_pod(&no_queue, TAS), None);
    let defaulted = default_pod(
        &no_queue,
        PodDefaulting {
            default_local_queue_exists: true,
            ..TAS
        },
    )
    .unwrap();
    assert_eq!(label(&defaulted, labels::QUEUE_NAME), Some("default"));
    let managed = default_pod(
        &no_queue,
        PodDefaulting {
            manage_without_queue_name: true,
            ..TAS
        },
    )
    .unwrap();
    assert_eq!(label(&managed, labels::MANAGED), Some("true"));
}

#[test]
fn a_pod_its_parent_suspends_is_gated_without_the_finalizer() {
    let child = pod(
        "p",
        json!({"metadata": {
            "labels": null,
            "annotations": {(annotations::POD_SUSPENDING_PARENT): "statefulset"}
        }}),
    );
    let defaulted = default_pod(&child, TAS).unwrap();
    assert!(gates(&defaulted).contains(&scheduling_gates::ADMISSION.to_owned()));
    assert_eq!(defaulted.metadata.finalizers, None);
    assert_eq!(label(&defaulted, labels::MANAGED), None);
}

#[test]
fn the_group_index_label_is_copied_from_the_named_label() {
    let indexed = pod(
        "p",
        json!({"metadata": {
            "labels": {"apps.kubernetes.io/pod-index": "3"},
            "annotations": {(annotations::POD_GROUP_POD_INDEX_LABEL): "apps.kubernetes.io/pod-index"}
        }}),
    );
    let defaulted = default_pod(&indexed, TAS).unwrap();
    assert_eq!(label(&defaulted, labels::POD_GROUP_POD_INDEX), Some("3"));
}

#[test]
fn role_hashes_group_pods_by_what_decides_admission() {
    let base = pod("a", json!({}));
    let same_role = pod(
        "b",
        json!({"metadata": {"labels": {"other": "label"}}, "spec": {"containers": [{
            "name": "other-name", "image": "other-image", "resources": {"requests": {"cpu": "1"}}
        }]}}),
    );
    let bigger = pod(
        "c",
        json!({"spec": {"containers": [{
            "name": "main", "image": "busybox", "resources": {"requests": {"cpu": "2"}}
        }]}}),
    );
    let tolerating = pod(
        "d",
        json!({"spec": {"tolerations": [{"key": "gpu", "operator": "Exists"}]}}),
    );
    assert_eq!(role_hash(&base), role_hash(&same_role));
    assert_ne!(role_hash(&base), role_hash(&bigger));
    assert_ne!(role_hash(&base), role_hash(&tolerating));
    // The annotation is read first.
    let annotated = pod(
        "e",
        json!({"metadata": {"annotations": {(annotations::ROLE_HASH): "cafe0001"}}}),
    );
    assert_eq!(role_hash(&annotated), "cafe0001");
}
