//! Label selectors (`metav1.LabelSelector`) on namespace labels, for ClusterQueue
//! `namespaceSelector`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::model::Labels;

/// Why a selector is malformed.
pub fn validate(selector: &LabelSelector) -> Result<(), String> {
    for (i, requirement) in selector.match_expressions.iter().flatten().enumerate() {
        let values = requirement.values.as_deref().unwrap_or(&[]);
        match requirement.operator.as_str() {
            "In" | "NotIn" if values.is_empty() => {
                return Err(format!(
                    "matchExpressions[{i}]: operator {} needs at least one value",
                    requirement.operator
                ));
            }
            "Exists" | "DoesNotExist" if !values.is_empty() => {
                return Err(format!(
                    "matchExpressions[{i}]: operator {} takes no values",
                    requirement.operator
                ));
            }
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => {
                return Err(format!(
                    "matchExpressions[{i}]: unknown operator {other:?} (In, NotIn, Exists, DoesNotExist)"
                ));
            }
        }
    }
    Ok(())
}

/// Whether `labels` satisfy `selector`. An empty selector matches everything.
pub fn matches(selector: &LabelSelector, labels: &Labels) -> bool {
    let labels_match = selector
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    labels_match
        && selector.match_expressions.iter().flatten().all(|r| {
            let value = labels.get(&r.key);
            let values = r.values.as_deref().unwrap_or(&[]);
            match r.operator.as_str() {
                "In" => value.is_some_and(|v| values.contains(v)),
                "NotIn" => value.is_none_or(|v| !values.contains(v)),
                "Exists" => value.is_some(),
                "DoesNotExist" => value.is_none(),
                _ => false,
            }
        })
}

#[cfg(test)]
mod tests {
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
}
