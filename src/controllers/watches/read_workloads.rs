//! Workloads as last read from the API, found by the namespace and name each object holds, so
//! its key is not kept beside it. Each is shared with the other tasks that read the same watch
//! and with the write requests that carry it, so holding one costs no copy.

use super::SharedWorkload;
use crate::api::{ObjectKey, Workload};
use crate::name_table::{NameTable, Named};

/// Workloads by namespace and name.
#[derive(Debug, Default)]
pub struct ReadWorkloads {
    table: NameTable<SharedWorkload>,
}

impl Named<()> for SharedWorkload {
    fn names<'a>(&'a self, _: &'a ()) -> Option<(&'a str, &'a str)> {
        Some((
            self.metadata.namespace.as_deref().unwrap_or_default(),
            self.metadata.name.as_deref().unwrap_or_default(),
        ))
    }
}

impl ReadWorkloads {
    pub fn get(&self, key: &ObjectKey) -> Option<&Workload> {
        self.find(key).map(|w| &**w)
    }

    /// The object itself, to hand to a write request without copying it.
    pub fn shared(&self, key: &ObjectKey) -> Option<SharedWorkload> {
        self.find(key).cloned()
    }

    pub fn contains_key(&self, key: &ObjectKey) -> bool {
        self.find(key).is_some()
    }

    /// Holds `workload` in place of the one read before under its namespace and name.
    pub fn insert(&mut self, workload: SharedWorkload) {
        self.table.insert(&(), workload);
    }

    pub fn remove(&mut self, key: &ObjectKey) -> Option<SharedWorkload> {
        self.table.remove(&(), &key.namespace, &key.name)
    }

    pub fn clear(&mut self) {
        self.table.clear();
    }

    /// The key of every Workload held, in no particular order.
    pub fn keys(&self) -> impl Iterator<Item = ObjectKey> + '_ {
        self.table.iter().filter_map(|held| {
            let (namespace, name) = held.names(&())?;
            Some(ObjectKey::new(namespace, name))
        })
    }

    fn find(&self, key: &ObjectKey) -> Option<&SharedWorkload> {
        self.table.get(&(), &key.namespace, &key.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use crate::api::WorkloadSpec;

    fn read(namespace: &str, name: &str, version: &str) -> SharedWorkload {
        let mut workload = Workload::new(name, WorkloadSpec::default());
        workload.metadata.namespace = Some(namespace.into());
        workload.metadata.resource_version = Some(version.into());
        Arc::new(workload)
    }

    fn version(workloads: &ReadWorkloads, namespace: &str, name: &str) -> Option<String> {
        workloads
            .get(&ObjectKey::new(namespace, name))
            .and_then(|w| w.metadata.resource_version.clone())
    }

    #[test]
    fn each_workload_is_found_under_its_namespace_and_name() {
        let mut workloads = ReadWorkloads::default();
        for i in 0..100 {
            workloads.insert(read("a", &format!("w{i}"), "1"));
            workloads.insert(read("b", &format!("w{i}"), "1"));
        }
        workloads.insert(read("a", "w7", "2"));
        assert_eq!(version(&workloads, "a", "w7").as_deref(), Some("2"));
        assert_eq!(version(&workloads, "b", "w7").as_deref(), Some("1"));
        let b_w7 = ObjectKey::new("b", "w7");
        assert!(workloads.remove(&b_w7).is_some());
        assert!(workloads.remove(&b_w7).is_none());
        assert!(
            !workloads.contains_key(&b_w7) && workloads.contains_key(&ObjectKey::new("a", "w7"))
        );
        assert!(workloads.shared(&ObjectKey::new("a", "w100")).is_none());
        let mut keys: Vec<ObjectKey> = workloads.keys().collect();
        keys.sort();
        assert_eq!(keys.len(), 199);
        assert_eq!(keys[0], ObjectKey::new("a", "w0"));
        assert!(!keys.contains(&b_w7));
    }
}
