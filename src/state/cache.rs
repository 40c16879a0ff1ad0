//! One kind's objects, converted, as a watch delivers them: `apply` an object, `delete` a key,
//! `reset` to a full list. An object its conversion refuses is set aside with the reason (kind,
//! name, field, why) instead of its converted form, and the rest of the cache keeps working.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

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

/// Converted objects of one kind by key, and the refused ones with their reasons.
#[derive(Clone, Debug)]
pub struct Cache<T> {
    objects: BTreeMap<String, T>,
    set_aside: BTreeMap<String, ModelError>,
}

impl<T> Default for Cache<T> {
    fn default() -> Self {
        Cache {
            objects: BTreeMap::new(),
            set_aside: BTreeMap::new(),
        }
    }
}

impl<T: PartialEq> Cache<T> {
    /// Holds the conversion of the object at `key`, or sets it aside with its error.
    pub fn apply(&mut self, key: String, converted: Result<T, ModelError>) -> Applied<'_, T> {
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
    pub fn delete(&mut self, key: &str) -> bool {
        self.set_aside.remove(key);
        self.objects.remove(key).is_some()
    }

    /// The keys held now (valid or set aside) that are not in `listed`: what a full re-list
    /// removes.
    pub fn missing_from(&self, listed: &BTreeSet<String>) -> Vec<String> {
        self.objects
            .keys()
            .chain(self.set_aside.keys())
            .filter(|k| !listed.contains(*k))
            .cloned()
            .collect()
    }

    pub fn get(&self, key: &str) -> Option<&T> {
        self.objects.get(key)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &T)> {
        self.objects.iter()
    }

    /// The objects whose key starts with `prefix`, by key.
    pub fn with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a String, &'a T)> {
        self.objects
            .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
            .take_while(move |(key, _)| key.starts_with(prefix))
    }

    /// The refused objects and why, by key.
    pub fn set_aside(&self) -> impl Iterator<Item = (&String, &ModelError)> {
        self.set_aside.iter()
    }
}

#[cfg(test)]
mod tests;
