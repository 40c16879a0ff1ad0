use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

use super::*;

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn expression(key: &str, op: &str, values: &[&str]) -> LabelSelectorRequirement {
    LabelSelectorRequirement {
        key: key.into(),
        operator: op.into(),
        values: (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()),
    }
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
            expression("env", "In", &["prod", "staging"]),
            expression("legacy", "DoesNotExist", &[]),
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
fn malformed_expressions_are_refused() {
    let selector = LabelSelector {
        match_expressions: Some(vec![expression("env", "Matches", &["x"])]),
        ..Default::default()
    };
    assert!(
        validate(&selector)
            .unwrap_err()
            .contains("unknown operator")
    );
    let selector = LabelSelector {
        match_expressions: Some(vec![expression("env", "In", &[])]),
        ..Default::default()
    };
    assert!(validate(&selector).is_err());
}
