//! Matching labels against a `metav1.LabelSelector`, as Kubernetes' `labels.Selector` does: the
//! one matcher of the crate, for ClusterQueue `namespaceSelector`s, the configuration's managed
//! namespaces and the metrics' LocalQueue selector; and Kubernetes' `ValidateLabelSelector`.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::name_syntax::{check_label_value, check_qualified_name};

/// The operators a requirement may use.
pub const OPERATORS: [&str; 4] = ["In", "NotIn", "Exists", "DoesNotExist"];

/// What is wrong with one field of a selector; `field` is its path under the selector's own, and
/// the message names the problem alone, so each caller places it under its own field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    #[error("must be specified when `operator` is 'In' or 'NotIn'")]
    ValuesRequired { field: String },
    #[error("may not be specified when `operator` is 'Exists' or 'DoesNotExist'")]
    ValuesForbidden { field: String, values: Vec<String> },
    #[error("unsupported operator {operator:?} (In, NotIn, Exists, DoesNotExist)")]
    UnknownOperator { field: String, operator: String },
    #[error("invalid label key {key:?}: {reason}")]
    InvalidKey {
        field: String,
        key: String,
        reason: String,
    },
    #[error("invalid label value {value:?}: {reason}")]
    InvalidValue {
        field: String,
        value: String,
        reason: String,
    },
}

impl SelectorError {
    /// The path of the field at fault.
    pub fn field(&self) -> &str {
        match self {
            Self::ValuesRequired { field }
            | Self::ValuesForbidden { field, .. }
            | Self::UnknownOperator { field, .. }
            | Self::InvalidKey { field, .. }
            | Self::InvalidValue { field, .. } => field,
        }
    }
}

/// Kubernetes' `ValidateLabelSelector` on the selector at `field`: label keys are qualified
/// names, values valid label values, and each operator has the values it needs.
pub fn validate(selector: &LabelSelector, field: &str) -> Vec<SelectorError> {
    let mut errors = Vec::new();
    for (key, value) in selector.match_labels.iter().flatten() {
        let path = format!("{field}.matchLabels");
        check_key(key, &path, &mut errors);
        check_value(value, &path, &mut errors);
    }
    for (i, requirement) in selector.match_expressions.iter().flatten().enumerate() {
        let path = format!("{field}.matchExpressions[{i}]");
        let values = requirement.values.as_deref().unwrap_or_default();
        match requirement.operator.as_str() {
            "In" | "NotIn" if values.is_empty() => errors.push(SelectorError::ValuesRequired {
                field: format!("{path}.values"),
            }),
            "Exists" | "DoesNotExist" if !values.is_empty() => {
                errors.push(SelectorError::ValuesForbidden {
                    field: format!("{path}.values"),
                    values: values.to_vec(),
                });
            }
            operator if OPERATORS.contains(&operator) => {}
            other => errors.push(SelectorError::UnknownOperator {
                field: format!("{path}.operator"),
                operator: other.to_owned(),
            }),
        }
        check_key(&requirement.key, &format!("{path}.key"), &mut errors);
        for (j, value) in values.iter().enumerate() {
            check_value(value, &format!("{path}.values[{j}]"), &mut errors);
        }
    }
    errors
}

fn check_key(key: &str, field: &str, errors: &mut Vec<SelectorError>) {
    if let Err(reason) = check_qualified_name(key) {
        errors.push(SelectorError::InvalidKey {
            field: field.to_owned(),
            key: key.to_owned(),
            reason,
        });
    }
}

fn check_value(value: &str, field: &str, errors: &mut Vec<SelectorError>) {
    if let Err(reason) = check_label_value(value) {
        errors.push(SelectorError::InvalidValue {
            field: field.to_owned(),
            value: value.to_owned(),
            reason,
        });
    }
}

/// Whether `labels` satisfy `selector`. An empty selector matches everything; an unknown operator
/// matches nothing (validation refuses it before a selector is used).
pub fn matches(selector: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    let labels_match = selector
        .match_labels
        .iter()
        .flatten()
        .all(|(key, value)| labels.get(key) == Some(value));
    labels_match
        && selector.match_expressions.iter().flatten().all(|r| {
            let value = labels.get(&r.key);
            let values = r.values.as_deref().unwrap_or_default();
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
