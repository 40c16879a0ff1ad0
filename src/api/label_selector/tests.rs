use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

use super::*;

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn requirement(key: &str, operator: &str, values: &[&str]) -> LabelSelectorRequirement {
    LabelSelectorRequirement {
        key: key.into(),
        operator: operator.into(),
        values: (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()),
    }
}

fn selector(requirements: Vec<LabelSelectorRequirement>) -> LabelSelector {
    LabelSelector {
        match_expressions: Some(requirements),
        match_labels: None,
    }
}

fn namespace(name: &str) -> BTreeMap<String, String> {
    BTreeMap::from([("kubernetes.io/metadata.name".to_string(), name.to_string())])
}

#[test]
fn empty_selector_matches_everything() {
    assert!(matches(&LabelSelector::default(), &labels(&[])));
}

#[test]
fn labels_and_expressions_must_all_hold() {
    let selector = LabelSelector {
        match_labels: Some(BTreeMap::from([("team".into(), "a".into())])),
        match_expressions: Some(vec![
            requirement("env", "In", &["prod", "staging"]),
            requirement("legacy", "DoesNotExist", &[]),
        ]),
    };
    assert!(matches(
        &selector,
        &labels(&[("team", "a"), ("env", "prod")])
    ));
    assert!(!matches(
        &selector,
        &labels(&[("team", "b"), ("env", "prod")])
    ));
    assert!(!matches(
        &selector,
        &labels(&[("team", "a"), ("env", "dev")])
    ));
    assert!(!matches(
        &selector,
        &labels(&[("team", "a"), ("env", "prod"), ("legacy", "1")])
    ));
}

#[test]
fn matches_like_kubernetes() {
    let not_system = selector(vec![requirement(
        "kubernetes.io/metadata.name",
        "NotIn",
        &["kube-system", "kueue-system"],
    )]);
    assert!(!matches(&not_system, &namespace("kube-system")));
    assert!(matches(&not_system, &namespace("team-a")));
    assert!(matches(
        &LabelSelector::default(),
        &namespace("kube-system")
    ));
    let team = LabelSelector {
        match_labels: Some(BTreeMap::from([("team".to_string(), "a".to_string())])),
        match_expressions: None,
    };
    assert!(!matches(&team, &namespace("team-a")));
    let exists = selector(vec![requirement("team", "Exists", &[])]);
    assert!(!matches(&exists, &namespace("x")));
    let absent = selector(vec![requirement("team", "DoesNotExist", &[])]);
    assert!(matches(&absent, &namespace("x")));
}

#[test]
fn an_unknown_operator_matches_nothing() {
    assert!(!matches(
        &selector(vec![requirement("team", "Matches", &["a"])]),
        &labels(&[("team", "a")])
    ));
}
