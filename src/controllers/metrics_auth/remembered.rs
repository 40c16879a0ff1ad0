//! The answers `/metrics` remembers: each until its own expiry, and at most a fixed number, so
//! that callers with many tokens cost bounded memory without making everyone reviewed again.

use std::collections::{BTreeMap, HashMap};

use tokio::time::Instant;

/// Answers by key, each kept until its expiry. When full, the expired answers go first, then
/// those nearest their expiry (the oldest of a kind, answers of one kind being kept equally
/// long): a flood of refused tokens, remembered briefly, pushes out its own answers before a
/// scraper's allowed one.
#[derive(Debug)]
pub struct Remembered<V> {
    entries: HashMap<String, Entry<V>>,
    /// The keys by expiry, then insertion, soonest first.
    by_expiry: BTreeMap<(Instant, u64), String>,
    inserted: u64,
    capacity: usize,
}

#[derive(Debug)]
struct Entry<V> {
    until: Instant,
    order: u64,
    value: V,
}

impl<V: Clone> Remembered<V> {
    /// Holds at most `capacity` answers (at least one).
    pub fn new(capacity: usize) -> Self {
        Remembered {
            entries: HashMap::new(),
            by_expiry: BTreeMap::new(),
            inserted: 0,
            capacity: capacity.max(1),
        }
    }

    /// The answer under `key`, if it has not expired at `now`.
    pub fn get(&self, key: &str, now: Instant) -> Option<V> {
        self.entries
            .get(key)
            .filter(|entry| entry.until > now)
            .map(|entry| entry.value.clone())
    }

    /// Remembers `value` under `key` until `until`, forgetting what has expired at `now` and,
    /// if still full, the answers nearest their expiry.
    pub fn insert(&mut self, key: String, value: V, until: Instant, now: Instant) {
        if let Some(old) = self.entries.remove(&key) {
            self.by_expiry.remove(&(old.until, old.order));
        }
        while let Some(entry) = self.by_expiry.first_entry() {
            let (expiry, _) = *entry.key();
            if expiry > now && self.entries.len() < self.capacity {
                break;
            }
            let forgotten = entry.remove();
            self.entries.remove(&forgotten);
        }
        self.inserted += 1;
        let order = self.inserted;
        self.by_expiry.insert((until, order), key.clone());
        self.entries.insert(
            key,
            Entry {
                until,
                order,
                value,
            },
        );
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests;
