//! A hash table of entries found by the namespace and name each entry leads to. The names are
//! read from the entry (or from what it points at) instead of being kept beside it as a key: at
//! tens of thousands of Workloads, a key of two strings per entry is a large share of a table.

use std::hash::{BuildHasher, RandomState};

use hashbrown::HashTable;
use hashbrown::hash_table::Entry;

/// What leads from an entry to its namespace and name, given the `context` it points into; `None`
/// when it leads nowhere, and such an entry is found under no name.
pub trait Named<C: ?Sized> {
    fn names<'a>(&'a self, context: &'a C) -> Option<(&'a str, &'a str)>;
}

/// Entries unique by namespace and name.
#[derive(Clone, Debug)]
pub struct NameTable<T> {
    table: HashTable<T>,
    hasher: RandomState,
}

impl<T> Default for NameTable<T> {
    fn default() -> Self {
        NameTable::with_capacity(0)
    }
}

impl<T> NameTable<T> {
    pub fn with_capacity(capacity: usize) -> Self {
        NameTable {
            table: HashTable::with_capacity(capacity),
            hasher: RandomState::new(),
        }
    }

    /// The entry named `namespace`/`name`.
    pub fn get<C: ?Sized>(&self, context: &C, namespace: &str, name: &str) -> Option<&T>
    where
        T: Named<C>,
    {
        let hash = self.hasher.hash_one((namespace, name));
        self.table
            .find(hash, |held| held.names(context) == Some((namespace, name)))
    }

    /// Holds `entry` in place of the one held before under its names, which it returns. An entry
    /// that leads to no names is not held.
    pub fn insert<C: ?Sized>(&mut self, context: &C, entry: T) -> Option<T>
    where
        T: Named<C>,
    {
        let NameTable { table, hasher } = self;
        let names = entry.names(context)?;
        let found = table.entry(
            hasher.hash_one(names),
            |held| held.names(context) == Some(names),
            |held| held.names(context).map_or(0, |n| hasher.hash_one(n)),
        );
        match found {
            Entry::Occupied(mut held) => Some(std::mem::replace(held.get_mut(), entry)),
            Entry::Vacant(free) => {
                free.insert(entry);
                None
            }
        }
    }

    /// Takes out the entry named `namespace`/`name`.
    pub fn remove<C: ?Sized>(&mut self, context: &C, namespace: &str, name: &str) -> Option<T>
    where
        T: Named<C>,
    {
        let hash = self.hasher.hash_one((namespace, name));
        let held = self
            .table
            .find_entry(hash, |held| held.names(context) == Some((namespace, name)))
            .ok()?;
        Some(held.remove().0)
    }

    /// Every entry, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.table.iter()
    }

    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    pub fn clear(&mut self) {
        self.table.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries that are indices into a list of names, as the engine's slot numbers are.
    struct Index(usize);

    impl Named<[(String, String)]> for Index {
        fn names<'a>(&'a self, names: &'a [(String, String)]) -> Option<(&'a str, &'a str)> {
            names.get(self.0).map(|(ns, n)| (ns.as_str(), n.as_str()))
        }
    }

    #[test]
    fn entries_are_found_by_the_names_they_lead_to_through_growth_replacement_and_removal() {
        let mut names = Vec::new();
        let mut table = NameTable::<Index>::with_capacity(0);
        for i in 0..300 {
            for ns in ["a", "b"] {
                names.push((ns.to_string(), format!("w{i}")));
                assert!(table.insert(&names[..], Index(names.len() - 1)).is_none());
            }
        }
        // A later entry under the same names replaces the earlier one.
        names.push(("a".into(), "w7".into()));
        let replaced = table.insert(&names[..], Index(names.len() - 1));
        assert_eq!(replaced.map(|i| i.0), Some(14));
        assert_eq!(table.get(&names[..], "a", "w7").map(|i| i.0), Some(600));
        assert_eq!(table.get(&names[..], "b", "w7").map(|i| i.0), Some(15));
        assert_eq!(table.len(), 600);

        for i in (0..300).step_by(3) {
            let removed = table.remove(&names[..], "b", &format!("w{i}"));
            assert_eq!(removed.map(|e| e.0), Some(2 * i + 1));
        }
        assert!(table.remove(&names[..], "b", "w0").is_none());
        assert_eq!(table.len(), 500);
        for i in 0..300 {
            let b = table.get(&names[..], "b", &format!("w{i}")).map(|e| e.0);
            assert_eq!(b, (i % 3 != 0).then_some(2 * i + 1), "b/w{i}");
            assert!(
                table.get(&names[..], "a", &format!("w{i}")).is_some(),
                "a/w{i}"
            );
        }
        assert!(table.get(&names[..], "c", "w1").is_none());
    }

    #[test]
    fn an_entry_that_leads_to_no_names_is_not_held() {
        let names = [("a".to_string(), "w".to_string())];
        let mut table = NameTable::<Index>::default();
        assert!(table.insert(&names[..], Index(5)).is_none());
        assert!(table.is_empty());
        table.insert(&names[..], Index(0));
        assert_eq!(table.iter().map(|e| e.0).collect::<Vec<_>>(), vec![0]);
        table.clear();
        assert!(table.get(&names[..], "a", "w").is_none());
    }
}
