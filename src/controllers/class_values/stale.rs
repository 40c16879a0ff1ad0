//! Which Workloads carry a stale copy of their WorkloadPriorityClass's value. Kueue's
//! WorkloadPriorityClass controller looks again at a class when it is created (also when it is
//! listed at start, or by a new leader) and when its `value` changes, and writes the value into
//! `spec.priority` of every Workload whose `spec.priorityClassRef` names it, whatever the
//! Workload's state; a deleted class changes nothing.

use std::collections::BTreeMap;

use kube::ResourceExt;

use crate::api::workload::{PriorityClassGroup, PriorityClassKind};
use crate::api::{ObjectKey, WorkloadPriorityClass};
use crate::controllers::watches::{Change, SharedWorkload};
use crate::controllers::work_queue::Dirty;

/// The classes and the Workloads naming each.
#[derive(Debug, Default)]
pub struct StaleValues {
    values: BTreeMap<String, i32>,
    /// Workloads by the class they name.
    by_class: BTreeMap<String, BTreeMap<ObjectKey, SharedWorkload>>,
    /// The class each held Workload names.
    class_of: BTreeMap<ObjectKey, String>,
    classes_listed: bool,
    workloads_listed: bool,
}

/// The WorkloadPriorityClass `workload` takes its priority from, if any.
fn named_class(workload: &SharedWorkload) -> Option<&str> {
    let class = workload.spec.priority_class_ref.as_deref()?;
    (class.group == PriorityClassGroup::Kueue
        && class.kind == PriorityClassKind::WorkloadPriorityClass)
        .then_some(class.name.as_str())
}

impl StaleValues {
    /// A change of the WorkloadPriorityClass watch; marks the Workloads of a class created,
    /// listed or whose value changed.
    pub fn take_class(
        &mut self,
        change: Change<WorkloadPriorityClass>,
        dirty: &mut Dirty<ObjectKey>,
    ) {
        match change {
            Change::Apply(class) => {
                let name = class.name_any();
                if self.values.insert(name.clone(), class.spec.value) != Some(class.spec.value) {
                    dirty.extend(
                        self.by_class
                            .get(&name)
                            .into_iter()
                            .flatten()
                            .map(|(key, _)| key.clone()),
                    );
                }
            }
            Change::Delete(class) => {
                self.values.remove(&class.name_any());
            }
            Change::Reset(classes) => {
                self.values = classes
                    .iter()
                    .map(|class| (class.name_any(), class.spec.value))
                    .collect();
                self.classes_listed = true;
                dirty.all();
            }
        }
    }

    /// A change of the shared Workload watch. It marks nothing: Kueue looks again at a class's
    /// Workloads only when the class changes.
    pub fn take_workload(&mut self, change: Change<SharedWorkload>) {
        match change {
            Change::Apply(workload) => self.hold(*workload),
            Change::Delete(workload) => self.forget(&ObjectKey::of(&**workload)),
            Change::Reset(workloads) => {
                self.by_class.clear();
                self.class_of.clear();
                for workload in workloads {
                    self.hold(workload);
                }
                self.workloads_listed = true;
            }
        }
    }

    /// Whether both kinds are listed: a class listed first must not be taken as done before
    /// its Workloads are read.
    pub fn listed(&self) -> bool {
        self.classes_listed && self.workloads_listed
    }

    /// Every Workload naming a class.
    pub fn keys(&self) -> Vec<ObjectKey> {
        self.class_of.keys().cloned().collect()
    }

    /// The Workload `key` with the value it should carry, when its copy is stale.
    pub fn stale(&self, key: &ObjectKey) -> Option<(SharedWorkload, i32)> {
        let class = self.class_of.get(key)?;
        let value = *self.values.get(class)?;
        let workload = self.by_class.get(class)?.get(key)?;
        (workload.spec.priority != Some(value)).then(|| (workload.clone(), value))
    }

    fn hold(&mut self, workload: SharedWorkload) {
        let key = ObjectKey::of(&*workload);
        self.forget(&key);
        if let Some(class) = named_class(&workload).map(str::to_owned) {
            self.class_of.insert(key.clone(), class.clone());
            self.by_class
                .entry(class)
                .or_default()
                .insert(key, workload);
        }
    }

    fn forget(&mut self, key: &ObjectKey) {
        if let Some(class) = self.class_of.remove(key)
            && let Some(held) = self.by_class.get_mut(&class)
        {
            held.remove(key);
            if held.is_empty() {
                self.by_class.remove(&class);
            }
        }
    }
}

#[cfg(test)]
mod tests;
