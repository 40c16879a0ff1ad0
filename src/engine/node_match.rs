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
pub fn term_matches(term: &NodeSelectorTerm, labels: &Labels, node_name: &str) -> bool {
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
mod tests {
    use super::*;

    fn taint(key: &str, value: Option<&str>, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: value.map(Into::into),
            effect: effect.into(),
            ..Default::default()
        }
    }

    fn toleration(
        key: Option<&str>,
        op: &str,
        value: Option<&str>,
        effect: Option<&str>,
    ) -> Toleration {
        Toleration {
            key: key.map(Into::into),
            operator: Some(op.into()),
            value: value.map(Into::into),
            effect: effect.map(Into::into),
            ..Default::default()
        }
    }

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn req(key: &str, op: &str, values: &[&str]) -> NodeSelectorRequirement {
        NodeSelectorRequirement {
            key: key.into(),
            operator: op.into(),
            values: Some(values.iter().map(|v| v.to_string()).collect()),
        }
    }

    #[test]
    fn tolerations_follow_kubernetes_rules() {
        let gpu = taint("gpu", Some("true"), "NoSchedule");
        assert!(tolerates(
            &toleration(Some("gpu"), "Equal", Some("true"), None),
            &gpu
        ));
        assert!(!tolerates(
            &toleration(Some("gpu"), "Equal", Some("false"), None),
            &gpu
        ));
        assert!(tolerates(
            &toleration(Some("gpu"), "Exists", None, Some("NoSchedule")),
            &gpu
        ));
        assert!(!tolerates(
            &toleration(Some("gpu"), "Exists", None, Some("NoExecute")),
            &gpu
        ));
        assert!(tolerates(&toleration(None, "Exists", None, None), &gpu));
    }

    #[test]
    fn only_hard_taints_block() {
        let taints = [
            taint("soft", None, "PreferNoSchedule"),
            taint("hard", None, "NoExecute"),
        ];
        assert_eq!(
            untolerated_taint(&taints, &[]).map(|t| t.key.as_str()),
            Some("hard")
        );
        let tolerated = [toleration(Some("hard"), "Exists", None, None)];
        assert!(untolerated_taint(&taints, &tolerated).is_none());
    }

    #[test]
    fn requirements_cover_every_operator() {
        let node = labels(&[("zone", "a"), ("cores", "8")]);
        assert!(requirement_matches(&req("zone", "In", &["a", "b"]), &node));
        assert!(!requirement_matches(&req("zone", "NotIn", &["a"]), &node));
        assert!(requirement_matches(&req("rack", "NotIn", &["a"]), &node));
        assert!(requirement_matches(&req("zone", "Exists", &[]), &node));
        assert!(requirement_matches(
            &req("rack", "DoesNotExist", &[]),
            &node
        ));
        assert!(requirement_matches(&req("cores", "Gt", &["4"]), &node));
        assert!(!requirement_matches(&req("cores", "Lt", &["4"]), &node));
        assert!(!requirement_matches(&req("cores", "Gt", &["x"]), &node));
        assert!(!requirement_matches(&req("zone", "Bogus", &["a"]), &node));
    }

    #[test]
    fn terms_are_ored_and_empty_terms_match_nothing() {
        let node = labels(&[("zone", "a")]);
        let term = |r: Vec<NodeSelectorRequirement>| NodeSelectorTerm {
            match_expressions: Some(r),
            match_fields: None,
        };
        let selector = NodeSelector {
            node_selector_terms: vec![
                term(vec![req("zone", "In", &["b"])]),
                term(vec![req("zone", "In", &["a"])]),
            ],
        };
        assert!(node_selector_matches(&selector, &node, "n1"));
        assert!(!node_selector_matches(
            &NodeSelector {
                node_selector_terms: vec![term(vec![])]
            },
            &node,
            "n1"
        ));
        let by_name = NodeSelectorTerm {
            match_expressions: None,
            match_fields: Some(vec![req("metadata.name", "In", &["n1"])]),
        };
        assert!(term_matches(&by_name, &node, "n1"));
        assert!(!term_matches(&by_name, &node, "n2"));
    }

    #[test]
    fn selector_maps_need_every_entry() {
        let node = labels(&[("zone", "a"), ("pool", "gpu")]);
        assert!(selector_map_matches(&labels(&[("zone", "a")]), &node));
        assert!(!selector_map_matches(&labels(&[("zone", "b")]), &node));
        assert!(selector_map_matches(&Labels::new(), &node));
    }
}
