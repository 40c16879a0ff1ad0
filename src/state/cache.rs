//! One kind's objects, converted, as a watch delivers them: `apply` an object, `delete` a key,
//! `reset` to a full list. An object its conversion refuses is set aside with the reason (kind,
//! name, field, why) instead of its converted form, and the rest of the cache keeps working.
//! Namespaced kinds are keyed by [`ObjectKey`], cluster-scoped ones by their name.

use std::borrow::Borrow;
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::RangeFrom;

use crate::api::ObjectKey;
use crate::engine::ModelError;

/// What an `apply` did to the cache.
#[derive(Debug, PartialEq)]
pub enum Applied<'a, T> {
    /// The converted object is new or differs from the one held.
    Changed(&'a T),
    /// The same converted object was held already.
    Unchanged,
    /// The object was refused: whatever was held under its key is gone, and the reason is kept.
    SetAside { had_valid: bool },
}

/// What a cache is keyed by: an object's name for a cluster-scoped kind, its [`ObjectKey`] for a
/// namespaced one.
pub trait CacheKey: Ord + Clone {
    /// The key as an object key, to name a refused object.
    fn object_key(&self) -> ObjectKey;
}

impl CacheKey for String {
    fn object_key(&self) -> ObjectKey {
        ObjectKey::new("", self.as_str())
    }
}

impl CacheKey for ObjectKey {
    fn object_key(&self) -> ObjectKey {
        self.clone()
    }
}

/// Converted objects of one kind by key, and the refused ones with their reasons.
#[derive(Clone, Debug)]
pub struct Cache<K, T> {
    objects: BTreeMap<K, T>,
    set_aside: BTreeMap<K, ModelError>,
}

impl<K, T> Default for Cache<K, T> {
    fn default() -> Self {
        Cache {
            objects: BTreeMap::new(),
            set_aside: BTreeMap::new(),
        }
    }
}

impl<K: CacheKey, T: PartialEq> Cache<K, T> {
    /// Holds the conversion of the object at `key`, or sets it aside with its error.
    pub fn apply(&mut self, key: K, converted: Result<T, ModelError>) -> Applied<'_, T> {
        match converted {
            Ok(object) => {
                self.set_aside.remove(&key);
                if self.objects.get(&key) == Some(&object) {
                    return Applied::Unchanged;
                }
                let slot = match self.objects.entry(key) {
                    Entry::Occupied(mut held) => {
                        held.insert(object);
                        held.into_mut()
                    }
                    Entry::Vacant(slot) => slot.insert(object),
                };
                Applied::Changed(slot)
            }
            Err(error) => {
                let had_valid = self.objects.remove(&key).is_some();
                self.set_aside.insert(key, error);
                Applied::SetAside { had_valid }
            }
        }
    }

    /// Forgets `key`. Returns whether a valid object was held under it.
    pub fn delete<Q: Ord + ?Sized>(&mut self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.set_aside.remove(key);
        self.objects.remove(key).is_some()
    }

    /// The keys held now (valid or set aside) that are not in `listed`: what a full re-list
    /// removes.
    pub fn missing_from(&self, listed: &BTreeSet<K>) -> Vec<K> {
        self.objects
            .keys()
            .chain(self.set_aside.keys())
            .filter(|k| !listed.contains(*k))
            .cloned()
            .collect()
    }

    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&T>
    where
        K: Borrow<Q>,
    {
        self.objects.get(key)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&K, &T)> {
        self.objects.iter()
    }

    /// The refused objects and why, by key.
    pub fn set_aside(&self) -> impl Iterator<Item = (&K, &ModelError)> {
        self.set_aside.iter()
    }
}

impl<T: PartialEq> Cache<ObjectKey, T> {
    /// The objects of `namespace`, by name: keys order by namespace first, so they are one range.
    pub fn in_namespace<'a>(
        &'a self,
        namespace: &'a str,
    ) -> impl Iterator<Item = (&'a ObjectKey, &'a T)> {
        let first: RangeFrom<ObjectKey> = ObjectKey::new(namespace, "")..;
        self.objects
            .range(first)
            .take_while(move |(key, _)| key.namespace == namespace)
    }
}

#[cfg(test)]
mod tests;
