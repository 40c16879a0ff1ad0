use k8s_openapi::api::core::v1::{
    NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Taint, Toleration,
};

use super::*;

fn flavor() -> ResourceFlavor {
    ResourceFlavor {
        name: "gpu".into(),
        node_labels: [("accelerator".to_string(), "a100".to_string())].into(),
        node_taints: vec![Taint {
            key: "gpu".into(),
            value: Some("yes".into()),
            effect: "NoSchedule".into(),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn tolerant() -> PodSet {
    PodSet {
        tolerations: vec![Toleration {
            key: Some("gpu".into()),
            operator: Some("Exists".into()),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn affinity(key: &str, op: &str, values: &[&str]) -> NodeSelector {
    NodeSelector {
        node_selector_terms: vec![NodeSelectorTerm {
            match_expressions: Some(vec![NodeSelectorRequirement {
                key: key.into(),
                operator: op.into(),
                values: Some(values.iter().map(|v| v.to_string()).collect()),
            }]),
            ..Default::default()
        }],
    }
}

#[test]
fn taints_need_a_toleration_from_the_pod_or_the_flavor() {
    let message = flavor_mismatch(&flavor(), &PodSet::default()).unwrap();
    assert_eq!(
        message,
        "untolerated taint {gpu yes NoSchedule} in flavor gpu"
    );
    assert_eq!(flavor_mismatch(&flavor(), &tolerant()), None);
    let mut self_tolerating = flavor();
    self_tolerating.tolerations = tolerant().tolerations;
    assert_eq!(flavor_mismatch(&self_tolerating, &PodSet::default()), None);
}

#[test]
fn selectors_and_affinity_only_look_at_the_flavors_keys() {
    let mut pod_set = tolerant();
    pod_set.node_selector.insert("zone".into(), "a".into());
    assert_eq!(flavor_mismatch(&flavor(), &pod_set), None);
    pod_set
        .node_selector
        .insert("accelerator".into(), "h100".into());
    assert!(
        flavor_mismatch(&flavor(), &pod_set)
            .unwrap()
            .contains("doesn't match node affinity")
    );

    let mut pod_set = tolerant();
    pod_set.required_node_affinity = Some(affinity("accelerator", "In", &["a100", "h100"]));
    assert_eq!(flavor_mismatch(&flavor(), &pod_set), None);
    pod_set.required_node_affinity = Some(affinity("accelerator", "NotIn", &["a100"]));
    assert!(flavor_mismatch(&flavor(), &pod_set).is_some());
    pod_set.required_node_affinity = Some(affinity("zone", "In", &["b"]));
    assert_eq!(flavor_mismatch(&flavor(), &pod_set), None);
}

#[test]
fn preference_orders_borrowing_against_preemption() {
    let borrow_first = FungibilityPreference::BorrowingOverPreemption;
    let preempt_first = FungibilityPreference::PreemptionOverBorrowing;
    assert!(better(borrow_first, (Mode::Fit, 1), (Mode::Preempt, 0)));
    assert!(better(preempt_first, (Mode::Preempt, 0), (Mode::Fit, 1)));
    assert!(!better(borrow_first, (Mode::Fit, 1), (Mode::Fit, 1)));
}
