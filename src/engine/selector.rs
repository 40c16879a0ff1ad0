//! What the engine refuses in a ClusterQueue `namespaceSelector` (`metav1.LabelSelector`); matching
//! is [`crate::api::label_selector`]'s.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

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

#[cfg(test)]
mod tests;
