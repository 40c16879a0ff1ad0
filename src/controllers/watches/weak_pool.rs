//! Values shared between the objects read with equal ones, held weakly: a value stays in the pool
//! only while some object still holds it, so the pool never keeps alive what the watches dropped.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

/// The values read so far, by a hash of their content.
#[derive(Debug)]
pub struct WeakPool<T: ?Sized> {
    known: HashMap<u64, Weak<T>>,
    /// How many entries `known` may hold before those whose value is gone are dropped.
    sweep_at: usize,
}

impl<T: ?Sized> Default for WeakPool<T> {
    fn default() -> Self {
        WeakPool {
            known: HashMap::new(),
            sweep_at: 0,
        }
    }
}

impl<T: ?Sized + PartialEq> WeakPool<T> {
    /// The value equal to `value` the pool already holds, when there is one; else `value`,
    /// which the pool remembers. `hash` is a hash of `value`'s content.
    pub fn share(&mut self, hash: u64, value: Arc<T>) -> Arc<T> {
        match self.known.get(&hash).and_then(Weak::upgrade) {
            // Equal hashes of unequal values are not shared; the first one keeps the entry.
            Some(held) if *held == *value => return held,
            Some(_) => return value,
            None => {}
        }
        self.known.insert(hash, Arc::downgrade(&value));
        if self.known.len() >= self.sweep_at {
            self.known.retain(|_, held| held.strong_count() > 0);
            self.sweep_at = (2 * self.known.len()).max(64);
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_share_one_copy_and_unequal_ones_do_not() {
        let mut pool = WeakPool::<str>::default();
        let a = pool.share(1, Arc::from("a"));
        let again = pool.share(1, Arc::from("a"));
        let b = pool.share(2, Arc::from("b"));
        assert!(Arc::ptr_eq(&a, &again));
        assert!(!Arc::ptr_eq(&a, &b));
    }

    #[test]
    fn an_unequal_value_with_the_same_hash_is_kept_as_it_is() {
        let mut pool = WeakPool::<str>::default();
        let a = pool.share(7, Arc::from("a"));
        let b = pool.share(7, Arc::from("b"));
        assert_eq!(&*b, "b");
        assert!(Arc::ptr_eq(&pool.share(7, Arc::from("a")), &a));
    }

    #[test]
    fn a_value_no_object_holds_any_more_is_forgotten() {
        let mut pool = WeakPool::<str>::default();
        for i in 0..200 {
            drop(pool.share(i, Arc::from(i.to_string())));
        }
        assert!(pool.known.len() < 100, "{} kept", pool.known.len());
        let kept = pool.share(500, Arc::from("kept"));
        let fresh: Arc<str> = Arc::from("kept");
        assert!(Arc::ptr_eq(&pool.share(500, fresh.clone()), &kept));
        drop(kept);
        assert!(Arc::ptr_eq(&pool.share(500, fresh.clone()), &fresh));
    }
}
