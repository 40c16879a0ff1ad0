//! Rules on raw API fields that the conversions check before converting, as Kueue's webhooks check
//! them: label keys and values (a flavor's node labels, taint and toleration keys, a ClusterQueue's
//! namespace selector) and the resource lists of a pod template (no `pods` key, no negative
//! amount).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{PodSpec, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::api::name_syntax::{check_label_value, check_qualified_name};
use crate::engine::ModelError;
use crate::engine::model::PODS;
use crate::engine::quantity::{Quantity, QuantityError};

/// Kueue's reason for a `pods` key in a pod template's requests or limits.
pub const PODS_KEY_RESERVED: &str = "the key is reserved for internal kueue use";

/// A label map (`nodeLabels`, `nodeSelector`, template labels): every key a qualified name, every
/// value a label value.
pub fn labels(
    kind: &'static str,
    name: &str,
    field: &str,
    labels: &BTreeMap<String, String>,
) -> Result<(), ModelError> {
    for (key, value) in labels {
        label_key(kind, name, field, key)?;
        check_label_value(value)
            .map_err(|reason| ModelError::invalid(kind, name, format!("{field}[{key}]"), reason))?;
    }
    Ok(())
}

/// A label selector's keys and values (its operators are the engine's to check).
pub fn label_selector(
    kind: &'static str,
    name: &str,
    field: &str,
    selector: &LabelSelector,
) -> Result<(), ModelError> {
    if let Some(match_labels) = &selector.match_labels {
        labels(kind, name, &format!("{field}.matchLabels"), match_labels)?;
    }
    for (i, requirement) in selector.match_expressions.iter().flatten().enumerate() {
        let at = format!("{field}.matchExpressions[{i}]");
        label_key(kind, name, &format!("{at}.key"), &requirement.key)?;
        for (v, value) in requirement.values.iter().flatten().enumerate() {
            label_value(kind, name, &format!("{at}.values[{v}]"), value)?;
        }
    }
    Ok(())
}

/// A label key (a taint or toleration key, a label map's key).
pub fn label_key(kind: &'static str, name: &str, field: &str, key: &str) -> Result<(), ModelError> {
    check_qualified_name(key)
        .map_err(|reason| ModelError::invalid(kind, name, field, format!("{key:?}: {reason}")))
}

/// A label value at `field`.
pub fn label_value(
    kind: &'static str,
    name: &str,
    field: &str,
    value: &str,
) -> Result<(), ModelError> {
    check_label_value(value)
        .map_err(|reason| ModelError::invalid(kind, name, field, format!("{value:?}: {reason}")))
}

/// The requests and limits of every container, init container and of the pod itself: no `pods`
/// key and no negative amount. `field` is the pod spec's path.
pub fn pod_resources(
    kind: &'static str,
    name: &str,
    field: &str,
    spec: &PodSpec,
) -> Result<(), ModelError> {
    let containers = spec
        .init_containers
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| (format!("{field}.initContainers[{i}]"), &c.resources))
        .chain(
            spec.containers
                .iter()
                .enumerate()
                .map(|(i, c)| (format!("{field}.containers[{i}]"), &c.resources)),
        );
    for (path, resources) in containers {
        requirements(kind, name, &format!("{path}.resources"), resources.as_ref())?;
    }
    requirements(
        kind,
        name,
        &format!("{field}.resources"),
        spec.resources.as_ref(),
    )
}

fn requirements(
    kind: &'static str,
    name: &str,
    field: &str,
    resources: Option<&ResourceRequirements>,
) -> Result<(), ModelError> {
    let Some(resources) = resources else {
        return Ok(());
    };
    for (list, entries) in [
        ("requests", &resources.requests),
        ("limits", &resources.limits),
    ] {
        for (resource, amount) in entries.iter().flatten() {
            let at = format!("{field}.{list}.{resource}");
            if resource == PODS {
                return Err(ModelError::invalid(kind, name, at, PODS_KEY_RESERVED));
            }
            let value: Quantity = amount
                .0
                .parse()
                .map_err(|e: QuantityError| ModelError::invalid(kind, name, &at, e.to_string()))?;
            if value < Quantity::ZERO {
                let reason = format!("must not be negative, found {}", amount.0);
                return Err(ModelError::invalid(kind, name, at, reason));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
