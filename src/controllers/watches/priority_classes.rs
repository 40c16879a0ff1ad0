//! The priority classes a job integration reads a Workload's priority from, as the shared
//! watches deliver them: WorkloadPriorityClasses and PriorityClasses by name, and the
//! [`PriorityLookup`] over both, rebuilt on every change.

use std::collections::BTreeMap;

use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::ResourceExt;

use super::Change;
use crate::api::WorkloadPriorityClass;
use crate::jobs::PriorityLookup;

/// Both kinds of priority class, and the lookup over them.
#[derive(Debug, Default)]
pub struct PriorityClasses {
    workload: BTreeMap<String, WorkloadPriorityClass>,
    pod: BTreeMap<String, PriorityClass>,
    lookup: PriorityLookup,
}

impl PriorityClasses {
    /// Takes a change of the WorkloadPriorityClasses (a full list replaces them).
    pub fn take_workload_classes(&mut self, change: Change<WorkloadPriorityClass>) {
        take(&mut self.workload, change);
        self.rebuild();
    }

    /// Takes a change of the PriorityClasses (a full list replaces them).
    pub fn take_priority_classes(&mut self, change: Change<PriorityClass>) {
        take(&mut self.pod, change);
        self.rebuild();
    }

    /// The priority lookup over the classes as last read.
    pub fn lookup(&self) -> &PriorityLookup {
        &self.lookup
    }

    fn rebuild(&mut self) {
        self.lookup = PriorityLookup::from_objects(self.workload.values(), self.pod.values());
    }
}

fn take<K: ResourceExt>(classes: &mut BTreeMap<String, K>, change: Change<K>) {
    if change.is_reset() {
        classes.clear();
    }
    change.for_each(|class, present| {
        if present {
            classes.insert(class.name_any(), class);
        } else {
            classes.remove(&class.name_any());
        }
    });
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn class(name: &str, value: i32) -> WorkloadPriorityClass {
        serde_json::from_value(json!({"metadata": {"name": name}, "value": value}))
            .expect("a WorkloadPriorityClass")
    }

    #[test]
    fn the_lookup_follows_every_change_and_a_full_list_replaces_the_classes() {
        let mut classes = PriorityClasses::default();
        classes.take_workload_classes(Change::Reset(vec![class("high", 100)]));
        assert_eq!(classes.lookup().workload_priority_class("high"), Some(100));
        classes.take_workload_classes(Change::Apply(Box::new(class("low", 1))));
        assert_eq!(classes.lookup().workload_priority_class("low"), Some(1));
        classes.take_workload_classes(Change::Reset(vec![class("low", 1)]));
        assert_eq!(classes.lookup().workload_priority_class("high"), None);
        classes.take_workload_classes(Change::Delete(Box::new(class("low", 1))));
        assert_eq!(classes.lookup().workload_priority_class("low"), None);
    }
}
