//! `resources.excludeResourcePrefixes` and `resources.transformations`: what Workloads' requests
//! count as against quota, read and checked as Kueue reads them (its defaulting gives a
//! transformation without a strategy `Retain`; its validation refuses another strategy and an
//! input named twice).

use std::collections::BTreeMap;

use super::types::Resources;
use super::validate::Problems;
use crate::engine::quantity::Quantity;
use crate::engine::resource_counting::{ResourceCounting, Transformation, TransformationStrategy};

const FIELD: &str = "resources.transformations";
const RETAIN: &str = "Retain";
const REPLACE: &str = "Replace";

/// What requests count as under `resources`; each problem is added to `problems`.
pub fn resource_counting(
    resources: Option<&Resources>,
    problems: &mut Problems,
) -> ResourceCounting {
    let Some(resources) = resources else {
        return ResourceCounting::default();
    };
    let mut transformations = BTreeMap::new();
    for (index, entry) in resources.transformations.iter().flatten().enumerate() {
        let at = |leaf: &str| format!("{FIELD}[{index}].{leaf}");
        let strategy = match entry.strategy.as_deref() {
            None | Some("") | Some(RETAIN) => TransformationStrategy::Retain,
            Some(REPLACE) => TransformationStrategy::Replace,
            Some(other) => {
                problems.not_supported(&at("strategy"), other, &[RETAIN, REPLACE]);
                continue;
            }
        };
        let mut outputs = BTreeMap::new();
        for (name, text) in entry.outputs.iter().flat_map(|o| o.0.iter()) {
            match text.0.parse::<Quantity>() {
                Ok(quantity) => {
                    outputs.insert(name.clone(), quantity);
                }
                Err(error) => problems.invalid(
                    &at(&format!("outputs[{name}]")),
                    &text.0,
                    &error.to_string(),
                ),
            }
        }
        let transformation = Transformation {
            strategy,
            multiply_by: entry.multiply_by.clone().filter(|m| !m.is_empty()),
            outputs,
        };
        if transformations.contains_key(&entry.input) {
            problems.duplicate(&at("input"), &entry.input);
        } else {
            transformations.insert(entry.input.clone(), transformation);
        }
    }
    ResourceCounting {
        excluded_prefixes: resources
            .exclude_resource_prefixes
            .clone()
            .unwrap_or_default(),
        transformations,
    }
}

#[cfg(test)]
mod tests;
