//! Resource names interned to dense indexes, so capacity arithmetic runs over plain arrays.

use std::collections::{BTreeMap, HashMap};

use crate::engine::quantity::Quantity;

/// The `pods` resource: every pod takes one, and it is always index 0.
pub const PODS: &str = "pods";

/// Dense index of a resource name inside one snapshot.
pub type ResourceId = usize;

/// Resource name → amount, as written in manifests.
pub type ResourceList = BTreeMap<String, Quantity>;

/// Resource names seen so far. Index 0 is always `pods`.
#[derive(Clone, Debug)]
pub struct ResourceRegistry {
    names: Vec<String>,
    ids: HashMap<String, ResourceId>,
}

impl Default for ResourceRegistry {
    fn default() -> Self {
        ResourceRegistry {
            names: vec![PODS.to_string()],
            ids: HashMap::from([(PODS.to_string(), 0)]),
        }
    }
}

impl ResourceRegistry {
    /// The id of `name`, registering it when new.
    pub fn intern(&mut self, name: &str) -> ResourceId {
        if let Some(id) = self.ids.get(name) {
            return *id;
        }
        let id = self.names.len();
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), id);
        id
    }

    /// The id of `name` if it was ever seen.
    pub fn get(&self, name: &str) -> Option<ResourceId> {
        self.ids.get(name).copied()
    }

    /// The name behind `id`.
    pub fn name(&self, id: ResourceId) -> &str {
        self.names.get(id).map_or("", String::as_str)
    }

    /// Number of registered resources.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Never true: `pods` is always registered.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// `list` as a dense vector, registering new names.
    pub fn dense(&mut self, list: &ResourceList) -> ResVec {
        let mut out = ResVec::default();
        for (name, amount) in list {
            let id = self.intern(name);
            out.add(id, *amount);
        }
        out
    }
}

/// A dense resource vector indexed by [`ResourceId`]; missing trailing entries are zero.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResVec(Vec<Quantity>);

impl ResVec {
    /// The amount of resource `id`.
    pub fn get(&self, id: ResourceId) -> Quantity {
        self.0.get(id).copied().unwrap_or(Quantity::ZERO)
    }

    /// Adds `amount` to resource `id`.
    pub fn add(&mut self, id: ResourceId, amount: Quantity) {
        if self.0.len() <= id {
            self.0.resize(id + 1, Quantity::ZERO);
        }
        self.0[id] += amount;
    }

    /// `self += other × factor` (a negative factor subtracts).
    pub fn add_scaled(&mut self, other: &ResVec, factor: i64) {
        for (id, amount) in other.iter() {
            self.add(id, amount.saturating_mul(factor));
        }
    }

    /// Non-zero entries.
    pub fn iter(&self) -> impl Iterator<Item = (ResourceId, Quantity)> + '_ {
        self.0
            .iter()
            .enumerate()
            .filter(|(_, q)| !q.is_zero())
            .map(|(id, q)| (id, *q))
    }

    /// Whether every entry is zero.
    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|q| q.is_zero())
    }
}

/// Per-pod requests of one pod set, with the implicit `pods: 1` added.
#[derive(Clone, Debug)]
pub struct PodShape {
    /// (resource, nanos) pairs with a positive amount, `pods` first.
    pub entries: Vec<(ResourceId, i128)>,
    /// Resources the pod asks for that no node has ever offered: nothing fits.
    pub unknown: Vec<String>,
}

impl PodShape {
    /// The shape of a pod with `requests`, against resources the snapshot knows.
    pub fn new(registry: &ResourceRegistry, requests: &ResourceList) -> PodShape {
        let mut entries = vec![(0, Quantity::from_units(1).nanos())];
        let mut unknown = Vec::new();
        for (name, amount) in requests {
            if name == PODS || amount.nanos() <= 0 {
                continue;
            }
            match registry.get(name) {
                Some(id) => entries.push((id, amount.nanos())),
                None => unknown.push(name.clone()),
            }
        }
        PodShape { entries, unknown }
    }

    /// The requests as a dense vector (including `pods: 1`).
    pub fn as_resvec(&self) -> ResVec {
        let mut out = ResVec::default();
        for (id, nanos) in &self.entries {
            out.add(*id, Quantity::from_nanos(*nanos));
        }
        out
    }
}

/// `floor(free / per)`, exact. Amounts that fit in 64 bits (CPU, pods, GPUs) use a native
/// division; larger ones (memory in nano-bytes) a float estimate corrected with exact
/// multiplication, avoiding a slow 128-bit division.
#[inline]
pub fn fit_count(free: i128, per: i128) -> u64 {
    if free <= 0 || per <= 0 {
        return 0;
    }
    if let (Ok(free), Ok(per)) = (u64::try_from(free), u64::try_from(per)) {
        return free / per;
    }
    // Truncation equals floor for positive values.
    let estimate = free as f64 / per as f64;
    if estimate.is_nan() || estimate >= 1e15 {
        return (free / per).min(u64::MAX as i128) as u64;
    }
    // The estimate is off by a few at most; checked products keep amounts near the i128 limit
    // from overflowing while it is corrected.
    let fits = |q: i128| q.checked_mul(per).is_some_and(|used| used <= free);
    let mut q = estimate as i128;
    while q > 0 && !fits(q) {
        q -= 1;
    }
    while fits(q + 1) {
        q += 1;
    }
    q as u64
}

#[cfg(test)]
mod tests;
