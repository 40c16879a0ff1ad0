//! Which Workloads carry a stale copy of their WorkloadPriorityClass's value. Kueue's
//! WorkloadPriorityClass controller looks again at a class when it is created (also when it is
//! listed at start, or by a new leader) and when its `value` changes, and writes the value into
//! `spec.priority` of every Workload whose `spec.priorityClassRef` names it, whatever the
//! Workload's state; a deleted class changes nothing.

use std::collections::{BTreeMap, BTreeSet};

use kube::ResourceExt;

use crate::api::WorkloadPriorityClass;
use crate::api::workload::{PriorityClassGroup, PriorityClassKind};
use crate::controllers::watches::{Change, SharedWorkload};

/// The classes, the Workloads naming each, and the classes to look at again.
#[derive(Debug, Default)]
pub struct StaleValues {
    values: BTreeMap<String, i32>,
    /// Workloads by the class they name, each by `namespace/name`.
    by_class: BTreeMap<String, BTreeMap<String, SharedWorkload>>,
    /// The class each held Workload names.
    class_of: BTreeMap<String, String>,
    /// Classes created or changed whose Workloads have not all been handed out since.
    due: BTreeSet<String>,
    /// Workloads whose write is in flight.
    writing: BTreeSet<String>,
    classes_listed: bool,
    workloads_listed: bool,
}

fn key(workload: &SharedWorkload) -> String {
    format!(
        "{}/{}",
        workload.namespace().unwrap_or_default(),
        workload.name_any()
    )
}

/// The WorkloadPriorityClass `workload` takes its priority from, if any.
fn named_class(workload: &SharedWorkload) -> Option<&str> {
    let class = workload.spec.priority_class_ref.as_deref()?;
    (class.group == PriorityClassGroup::Kueue
        && class.kind == PriorityClassKind::WorkloadPriorityClass)
        .then_some(class.name.as_str())
}

impl StaleValues {
    /// A change of the WorkloadPriorityClass watch.
    pub fn take_class(&mut self, change: Change<WorkloadPriorityClass>) {
        match change {
            Change::Apply(class) => {
                let name = class.name_any();
                if self.values.insert(name.clone(), class.spec.value) != Some(class.spec.value) {
                    self.due.insert(name);
                }
            }
            Change::Delete(class) => {
                let name = class.name_any();
                self.values.remove(&name);
                self.due.remove(&name);
            }
            Change::Reset(classes) => {
                self.values = classes
                    .iter()
                    .map(|class| (class.name_any(), class.spec.value))
                    .collect();
                self.due = self.values.keys().cloned().collect();
                self.classes_listed = true;
            }
        }
    }

    /// A change of the shared Workload watch.
    pub fn take_workload(&mut self, change: Change<SharedWorkload>) {
        match change {
            Change::Apply(workload) => self.hold(*workload),
            Change::Delete(workload) => self.forget(&key(&workload)),
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

    /// A new leader looks at every class again.
    pub fn look_again(&mut self) {
        self.due = self.values.keys().cloned().collect();
    }

    /// The Workloads to write, with the value each gets, at most `limit`; each is handed out once
    /// until [`StaleValues::answered`]. Nothing before both kinds are listed: a class listed
    /// first must not be taken as done before its Workloads are read.
    pub fn take_due(&mut self, limit: usize) -> Vec<(SharedWorkload, i32)> {
        let mut out = Vec::new();
        if !(self.classes_listed && self.workloads_listed) {
            return out;
        }
        let due: Vec<String> = self.due.iter().cloned().collect();
        for class in due {
            let Some(&value) = self.values.get(&class) else {
                self.due.remove(&class);
                continue;
            };
            let stale: Vec<(&String, &SharedWorkload)> = self
                .by_class
                .get(&class)
                .into_iter()
                .flatten()
                .filter(|(key, w)| w.spec.priority != Some(value) && !self.writing.contains(*key))
                .collect();
            let mut handed_all = true;
            let mut handed = Vec::new();
            for (key, workload) in stale {
                if out.len() == limit {
                    handed_all = false;
                    break;
                }
                out.push((workload.clone(), value));
                handed.push(key.clone());
            }
            self.writing.extend(handed);
            if handed_all {
                self.due.remove(&class);
            }
        }
        out
    }

    /// The write of `workload` was answered; one that failed looks at its class again.
    pub fn answered(&mut self, workload: &SharedWorkload, failed: bool) {
        self.writing.remove(&key(workload));
        if failed && let Some(class) = named_class(workload) {
            self.due.insert(class.to_owned());
        }
    }

    fn hold(&mut self, workload: SharedWorkload) {
        let key = key(&workload);
        self.forget(&key);
        if let Some(class) = named_class(&workload).map(str::to_owned) {
            self.class_of.insert(key.clone(), class.clone());
            self.by_class
                .entry(class)
                .or_default()
                .insert(key, workload);
        }
    }

    fn forget(&mut self, key: &str) {
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
