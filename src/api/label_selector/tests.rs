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

#[test]
fn validation_names_each_bad_field_under_the_selectors_own() {
    let mut selector = selector(vec![
        requirement("team", "In", &[]),
        requirement("team", "Exists", &["a"]),
        requirement("team", "Equals", &["a"]),
        requirement("Bad_Prefix/team", "Exists", &[]),
        requirement("team", "In", &["-bad"]),
    ]);
    selector.match_labels = Some(BTreeMap::from([("team".to_string(), "v".repeat(64))]));
    let errors = validate(&selector, "spec.sel");
    let fields: Vec<&str> = errors
        .iter()
        .map(|e| match e {
            SelectorError::ValuesRequired { field }
            | SelectorError::ValuesForbidden { field, .. }
            | SelectorError::UnknownOperator { field, .. }
            | SelectorError::InvalidKey { field, .. }
            | SelectorError::InvalidValue { field, .. } => field.as_str(),
        })
        .collect();
    assert_eq!(
        fields,
        [
            "spec.sel.matchLabels",
            "spec.sel.matchExpressions[0].values",
            "spec.sel.matchExpressions[1].values",
            "spec.sel.matchExpressions[2].operator",
            "spec.sel.matchExpressions[3].key",
            "spec.sel.matchExpressions[4].values[0]",
        ]
    );
    assert!(
        errors[4].to_string().contains("\"Bad_Prefix/team\""),
        "{}",
        errors[4]
    );
    let good = selector_with_labels(&[("example.com/team", "a")]);
    assert_eq!(validate(&good, "sel"), []);
}

fn selector_with_labels(pairs: &[(&str, &str)]) -> LabelSelector {
    LabelSelector {
        match_labels: Some(labels(pairs)),
        match_expressions: Some(vec![requirement("example.com/tier", "NotIn", &["b-c"])]),
    }
}
