//! A `metav1.LabelSelector` of the configuration checked as Kubernetes checks one (the rules and
//! the matching are [`crate::api::label_selector`]'s), its problems told as the configuration's
//! field errors.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::error::FieldError;
use crate::api::label_selector::{self, OPERATORS, SelectorError};

/// Kubernetes' `ValidateLabelSelector` on the selector at `field`.
pub fn validate(selector: &LabelSelector, field: &str) -> Vec<FieldError> {
    label_selector::validate(selector, field)
        .into_iter()
        .map(FieldError::from)
        .collect()
}

impl From<SelectorError> for FieldError {
    fn from(error: SelectorError) -> Self {
        match error {
            SelectorError::ValuesRequired { field } => FieldError::Required {
                field,
                detail: "must be specified when `operator` is 'In' or 'NotIn'".into(),
            },
            SelectorError::ValuesForbidden { field, values } => FieldError::Invalid {
                field,
                value: format!("{values:?}"),
                detail: "may not be specified when `operator` is 'Exists' or 'DoesNotExist'".into(),
            },
            SelectorError::UnknownOperator { field, operator } => FieldError::NotSupported {
                field,
                value: format!("{operator:?}"),
                supported: OPERATORS.map(String::from).to_vec(),
            },
            SelectorError::InvalidKey { field, key, reason } => FieldError::Invalid {
                field,
                value: format!("{key:?}"),
                detail: reason,
            },
            SelectorError::InvalidValue {
                field,
                value,
                reason,
            } => FieldError::Invalid {
                field,
                value: format!("{value:?}"),
                detail: reason,
            },
        }
    }
}

#[cfg(test)]
mod tests;
