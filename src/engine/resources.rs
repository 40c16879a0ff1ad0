//! Interned resource names, flavors and flavor-resource pairs, and dense per-pair vectors.
//!
//! Every flavor-resource pair (`fr`) that some ClusterQueue or Cohort gives quota for gets a dense
//! index, so quota, usage and requests are plain vectors indexed by [`FlavorResource`] instead of nested maps.

use std::collections::HashMap;

use super::quantity::Quantity;

/// An interned resource name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResourceId(pub u32);

/// An interned flavor name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlavorId(pub u32);

/// A dense flavor-resource pair index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlavorResource(pub u32);

impl FlavorResource {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Name tables for resources, flavors and flavor-resource pairs.
#[derive(Clone, Debug, Default)]
pub struct Interner {
    resources: Vec<String>,
    resource_ids: HashMap<String, ResourceId>,
    flavors: Vec<String>,
    flavor_ids: HashMap<String, FlavorId>,
    pairs: Vec<(FlavorId, ResourceId)>,
    pair_ids: HashMap<(FlavorId, ResourceId), FlavorResource>,
}

impl Interner {
    pub fn resource(&mut self, name: &str) -> ResourceId {
        if let Some(id) = self.resource_ids.get(name) {
            return *id;
        }
        let id = ResourceId(self.resources.len() as u32);
        self.resources.push(name.to_string());
        self.resource_ids.insert(name.to_string(), id);
        id
    }

    pub fn flavor(&mut self, name: &str) -> FlavorId {
        if let Some(id) = self.flavor_ids.get(name) {
            return *id;
        }
        let id = FlavorId(self.flavors.len() as u32);
        self.flavors.push(name.to_string());
        self.flavor_ids.insert(name.to_string(), id);
        id
    }

    pub fn pair(&mut self, flavor: FlavorId, resource: ResourceId) -> FlavorResource {
        if let Some(fr) = self.pair_ids.get(&(flavor, resource)) {
            return *fr;
        }
        let fr = FlavorResource(self.pairs.len() as u32);
        self.pairs.push((flavor, resource));
        self.pair_ids.insert((flavor, resource), fr);
        fr
    }

    pub fn find_resource(&self, name: &str) -> Option<ResourceId> {
        self.resource_ids.get(name).copied()
    }

    pub fn find_flavor(&self, name: &str) -> Option<FlavorId> {
        self.flavor_ids.get(name).copied()
    }

    pub fn find_pair(&self, flavor: FlavorId, resource: ResourceId) -> Option<FlavorResource> {
        self.pair_ids.get(&(flavor, resource)).copied()
    }

    pub fn resource_name(&self, id: ResourceId) -> &str {
        &self.resources[id.0 as usize]
    }

    pub fn flavor_name(&self, id: FlavorId) -> &str {
        &self.flavors[id.0 as usize]
    }

    pub fn pair_of(&self, fr: FlavorResource) -> (FlavorId, ResourceId) {
        self.pairs[fr.index()]
    }

    pub fn pair_count(&self) -> usize {
        self.pairs.len()
    }

    pub fn flavor_count(&self) -> usize {
        self.flavors.len()
    }

    pub fn resource_count(&self) -> usize {
        self.resources.len()
    }
}

/// A quantity per flavor-resource pair.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PerFlavorResource(Vec<Quantity>);

impl PerFlavorResource {
    pub fn zeros(len: usize) -> Self {
        PerFlavorResource(vec![Quantity::ZERO; len])
    }

    pub fn get(&self, fr: FlavorResource) -> Quantity {
        self.0.get(fr.index()).copied().unwrap_or(Quantity::ZERO)
    }

    pub fn set(&mut self, fr: FlavorResource, value: Quantity) {
        if let Some(slot) = self.0.get_mut(fr.index()) {
            *slot = value;
        }
    }

    pub fn add(&mut self, fr: FlavorResource, value: Quantity) {
        if let Some(slot) = self.0.get_mut(fr.index()) {
            *slot += value;
        }
    }
}

/// A sparse request: (pair, amount), sorted by pair, no duplicates.
pub type FlavorResourceAmounts = Vec<(FlavorResource, Quantity)>;

/// Adds `amount` to `fr` in a sorted sparse request.
pub fn add_amount(amounts: &mut FlavorResourceAmounts, fr: FlavorResource, amount: Quantity) {
    match amounts.binary_search_by_key(&fr, |(f, _)| *f) {
        Ok(i) => amounts[i].1 += amount,
        Err(i) => amounts.insert(i, (fr, amount)),
    }
}

/// The amount for `fr` in a sorted sparse request.
pub fn amount_of(amounts: &FlavorResourceAmounts, fr: FlavorResource) -> Quantity {
    amounts
        .binary_search_by_key(&fr, |(f, _)| *f)
        .map(|i| amounts[i].1)
        .unwrap_or(Quantity::ZERO)
}

#[cfg(test)]
mod tests;
