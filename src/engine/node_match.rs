//! Kubernetes node-matching rules on plain label maps: taints against tolerations, `nodeSelector`
//! maps, and required node affinity. Flavor assignment and topology placement both use them, so the
//! two agree on what a pod may run on.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Taint, Toleration,
};

/// Labels of a node or a flavor.
pub type Labels = BTreeMap<String, String>;

/// Whether `toleration` tolerates `taint` (Kubernetes `Toleration.ToleratesTaint`).
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    let effect_matches = toleration
        .effect
        .as_deref()
        .is_none_or(|e| e.is_empty() || e == taint.effect);
    if !effect_matches {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or("");
    match toleration.operator.as_deref().unwrap_or("Equal") {
        // An empty key with Exists tolerates every taint.
        "Exists" => key.is_empty() || key == taint.key,
        "Equal" | "" => {
            key == taint.key
                && toleration.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or("")
        }
        _ => false,
    }
}

/// The first `NoSchedule` or `NoExecute` taint that none of `tolerations` tolerates.
/// `PreferNoSchedule` taints never block.
pub fn untolerated_taint<'a>(taints: &'a [Taint], tolerations: &[Toleration]) -> Option<&'a Taint> {
    taints
        .iter()
        .filter(|taint| matches!(taint.effect.as_str(), "NoSchedule" | "NoExecute"))
        .find(|taint| !tolerations.iter().any(|t| tolerates(t, taint)))
}

/// Whether every entry of a `nodeSelector` map is among `labels`.
pub fn selector_map_matches(selector: &Labels, labels: &Labels) -> bool {
    selector.iter().all(|(k, v)| labels.get(k) == Some(v))
}

/// One `matchExpressions` requirement against `labels`.
pub fn requirement_matches(requirement: &NodeSelectorRequirement, labels: &Labels) -> bool {
    let value = labels.get(&requirement.key);
    let values = requirement.values.as_deref().unwrap_or(&[]);
    match requirement.operator.as_str() {
        "In" => value.is_some_and(|v| values.contains(v)),
        "NotIn" => value.is_none_or(|v| !values.contains(v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" | "Lt" => {
            let (Some(actual), [bound]) = (value.and_then(|v| v.parse::<i64>().ok()), values)
            else {
                return false;
            };
            let Ok(bound) = bound.parse::<i64>() else {
                return false;
            };
            if requirement.operator == "Gt" {
                actual > bound
            } else {
                actual < bound
            }
        }
        _ => false,
    }
}

/// A node-selector term: its expressions and field requirements all hold. As in Kubernetes, a term with
/// neither matches nothing. `metadata.name` is the only field a term may name.
fn term_matches(term: &NodeSelectorTerm, labels: &Labels, node_name: &str) -> bool {
    let expressions = term.match_expressions.as_deref().unwrap_or(&[]);
    let fields = term.match_fields.as_deref().unwrap_or(&[]);
    if expressions.is_empty() && fields.is_empty() {
        return false;
    }
    let name_labels = Labels::from([("metadata.name".to_string(), node_name.to_string())]);
    expressions.iter().all(|r| requirement_matches(r, labels))
        && fields
            .iter()
            .all(|r| r.key == "metadata.name" && requirement_matches(r, &name_labels))
}

/// Required node affinity: any of the terms matches.
pub fn node_selector_matches(selector: &NodeSelector, labels: &Labels, node_name: &str) -> bool {
    selector
        .node_selector_terms
        .iter()
        .any(|term| term_matches(term, labels, node_name))
}

#[cfg(test)]
mod tests;
