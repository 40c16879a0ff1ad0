use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

use super::*;

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

#[test]
fn validates_like_kubernetes() {
    let fields = |s: &LabelSelector| -> Vec<String> {
        validate(s, "sel")
            .iter()
            .map(|e| e.field().to_string())
            .collect()
    };
    assert!(
        fields(&selector(vec![requirement(
            "example.com/team",
            "In",
            &["a", "b-c"]
        )]))
        .is_empty()
    );
    assert_eq!(
        fields(&selector(vec![requirement("team", "In", &[])])),
        ["sel.matchExpressions[0].values"]
    );
    assert_eq!(
        fields(&selector(vec![requirement("team", "Exists", &["a"])])),
        ["sel.matchExpressions[0].values"]
    );
    assert_eq!(
        fields(&selector(vec![requirement("team", "Equals", &["a"])])),
        ["sel.matchExpressions[0].operator"]
    );
    assert_eq!(
        fields(&selector(vec![requirement("", "Exists", &[])])),
        ["sel.matchExpressions[0].key"]
    );
    assert_eq!(
        fields(&selector(vec![requirement(
            "Bad_Prefix/team",
            "Exists",
            &[]
        )])),
        ["sel.matchExpressions[0].key"]
    );
    assert_eq!(
        fields(&selector(vec![requirement("team", "In", &["-bad"])])),
        ["sel.matchExpressions[0].values[0]"]
    );
    let long = "a".repeat(64);
    assert_eq!(
        fields(&LabelSelector {
            match_labels: Some(BTreeMap::from([("team".to_string(), long)])),
            match_expressions: None,
        }),
        ["sel.matchLabels"]
    );
}
