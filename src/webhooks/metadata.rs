//! Kubernetes' syntax rules on metadata and conditions that Kueue's webhooks apply to fields the
//! engine never reads: annotations, conditions, tolerations keys of admission-check updates, and
//! the `admission-gated-by` annotation.

use std::collections::{BTreeMap, BTreeSet};

use crate::api::Condition;
use k8s_openapi::api::core::v1::Toleration;

use super::findings::Findings;
use crate::api::name_syntax::{check_domain_prefixed_path, check_qualified_name};
use crate::state::syntax;

/// Kubernetes' limit on the total size of an object's annotations.
const ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;
/// Kubernetes' limit on a condition's reason.
const REASON_MAX: usize = 1024;
/// Kubernetes' limit on a condition's message.
const MESSAGE_MAX: usize = 32768;
/// Longest gate name in `kueue.x-k8s.io/admission-gated-by`, as Kubernetes limits a Job's
/// `spec.managedBy`.
const GATE_NAME_MAX: usize = 63;

/// A label map: qualified-name keys, label values.
pub fn labels(findings: &mut Findings, field: &str, labels: &BTreeMap<String, String>) {
    let (kind, name) = (findings.kind(), findings.name().to_string());
    findings.check(syntax::labels(kind, &name, field, labels));
}

/// Annotations: keys are qualified names (compared lower-cased), 256 KiB in all.
pub fn annotations(findings: &mut Findings, field: &str, annotations: &BTreeMap<String, String>) {
    let mut total = 0;
    for (key, value) in annotations {
        if let Err(reason) = check_qualified_name(&key.to_lowercase()) {
            findings.add(field, format!("{key:?}: {reason}"));
        }
        total += key.len() + value.len();
    }
    if total > ANNOTATIONS_MAX_BYTES {
        findings.add(
            field,
            format!("must have at most {ANNOTATIONS_MAX_BYTES} bytes, found {total}"),
        );
    }
}

/// Non-empty toleration keys are label keys.
pub fn toleration_keys(findings: &mut Findings, field: &str, tolerations: &[Toleration]) {
    for (i, toleration) in tolerations.iter().enumerate() {
        if let Some(key) = toleration.key.as_deref().filter(|k| !k.is_empty()) {
            let (kind, name) = (findings.kind(), findings.name().to_string());
            let at = format!("{field}[{i}].key");
            findings.check(syntax::label_key(kind, &name, &at, key));
        }
    }
}

/// Kubernetes' condition rules: a qualified-name type appearing once, status `True`, `False` or
/// `Unknown`, a CamelCase reason, a bounded message, a non-negative observed generation.
pub fn conditions(findings: &mut Findings, field: &str, conditions: &[Condition]) {
    let mut types = BTreeSet::new();
    for (i, condition) in conditions.iter().enumerate() {
        let at = |leaf: &str| format!("{field}[{i}].{leaf}");
        if let Err(reason) = check_qualified_name(&condition.type_) {
            findings.add(at("type"), format!("{:?}: {reason}", condition.type_));
        }
        if !types.insert(condition.type_.as_str()) {
            findings.add(
                at("type"),
                format!("{:?} appears more than once", condition.type_),
            );
        }
        if !matches!(condition.status.as_str(), "True" | "False" | "Unknown") {
            findings.add(
                at("status"),
                format!(
                    "must be True, False or Unknown, found {:?}",
                    condition.status
                ),
            );
        }
        if condition.observed_generation.is_some_and(|g| g < 0) {
            findings.add(at("observedGeneration"), "must not be negative");
        }
        if let Err(reason) = check_reason(&condition.reason) {
            findings.add(at("reason"), reason);
        }
        if condition.message.len() > MESSAGE_MAX {
            findings.add(
                at("message"),
                format!("must have at most {MESSAGE_MAX} bytes"),
            );
        }
    }
}

/// `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`, at most 1024 characters.
fn check_reason(reason: &str) -> Result<(), String> {
    let bytes = reason.as_bytes();
    let Some(first) = bytes.first() else {
        return Err("must be set".into());
    };
    if bytes.len() > REASON_MAX {
        return Err(format!("must have at most {REASON_MAX} characters"));
    }
    let inner = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b',' | b':');
    let last_ok = bytes
        .last()
        .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
    if first.is_ascii_alphabetic() && bytes.iter().all(inner) && last_ok {
        Ok(())
    } else {
        Err(format!(
            "{reason:?} must start with a letter, hold only letters, digits, '_', ',' or ':', \
             and end with a letter, digit or '_'"
        ))
    }
}

/// The gates of an `admission-gated-by` value: comma-separated, blanks trimmed.
pub fn gates(value: &str) -> Vec<&str> {
    if value.trim().is_empty() {
        return Vec::new();
    }
    value.split(',').map(str::trim).collect()
}

/// The form of an `admission-gated-by` value: no empty or repeated gate, each a domain-prefixed
/// path (`example.com/gate`) of at most 63 characters.
pub fn gated_by_format(findings: &mut Findings, field: &str, value: &str) {
    let mut seen = BTreeSet::new();
    for gate in gates(value) {
        if gate.is_empty() {
            findings.add(field, "cannot contain empty gate names");
            continue;
        }
        if !seen.insert(gate) {
            findings.add(field, format!("duplicate gate name: {gate}"));
            continue;
        }
        if let Err(reason) = check_domain_prefixed_path(gate) {
            findings.add(field, format!("{gate:?}: {reason}"));
        }
        if gate.len() > GATE_NAME_MAX {
            findings.add(
                field,
                format!("{gate:?} must have at most {GATE_NAME_MAX} characters"),
            );
        }
    }
}

/// Kueue's rule on an `admission-gated-by` value changed by an update: gates may only be removed
/// after creation, never added.
pub fn gated_by_update(findings: &mut Findings, field: &str, before: &str, after: &str) {
    if before.is_empty() && !after.is_empty() {
        findings.add(field, "cannot add admission gate after creation");
    }
    if !before.is_empty() && !after.is_empty() {
        let kept = gates(before);
        if gates(after).iter().any(|g| !kept.contains(g)) {
            findings.add(field, "can only remove gates, not add new ones");
        }
    }
}
