use super::*;

fn taint(key: &str, value: Option<&str>, effect: &str) -> Taint {
    Taint {
        key: key.into(),
        value: value.map(Into::into),
        effect: effect.into(),
        ..Default::default()
    }
}

fn toleration(
    key: Option<&str>,
    op: &str,
    value: Option<&str>,
    effect: Option<&str>,
) -> Toleration {
    Toleration {
        key: key.map(Into::into),
        operator: Some(op.into()),
        value: value.map(Into::into),
        effect: effect.map(Into::into),
        ..Default::default()
    }
}

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn req(key: &str, op: &str, values: &[&str]) -> NodeSelectorRequirement {
    NodeSelectorRequirement {
        key: key.into(),
        operator: op.into(),
        values: Some(values.iter().map(|v| v.to_string()).collect()),
    }
}

#[test]
fn tolerations_follow_kubernetes_rules() {
    let gpu = taint("gpu", Some("true"), "NoSchedule");
    assert!(tolerates(
        &toleration(Some("gpu"), "Equal", Some("true"), None),
        &gpu
    ));
    assert!(!tolerates(
        &toleration(Some("gpu"), "Equal", Some("false"), None),
        &gpu
    ));
    assert!(tolerates(
        &toleration(Some("gpu"), "Exists", None, Some("NoSchedule")),
        &gpu
    ));
    assert!(!tolerates(
        &toleration(Some("gpu"), "Exists", None, Some("NoExecute")),
        &gpu
    ));
    assert!(tolerates(&toleration(None, "Exists", None, None), &gpu));
}

#[test]
fn only_hard_taints_block() {
    let taints = [
        taint("soft", None, "PreferNoSchedule"),
        taint("hard", None, "NoExecute"),
    ];
    assert_eq!(
        untolerated_taint(&taints, &[]).map(|t| t.key.as_str()),
        Some("hard")
    );
    let tolerated = [toleration(Some("hard"), "Exists", None, None)];
    assert!(untolerated_taint(&taints, &tolerated).is_none());
}

#[test]
fn requirements_cover_every_operator() {
    let node = labels(&[("zone", "a"), ("cores", "8")]);
    assert!(requirement_matches(&req("zone", "In", &["a", "b"]), &node));
    assert!(!requirement_matches(&req("zone", "NotIn", &["a"]), &node));
    assert!(requirement_matches(&req("rack", "NotIn", &["a"]), &node));
    assert!(requirement_matches(&req("zone", "Exists", &[]), &node));
    assert!(requirement_matches(
        &req("rack", "DoesNotExist", &[]),
        &node
    ));
    assert!(requirement_matches(&req("cores", "Gt", &["4"]), &node));
    assert!(!requirement_matches(&req("cores", "Lt", &["4"]), &node));
    assert!(!requirement_matches(&req("cores", "Gt", &["x"]), &node));
    assert!(!requirement_matches(&req("zone", "Bogus", &["a"]), &node));
}

#[test]
fn terms_are_ored_and_empty_terms_match_nothing() {
    let node = labels(&[("zone", "a")]);
    let term = |r: Vec<NodeSelectorRequirement>| NodeSelectorTerm {
        match_expressions: Some(r),
        match_fields: None,
    };
    let selector = NodeSelector {
        node_selector_terms: vec![
            term(vec![req("zone", "In", &["b"])]),
            term(vec![req("zone", "In", &["a"])]),
        ],
    };
    assert!(node_selector_matches(&selector, &node, "n1"));
    assert!(!node_selector_matches(
        &NodeSelector {
            node_selector_terms: vec![term(vec![])]
        },
        &node,
        "n1"
    ));
    let by_name = NodeSelectorTerm {
        match_expressions: None,
        match_fields: Some(vec![req("metadata.name", "In", &["n1"])]),
    };
    assert!(term_matches(&by_name, &node, "n1"));
    assert!(!term_matches(&by_name, &node, "n2"));
}

#[test]
fn selector_maps_need_every_entry() {
    let node = labels(&[("zone", "a"), ("pool", "gpu")]);
    assert!(selector_map_matches(&labels(&[("zone", "a")]), &node));
    assert!(!selector_map_matches(&labels(&[("zone", "b")]), &node));
    assert!(selector_map_matches(&Labels::new(), &node));
}
