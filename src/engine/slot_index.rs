//! The engine's slots by workload key. Each slot's model already holds its workload's namespace
//! and name, so the index keeps only slot numbers and compares a key with the models: a copy of
//! both strings per workload, with a map entry around them, is what it saves.

use std::hash::{BuildHasher, RandomState};

use hashbrown::HashTable;
use hashbrown::hash_table::Entry;

use super::decision::WorkloadKey;
use super::state::Wl;

/// Slot numbers, found by the namespace and name in the slots they point at.
#[derive(Clone, Debug, Default)]
pub struct SlotIndex {
    table: HashTable<u32>,
    hasher: RandomState,
}

impl SlotIndex {
    pub fn with_capacity(capacity: usize) -> Self {
        SlotIndex {
            table: HashTable::with_capacity(capacity),
            hasher: RandomState::new(),
        }
    }

    /// The slot holding the workload `key` names.
    pub fn get(&self, slots: &[Wl], key: &WorkloadKey) -> Option<u32> {
        let hash = hash_of(&self.hasher, &key.namespace, &key.name);
        self.table
            .find(hash, |&index| holds(slots, index, key))
            .copied()
    }

    /// Enters slot `index` under the key its model holds, in place of any slot entered under it
    /// before.
    pub fn insert(&mut self, slots: &[Wl], index: u32) {
        let Some(slot) = slots.get(index as usize) else {
            return;
        };
        let (namespace, name) = (&slot.model.namespace, &slot.model.name);
        let SlotIndex { table, hasher } = self;
        let entry = table.entry(
            hash_of(hasher, namespace, name),
            |&other| {
                slots
                    .get(other as usize)
                    .is_some_and(|o| o.model.namespace == *namespace && o.model.name == *name)
            },
            |&other| {
                slots
                    .get(other as usize)
                    .map_or(0, |o| hash_of(hasher, &o.model.namespace, &o.model.name))
            },
        );
        match entry {
            Entry::Occupied(mut held) => *held.get_mut() = index,
            Entry::Vacant(free) => {
                free.insert(index);
            }
        }
    }

    /// Takes the workload `key` names out; returns the slot it was in.
    pub fn remove(&mut self, slots: &[Wl], key: &WorkloadKey) -> Option<u32> {
        let hash = hash_of(&self.hasher, &key.namespace, &key.name);
        let held = self
            .table
            .find_entry(hash, |&index| holds(slots, index, key))
            .ok()?;
        Some(held.remove().0)
    }
}

fn hash_of(hasher: &RandomState, namespace: &str, name: &str) -> u64 {
    hasher.hash_one((namespace, name))
}

fn holds(slots: &[Wl], index: u32, key: &WorkloadKey) -> bool {
    slots
        .get(index as usize)
        .is_some_and(|slot| slot.model.namespace == key.namespace && slot.model.name == key.name)
}
