//! The engine's slots by workload key. Each slot's model already holds its workload's namespace
//! and name, so the index keeps only slot numbers and finds a key through the models.

use super::state::WorkloadSlot;
use crate::name_table::{NameTable, Named};

/// Slot numbers, found by the namespace and name in the slots they point at.
pub type SlotIndex = NameTable<u32>;

impl Named<[WorkloadSlot]> for u32 {
    fn names<'a>(&'a self, slots: &'a [WorkloadSlot]) -> Option<(&'a str, &'a str)> {
        let slot = slots.get(*self as usize)?;
        Some((&slot.model.namespace, &slot.model.name))
    }
}
