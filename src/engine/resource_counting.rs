//! What a pod's requests count as against quota: Kueue's `resources.excludeResourcePrefixes`
//! (requests whose name starts with a listed prefix are not counted) and
//! `resources.transformations` (a request turned into other resources, as GPU and MIG users make
//! quota match what they buy), applied once to the requests of one pod of each pod set before
//! they are scaled by the pod count, in that order (Kueue's `workload.NewInfo`).

use std::collections::BTreeMap;

use super::quantity::Quantity;

/// Requests of one pod, by resource name.
pub type PodRequests = BTreeMap<String, Quantity>;

/// Whether a transformed request is still counted as itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TransformationStrategy {
    /// Counted as itself and as its outputs (Kueue's default).
    #[default]
    Retain,
    /// Counted only as its outputs.
    Replace,
}

/// One `resources.transformations` entry, keyed by its input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Transformation {
    pub strategy: TransformationStrategy,
    /// `multiplyBy`: the outputs are computed from the input times the quantity of this
    /// resource, when the pod requests it.
    pub multiply_by: Option<String>,
    /// Output resources and their quantity per unit of input; a negative one is an allowance.
    pub outputs: BTreeMap<String, Quantity>,
}

/// How requests are counted; the default counts every request as itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceCounting {
    pub excluded_prefixes: Vec<String>,
    pub transformations: BTreeMap<String, Transformation>,
}

impl ResourceCounting {
    /// Whether every request counts as itself.
    pub fn is_identity(&self) -> bool {
        self.excluded_prefixes.is_empty() && self.transformations.is_empty()
    }

    /// The requests of one pod as quota counts them.
    pub fn count(&self, requests: PodRequests) -> PodRequests {
        if self.is_identity() {
            return requests;
        }
        let kept: PodRequests = requests
            .into_iter()
            .filter(|(name, _)| !self.excluded(name))
            .collect();
        self.transform(kept)
    }

    fn excluded(&self, name: &str) -> bool {
        self.excluded_prefixes.iter().any(|p| name.starts_with(p))
    }

    /// Kueue's `applyResourceTransformations`: what the transformations generate is summed apart
    /// from what the pod asked for, so an allowance (a negative output) cancels other outputs but
    /// never a request the pod made under the same name; a generated total below zero counts as
    /// zero.
    fn transform(&self, input: PodRequests) -> PodRequests {
        if !input
            .keys()
            .any(|name| self.transformations.contains_key(name))
        {
            return input;
        }
        let mut retained = PodRequests::new();
        let mut generated = PodRequests::new();
        for (name, quantity) in &input {
            let Some(transformation) = self.transformations.get(name) else {
                retained.insert(name.clone(), *quantity);
                continue;
            };
            // The multiplier scales what the outputs are computed from, not the retained input.
            let base = match transformation
                .multiply_by
                .as_ref()
                .and_then(|by| input.get(by))
            {
                Some(by) => quantity.times(*by),
                None => *quantity,
            };
            for (output, per_unit) in &transformation.outputs {
                let entry = generated.entry(output.clone()).or_default();
                *entry = entry.saturating_add(base.times(*per_unit));
            }
            if transformation.strategy == TransformationStrategy::Retain {
                retained.insert(name.clone(), *quantity);
            }
        }
        for (name, quantity) in generated {
            let entry = retained.entry(name).or_default();
            *entry = entry.saturating_add(quantity.clamp_non_negative());
        }
        retained
    }
}

#[cfg(test)]
mod tests;
