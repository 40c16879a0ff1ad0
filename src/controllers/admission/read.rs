//! Every Workload as last read from the API. Each is shared with the other tasks that read the
//! same watch and with the write requests that carry it, so holding one costs no copy.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::super::watches::{SharedWorkload, slim_workload};
use crate::api::Workload;

/// Workloads by `namespace/name`.
#[derive(Debug, Default)]
pub struct ReadWorkloads(BTreeMap<String, SharedWorkload>);

impl ReadWorkloads {
    pub fn get(&self, key: &str) -> Option<&Workload> {
        self.0.get(key).map(|w| &**w)
    }

    /// The object itself, to hand to a write request without copying it.
    pub fn shared(&self, key: &str) -> Option<SharedWorkload> {
        self.0.get(key).cloned()
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    pub fn insert(&mut self, key: String, workload: SharedWorkload) {
        self.0.insert(key, workload);
    }

    pub fn remove(&mut self, key: &str) -> Option<SharedWorkload> {
        self.0.remove(key)
    }

    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.keys()
    }
}

/// A Workload a write answered with, held as a watch would deliver it: without the
/// `managedFields` the API server returns, which nothing reads and which outweigh the rest.
pub fn answered(workload: Workload) -> SharedWorkload {
    Arc::new(slim_workload(workload))
}
