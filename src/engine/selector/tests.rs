use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

use super::*;

fn expression(key: &str, op: &str, values: &[&str]) -> LabelSelectorRequirement {
    LabelSelectorRequirement {
        key: key.into(),
        operator: op.into(),
        values: (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()),
    }
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
