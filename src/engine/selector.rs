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
mod tests;
