//! LimitRanges and RuntimeClasses, as Kueue counts them against a Workload's pod templates
//! (`pkg/util/limitrange`, `workload.ValidateLimitRange`): the `Container` and `Pod` limits of a
//! namespace summarized into one, the defaults a container without requests takes, and the rules
//! a pod template's adjusted resources must keep (requests within limits, within the LimitRange
//! `min` and `max`). A template that breaks one waits as `Misconfigured`, as in Kueue.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::LimitRange;
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use kube::ResourceExt;

use super::pod_requests::{ContainerDefaults, ContainerResources, PodResources, Requests};
use crate::engine::ModelError;
use crate::engine::quantity::{Quantity, QuantityError};

/// Kueue's prefix when a pod template's requests exceed its limits.
pub const INVALID_RESOURCES: &str = "resources validation failed";
/// Kueue's prefix when a pod template breaks its namespace's LimitRanges.
pub const LIMIT_RANGE_UNSATISFIED: &str = "resources didn't satisfy LimitRange constraints";
const REQUESTS_ABOVE_LIMITS: &str = "requests must not exceed its limits";
const ABOVE_MAX: &str = "requests must not be above the limitRange max";
const BELOW_MIN: &str = "requests must not be below the limitRange min";

/// One LimitRange item's bounds and defaults.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LimitItem {
    pub max: Requests,
    pub min: Requests,
    pub default: Requests,
    pub default_request: Requests,
}

/// A LimitRange's `Container` and `Pod` items, in order (other types bound no pod template).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LimitRangeLimits {
    pub container: Vec<LimitItem>,
    pub pod: Vec<LimitItem>,
}

impl LimitSummary {
    /// What containers that set none are given.
    pub fn container_defaults(&self) -> Option<ContainerDefaults<'_>> {
        self.container.as_ref().map(|item| ContainerDefaults {
            limits: &item.default,
            requests: &item.default_request,
        })
    }
}

/// A namespace's LimitRanges as one (Kueue's `limitrange.Summarize`): the lowest `max`, the
/// highest `min`, the first `default` and `defaultRequest` of each resource.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LimitSummary {
    pub container: Option<LimitItem>,
    pub pod: Option<LimitItem>,
}

/// Summarizes LimitRanges in the order given (the API lists them by name); `None` for none.
pub fn summarize<'a>(
    ranges: impl IntoIterator<Item = &'a LimitRangeLimits>,
) -> Option<LimitSummary> {
    let mut summary: Option<LimitSummary> = None;
    for range in ranges {
        let summary = summary.get_or_insert_with(LimitSummary::default);
        for item in &range.container {
            add_to_summary(
                summary.container.get_or_insert_with(LimitItem::default),
                item,
            );
        }
        for item in &range.pod {
            add_to_summary(summary.pod.get_or_insert_with(LimitItem::default), item);
        }
    }
    summary
}

fn add_to_summary(summary: &mut LimitItem, item: &LimitItem) {
    merge(&mut summary.max, &item.max, Quantity::min);
    merge(&mut summary.min, &item.min, Quantity::max);
    merge(&mut summary.default, &item.default, |first, _| first);
    merge(
        &mut summary.default_request,
        &item.default_request,
        |first, _| first,
    );
}

fn merge(into: &mut Requests, from: &Requests, pick: fn(Quantity, Quantity) -> Quantity) {
    for (name, amount) in from {
        into.entry(name.clone())
            .and_modify(|held| *held = pick(*held, *amount))
            .or_insert(*amount);
    }
}

/// A LimitRange's items that bound pod templates.
pub fn limit_range(range: &LimitRange) -> Result<LimitRangeLimits, ModelError> {
    let name = format!(
        "{}/{}",
        range.namespace().unwrap_or_default(),
        range.name_any()
    );
    let mut limits = LimitRangeLimits::default();
    for (i, item) in range.spec.iter().flat_map(|s| &s.limits).enumerate() {
        let list = |leaf: &str, list: &Option<BTreeMap<String, K8sQuantity>>| {
            quantities(
                "LimitRange",
                &name,
                &format!("spec.limits[{i}].{leaf}"),
                list,
            )
        };
        let read = LimitItem {
            max: list("max", &item.max)?,
            min: list("min", &item.min)?,
            default: list("default", &item.default)?,
            default_request: list("defaultRequest", &item.default_request)?,
        };
        match item.type_.as_str() {
            "Container" => limits.container.push(read),
            "Pod" => limits.pod.push(read),
            _ => {}
        }
    }
    Ok(limits)
}

/// A RuntimeClass's `overhead.podFixed` (empty when it sets none).
pub fn runtime_class_overhead(class: &RuntimeClass) -> Result<Requests, ModelError> {
    let pod_fixed = class.overhead.as_ref().and_then(|o| o.pod_fixed.clone());
    quantities(
        "RuntimeClass",
        &class.name_any(),
        "overhead.podFixed",
        &pod_fixed,
    )
}

fn quantities(
    kind: &'static str,
    name: &str,
    field: &str,
    list: &Option<BTreeMap<String, K8sQuantity>>,
) -> Result<Requests, ModelError> {
    list.iter()
        .flatten()
        .map(|(resource, amount)| {
            amount
                .0
                .parse()
                .map(|q| (resource.clone(), q))
                .map_err(|e: QuantityError| {
                    ModelError::invalid(kind, name, format!("{field}.{resource}"), e.to_string())
                })
        })
        .collect()
}

/// Which rule a pod template's resources break.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResourceRule {
    RequestsAboveLimits,
    AboveLimitRangeMax,
    BelowLimitRangeMin,
}

impl ResourceRule {
    fn detail(self) -> &'static str {
        match self {
            ResourceRule::RequestsAboveLimits => REQUESTS_ABOVE_LIMITS,
            ResourceRule::AboveLimitRangeMax => ABOVE_MAX,
            ResourceRule::BelowLimitRangeMin => BELOW_MIN,
        }
    }
}

/// A broken rule: where in the pod spec (`containers[0]`, or empty for the pod), the resources
/// that break it, sorted, and the rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub field: String,
    pub resources: Vec<String>,
    pub rule: ResourceRule,
}

impl Violation {
    /// Kueue's field error for it, under the pod spec at `spec_path`.
    pub fn render(&self, spec_path: &str) -> String {
        let field = if self.field.is_empty() {
            spec_path.to_string()
        } else {
            format!("{spec_path}.{}", self.field)
        };
        let names = serde_json::to_string(&self.resources).unwrap_or_default();
        format!("{field}: Invalid value: {names}: {}", self.rule.detail())
    }
}

/// The rules an adjusted pod template breaks: requests above limits in any container or in the
/// pod-level resources (Kueue's `ValidateResources`), then, with LimitRanges, each container's smaller and larger of request
/// and limit against the `Container` min and max, and the pod's total requests against the `Pod`
/// ones (`limitrange.Summary.ValidatePodSpec`).
pub fn violations(resources: &PodResources, limits: Option<&LimitSummary>) -> Vec<Violation> {
    let containers = || {
        let init = resources
            .init_containers
            .iter()
            .enumerate()
            .map(|(i, (c, _))| (format!("initContainers[{i}]"), c));
        let regular = resources
            .containers
            .iter()
            .enumerate()
            .map(|(i, c)| (format!("containers[{i}]"), c));
        init.chain(regular)
    };
    let mut found = Vec::new();
    let pod_level = resources
        .pod_level
        .iter()
        .map(|p| ("resources".to_string(), p));
    for (field, container) in containers().chain(pod_level) {
        let over = greater_keys(&container.requests, &container.limits);
        push(&mut found, &field, over, ResourceRule::RequestsAboveLimits);
    }
    let Some(limits) = limits else {
        return found;
    };
    if let Some(range) = &limits.container {
        for (field, container) in containers() {
            let (low, high) = bounds(container);
            push(
                &mut found,
                &field,
                greater_keys(&high, &range.max),
                ResourceRule::AboveLimitRangeMax,
            );
            push(
                &mut found,
                &field,
                greater_keys(&range.min, &low),
                ResourceRule::BelowLimitRangeMin,
            );
        }
    }
    if let Some(range) = &limits.pod {
        let total = resources.total();
        push(
            &mut found,
            "",
            greater_keys(&total, &range.max),
            ResourceRule::AboveLimitRangeMax,
        );
        push(
            &mut found,
            "",
            greater_keys(&range.min, &total),
            ResourceRule::BelowLimitRangeMin,
        );
    }
    found
}

fn push(found: &mut Vec<Violation>, field: &str, resources: Vec<String>, rule: ResourceRule) {
    if !resources.is_empty() {
        found.push(Violation {
            field: field.to_string(),
            resources,
            rule,
        });
    }
}

/// A container's smaller and larger of request and limit, per resource.
fn bounds(container: &ContainerResources) -> (Requests, Requests) {
    let mut low = container.requests.clone();
    let mut high = container.requests.clone();
    merge(&mut low, &container.limits, Quantity::min);
    merge(&mut high, &container.limits, Quantity::max);
    (low, high)
}

/// The resources both name where `left` is greater, by name.
fn greater_keys(left: &Requests, right: &Requests) -> Vec<String> {
    left.iter()
        .filter(|(name, amount)| right.get(*name).is_some_and(|bound| *amount > bound))
        .map(|(name, _)| name.clone())
        .collect()
}

#[cfg(test)]
mod tests;
