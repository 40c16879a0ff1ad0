//! `metav1.LabelSelector` checks for the configuration: Kubernetes' selector validation (matching
//! is [`crate::api::label_selector`]'s).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::error::FieldError;

const MAX_NAME_LENGTH: usize = 63;
const MAX_PREFIX_LENGTH: usize = 253;

/// Kubernetes' `ValidateLabelSelector`: label keys are qualified names, values valid label values,
/// and each operator has the values it needs.
pub fn validate(selector: &LabelSelector, field: &str) -> Vec<FieldError> {
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
            "In" | "NotIn" if values.is_empty() => errors.push(FieldError::Required {
                field: format!("{path}.values"),
                detail: "must be specified when `operator` is 'In' or 'NotIn'".into(),
            }),
            "Exists" | "DoesNotExist" if !values.is_empty() => errors.push(FieldError::Invalid {
                field: format!("{path}.values"),
                value: format!("{values:?}"),
                detail: "may not be specified when `operator` is 'Exists' or 'DoesNotExist'".into(),
            }),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => errors.push(FieldError::NotSupported {
                field: format!("{path}.operator"),
                value: format!("{other:?}"),
                supported: ["In", "NotIn", "Exists", "DoesNotExist"]
                    .map(String::from)
                    .to_vec(),
            }),
        }
        check_key(&requirement.key, &format!("{path}.key"), &mut errors);
        for (j, value) in values.iter().enumerate() {
            check_value(value, &format!("{path}.values[{j}]"), &mut errors);
        }
    }
    errors
}

fn check_key(key: &str, field: &str, errors: &mut Vec<FieldError>) {
    if let Err(detail) = qualified_name(key) {
        errors.push(FieldError::Invalid {
            field: field.to_string(),
            value: format!("{key:?}"),
            detail,
        });
    }
}

fn check_value(value: &str, field: &str, errors: &mut Vec<FieldError>) {
    if !value.is_empty() && !is_name_part(value) {
        errors.push(FieldError::Invalid {
            field: field.to_string(),
            value: format!("{value:?}"),
            detail: "a valid label must be an empty string or consist of at most 63 alphanumeric \
                     characters, '-', '_' or '.', starting and ending with an alphanumeric character"
                .into(),
        });
    }
}

/// Kubernetes' `IsQualifiedName`: `[prefix/]name`, the prefix a DNS-1123 subdomain.
fn qualified_name(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix
        && !is_dns_subdomain(prefix)
    {
        return Err(
            "prefix part must be a lowercase RFC 1123 subdomain of at most 253 characters".into(),
        );
    }
    if !is_name_part(name) {
        return Err(
            "name part must consist of at most 63 alphanumeric characters, '-', '_' or '.', \
                    starting and ending with an alphanumeric character"
                .into(),
        );
    }
    Ok(())
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, at most 63 characters.
fn is_name_part(name: &str) -> bool {
    let bytes = name.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            name.len() <= MAX_NAME_LENGTH
                && first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// A lowercase RFC 1123 subdomain: dot-separated labels of `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
pub(super) fn is_dns_subdomain(name: &str) -> bool {
    name.len() <= MAX_PREFIX_LENGTH
        && name.split('.').all(|label| {
            let bytes = label.as_bytes();
            match (bytes.first(), bytes.last()) {
                (Some(first), Some(last)) => {
                    is_lower_alphanumeric(*first)
                        && is_lower_alphanumeric(*last)
                        && bytes
                            .iter()
                            .all(|b| is_lower_alphanumeric(*b) || *b == b'-')
                }
                _ => false,
            }
        })
}

/// An RFC 1035 label, the shape of a Service name: at most 63 of `[a-z]([-a-z0-9]*[a-z0-9])?`.
pub(super) fn is_dns_label_1035(name: &str) -> bool {
    let bytes = name.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            bytes.len() <= 63
                && first.is_ascii_lowercase()
                && is_lower_alphanumeric(*last)
                && bytes
                    .iter()
                    .all(|b| is_lower_alphanumeric(*b) || *b == b'-')
        }
        _ => false,
    }
}

fn is_lower_alphanumeric(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

#[cfg(test)]
mod tests;
