//! A Workload's pod sets counted as Kueue counts them: each template adjusted by its namespace's
//! LimitRanges and its RuntimeClass's overhead (`workload.AdjustResources`), and the message a
//! template that breaks the resource rules waits with (`workload.ValidateAdmissibility`).

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::PodSpec;

use super::limit_ranges::{
    INVALID_RESOURCES, LIMIT_RANGE_UNSATISFIED, LimitSummary, ResourceRule, Violation, violations,
};
use super::pod_requests::{Adjustments, PodResources, Requests};
use crate::engine::ModelError;
use crate::engine::resource_counting::ResourceCounting;

/// What a Workload's namespace and runtime classes add to its pod templates.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResourceContext {
    /// The namespace's LimitRanges, summarized; `None` when it has none.
    pub limits: Option<LimitSummary>,
    /// `overhead.podFixed` of each RuntimeClass the templates name that exists.
    pub runtime_class_overheads: BTreeMap<String, Requests>,
    /// What requests count as: the configuration's excluded prefixes and transformations.
    pub counting: Arc<ResourceCounting>,
}

/// One pod set's requests per pod and the rules its template breaks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodSetResources {
    pub requests: Requests,
    pub violations: Vec<Violation>,
}

/// The requests of one pod of `spec`, the template of pod set `index` of Workload `workload`
/// (`namespace/name`), after Kueue's adjustments, as quota counts them (excluded prefixes and
/// transformations applied last, so the resource rules judge the template as written); a request
/// that is not a quantity is refused.
pub fn pod_set_resources(
    workload: &str,
    index: usize,
    spec: &PodSpec,
    context: &ResourceContext,
) -> Result<PodSetResources, ModelError> {
    let mut resources = PodResources::read(spec).map_err(|e| {
        ModelError::invalid(
            "Workload",
            workload,
            format!("spec.podSets[{index}].template.spec.{}", e.field),
            e.source.to_string(),
        )
    })?;
    let runtime_class_overhead = spec
        .runtime_class_name
        .as_ref()
        .and_then(|name| context.runtime_class_overheads.get(name));
    resources.adjust(Adjustments {
        container_defaults: context
            .limits
            .as_ref()
            .and_then(LimitSummary::container_defaults),
        runtime_class_overhead,
    });
    Ok(PodSetResources {
        violations: violations(&resources, context.limits.as_ref()),
        requests: context.counting.count(resources.total()),
    })
}

/// Why the Workload cannot be admitted as its pod sets stand, in Kueue's words: requests above
/// limits first, then the LimitRange bounds; `None` when every pod set keeps them. `pod_sets`
/// holds each pod set's violations by index.
pub fn inadmissible_message<'a>(
    pod_sets: impl IntoIterator<Item = &'a [Violation]>,
) -> Option<Arc<String>> {
    let mut invalid = Vec::new();
    let mut limit_range = Vec::new();
    for (index, found) in pod_sets.into_iter().enumerate() {
        let spec_path = format!("spec.podSets[{index}].template.spec");
        for violation in found {
            let rendered = violation.render(&spec_path);
            match violation.rule {
                ResourceRule::RequestsAboveLimits => invalid.push(rendered),
                ResourceRule::AboveLimitRangeMax | ResourceRule::BelowLimitRangeMin => {
                    limit_range.push(rendered)
                }
            }
        }
    }
    let (prefix, errors) = if !invalid.is_empty() {
        (INVALID_RESOURCES, invalid)
    } else if !limit_range.is_empty() {
        (LIMIT_RANGE_UNSATISFIED, limit_range)
    } else {
        return None;
    };
    Some(Arc::new(format!("{prefix}: {}", aggregate(errors))))
}

/// Several errors as Kubernetes joins them: one alone, several in brackets, repeats dropped.
fn aggregate(mut errors: Vec<String>) -> String {
    let mut seen = std::collections::BTreeSet::new();
    errors.retain(|e| seen.insert(e.clone()));
    match errors.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}
