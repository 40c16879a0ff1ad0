//! A map for the one-to-few entries of a pod set's requests, flavors and usage.
//!
//! A `BTreeMap` allocates a whole node (room for eleven entries) for its first entry; a Workload
//! holds several such maps per pod set, so most of their memory was empty slots. [`SmallMap`] keeps
//! its entries in one exactly sized vector, sorted by key with keys unique, so it iterates and
//! serializes in the same order as a `BTreeMap` of the same entries, two maps with the same entries
//! are equal however they were built, and its JSON (and JSON schema) is the `BTreeMap`'s.

use std::borrow::{Borrow, Cow};
use std::fmt;
use std::marker::PhantomData;
use std::ops::Index;
use std::{iter, slice, vec};

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A map sorted by key, stored as a vector of entries without spare room.
#[derive(Clone, PartialEq, Eq)]
pub struct SmallMap<K, V> {
    /// Sorted by key, keys unique.
    entries: Vec<(K, V)>,
}

/// The entries of a [`SmallMap`] by reference, in key order.
pub type Iter<'a, K, V> = iter::Map<slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> (&'a K, &'a V)>;

/// The keys of a [`SmallMap`], in order.
pub type Keys<'a, K, V> = iter::Map<slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> &'a K>;

/// The values of a [`SmallMap`], in key order.
pub type Values<'a, K, V> = iter::Map<slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> &'a V>;

impl<K, V> SmallMap<K, V> {
    /// An empty map; it allocates nothing.
    pub const fn new() -> Self {
        Self {
            entries: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn iter(&self) -> Iter<'_, K, V> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> Keys<'_, K, V> {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> Values<'_, K, V> {
        self.entries.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.entries.iter_mut().map(|(_, v)| v)
    }
}

impl<K: Ord, V> SmallMap<K, V> {
    /// Where `key` is, or where it would go.
    fn position<Q>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.entries.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let i = self.position(key).ok()?;
        Some(&self.entries[i].1)
    }

    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.position(key).is_ok()
    }

    /// Sets `key` to `value`, returning the value it replaced, as `BTreeMap::insert` does.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.position(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                // Grow by one, not by doubling: these maps hold a handful of entries and live as
                // long as their Workload, so spare room would be held for that long.
                self.entries.reserve_exact(1);
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    /// Sorts entries pushed in any order and keeps, for each key, the one pushed last (what
    /// inserting them one by one into a `BTreeMap` keeps), then drops the spare room.
    fn normalize(&mut self) {
        if !self.entries.is_sorted_by(|(a, _), (b, _)| a < b) {
            // Stable, so entries with the same key stay in the order they were pushed.
            self.entries.sort_by(|(a, _), (b, _)| a.cmp(b));
            self.entries.dedup_by(|later, kept| {
                let same = later.0 == kept.0;
                if same {
                    std::mem::swap(later, kept);
                }
                same
            });
        }
        self.entries.shrink_to_fit();
    }
}

impl<K, V> Default for SmallMap<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for SmallMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: Ord, V> FromIterator<(K, V)> for SmallMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut map = Self {
            entries: iter.into_iter().collect(),
        };
        map.normalize();
        map
    }
}

impl<K: Ord, V, const N: usize> From<[(K, V); N]> for SmallMap<K, V> {
    fn from(entries: [(K, V); N]) -> Self {
        entries.into_iter().collect()
    }
}

impl<K, V> IntoIterator for SmallMap<K, V> {
    type Item = (K, V);
    type IntoIter = vec::IntoIter<(K, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<'a, K, V> IntoIterator for &'a SmallMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Iter<'a, K, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<K, Q, V> Index<&Q> for SmallMap<K, V>
where
    K: Ord + Borrow<Q>,
    Q: Ord + ?Sized,
{
    type Output = V;

    /// Panics when `key` is absent, as `BTreeMap`'s indexing does.
    fn index(&self, key: &Q) -> &V {
        match self.get(key) {
            Some(v) => v,
            None => panic!("key not in SmallMap"),
        }
    }
}

impl<K: Serialize, V: Serialize> Serialize for SmallMap<K, V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (k, v) in self {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, K, V> Deserialize<'de> for SmallMap<K, V>
where
    K: Deserialize<'de> + Ord,
    V: Deserialize<'de>,
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(SmallMapVisitor(PhantomData))
    }
}

struct SmallMapVisitor<K, V>(PhantomData<(K, V)>);

impl<'de, K, V> Visitor<'de> for SmallMapVisitor<K, V>
where
    K: Deserialize<'de> + Ord,
    V: Deserialize<'de>,
{
    type Value = SmallMap<K, V>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = access.next_entry()? {
            entries.push(entry);
        }
        // A repeated key keeps its last value, as `BTreeMap`'s deserialization does.
        let mut map = SmallMap { entries };
        map.normalize();
        Ok(map)
    }
}

/// The schema of a `BTreeMap` of the same types, so the CRDs do not depend on which map holds a
/// field.
impl<K: JsonSchema, V: JsonSchema> JsonSchema for SmallMap<K, V> {
    fn inline_schema() -> bool {
        <std::collections::BTreeMap<K, V>>::inline_schema()
    }

    fn schema_name() -> Cow<'static, str> {
        <std::collections::BTreeMap<K, V>>::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        <std::collections::BTreeMap<K, V>>::schema_id()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        <std::collections::BTreeMap<K, V>>::json_schema(generator)
    }
}

#[cfg(test)]
mod tests;
