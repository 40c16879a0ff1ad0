//! What the pod integration reads, from the shared watches: managed pods (label
//! `kueue.x-k8s.io/managed=true`), Workloads, ResourceFlavors and priority classes. Pods are grouped into units (a pod group, or a single pod); each
//! change says which units need another look.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Pod, PodStatus};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::ResourceExt;
use tokio::sync::mpsc;

use super::super::watches::priority_classes::PriorityClasses;
use super::super::watches::read_workloads::ReadWorkloads;
use super::super::watches::{
    Change, SharedWorkload,
    shared::{SharedWatches, owned},
    slim,
};
use crate::api::keys::{annotations, labels};
use crate::api::{ObjectKey, ResourceFlavor, Workload, WorkloadPriorityClass};
use crate::jobs::{FlavorInfo, pod_group_name};

/// A change delivered by one of the pod integration's watches.
#[derive(Debug)]
pub enum PodInput {
    Pod(Change<Pod>),
    Workload(Change<SharedWorkload>),
    ResourceFlavor(Change<ResourceFlavor>),
    WorkloadPriorityClass(Change<WorkloadPriorityClass>),
    PriorityClass(Change<PriorityClass>),
}

/// The kinds the pod integration watches.
pub const WATCHED_KINDS: usize = 5;

impl PodInput {
    /// Which watch delivered it (an index below [`WATCHED_KINDS`]), and whether it is a full list.
    pub fn source(&self) -> (usize, bool) {
        fn reset<K>(change: &Change<K>) -> bool {
            matches!(change, Change::Reset(_))
        }
        match self {
            PodInput::Pod(c) => (0, reset(c)),
            PodInput::Workload(c) => (1, reset(c)),
            PodInput::ResourceFlavor(c) => (2, reset(c)),
            PodInput::WorkloadPriorityClass(c) => (3, reset(c)),
            PodInput::PriorityClass(c) => (4, reset(c)),
        }
    }
}

/// Subscribes the pod integration's `inputs` to the shared watches it reads: managed pods,
/// Workloads, ResourceFlavors and priority classes.
pub fn subscribe_all(inputs: &mpsc::Sender<PodInput>, watches: &mut SharedWatches) {
    watches.pods.subscribe_to(
        inputs,
        |c| PodInput::Pod(c.map(|pod| slim_pod(owned(pod)))),
        is_managed,
    );
    watches.workloads.subscribe(inputs, PodInput::Workload);
    watches
        .resource_flavors
        .subscribe(inputs, |c| PodInput::ResourceFlavor(c.map(owned)));
    watches
        .workload_priority_classes
        .subscribe(inputs, |c| PodInput::WorkloadPriorityClass(c.map(owned)));
    watches
        .priority_classes
        .subscribe(inputs, |c| PodInput::PriorityClass(c.map(owned)));
}

/// Whether a pod carries `kueue.x-k8s.io/managed=true`.
fn is_managed(pod: &Pod) -> bool {
    pod.labels().get(labels::MANAGED).map(String::as_str) == Some(labels::MANAGED_VALUE)
}

/// A managed pod without what no decision reads: managed fields and container statuses. Its
/// spec stays whole: it becomes the Workload's pod set and is patched at start.
pub(super) fn slim_pod(pod: Pod) -> Pod {
    let mut pod = slim(pod);
    pod.status = pod.status.map(|status| PodStatus {
        phase: status.phase,
        conditions: status.conditions,
        message: status.message,
        ..PodStatus::default()
    });
    pod
}

/// A single pod, or a pod group, in a namespace: what one Workload runs.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unit {
    pub namespace: String,
    /// A group (named `name`), or a single pod of that name.
    pub group: bool,
    pub name: String,
}

impl std::fmt::Display for Unit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.group { "pod group" } else { "pod" };
        write!(f, "{kind} {}/{}", self.namespace, self.name)
    }
}

/// The unit a pod belongs to.
pub fn unit_of_pod(pod: &Pod) -> Unit {
    let namespace = pod.namespace().unwrap_or_default();
    match pod_group_name(pod) {
        Some(group) => Unit {
            namespace,
            group: true,
            name: group.to_owned(),
        },
        None => Unit {
            namespace,
            group: false,
            name: pod.name_any(),
        },
    }
}

/// The unit a Workload runs, if it is a pod group's (Kueue's group annotation) or a single
/// pod's (the pod controls it).
fn unit_of_workload(workload: &Workload) -> Option<Unit> {
    let namespace = workload.namespace().unwrap_or_default();
    if workload.annotations().get(annotations::IS_GROUP_WORKLOAD) == Some(&"true".to_owned()) {
        return Some(Unit {
            namespace,
            group: true,
            name: workload.name_any(),
        });
    }
    workload
        .owner_references()
        .iter()
        .find(|o| o.controller == Some(true) && o.kind == "Pod" && o.api_version == "v1")
        .map(|o| Unit {
            namespace,
            group: false,
            name: o.name.clone(),
        })
}

/// Units a change asks to look at again.
#[derive(Debug, Default)]
pub struct Touched {
    pub units: BTreeSet<Unit>,
    /// Every unit: what all of them read changed (a flavor, a priority class, a full list).
    pub all: bool,
}

/// The pod integration's view of the cluster.
#[derive(Debug, Default)]
pub struct PodCaches {
    /// `pod` is listed in `integrations.frameworks`. When it is only implied by a parent
    /// framework (`deployment`), a managed pod without the `pod-suspending-parent` annotation
    /// is not kuota's, as in Kueue, and is kept out of the caches.
    plain_pods: bool,
    pods: BTreeMap<ObjectKey, Pod>,
    /// Pod keys by unit.
    members: BTreeMap<Unit, BTreeSet<ObjectKey>>,
    workloads: ReadWorkloads,
    /// Keys of the Workloads that run a unit.
    unit_workloads: BTreeMap<Unit, BTreeSet<ObjectKey>>,
    pub flavors: BTreeMap<String, FlavorInfo>,
    pub priorities: PriorityClasses,
}

impl PodCaches {
    pub fn new(plain_pods: bool) -> Self {
        PodCaches {
            plain_pods,
            ..PodCaches::default()
        }
    }

    /// Takes a change, clearing the kind first when it is a full list.
    pub fn take_input(&mut self, input: PodInput, touched: &mut Touched) {
        if input.source().1 {
            self.clear(&input);
            touched.all = true;
        }
        match input {
            PodInput::Pod(change) => {
                on_change(change, |pod, present| self.pod(pod, present, touched));
            }
            PodInput::Workload(change) => {
                on_change(change, |workload, present| {
                    self.workload(workload, present, touched);
                });
            }
            PodInput::ResourceFlavor(change) => {
                touched.all = true;
                on_change(change, |flavor, present| {
                    if present {
                        self.flavors
                            .insert(flavor.name_any(), FlavorInfo::of(&flavor));
                    } else {
                        self.flavors.remove(&flavor.name_any());
                    }
                });
            }
            PodInput::WorkloadPriorityClass(change) => {
                touched.all = true;
                self.priorities.take_workload_classes(change);
            }
            PodInput::PriorityClass(change) => {
                touched.all = true;
                self.priorities.take_priority_classes(change);
            }
        }
    }

    /// Takes the object a write left behind, only while the cache still holds the version the
    /// write was decided on (`None`: none at all): an answer that comes back after the watch
    /// brought a newer version must not put the older one back, which no later event would
    /// correct.
    pub fn take_written(
        &mut self,
        input: PodInput,
        read_version: Option<&str>,
        touched: &mut Touched,
    ) {
        let cached = match &input {
            PodInput::Pod(Change::Apply(pod) | Change::Delete(pod)) => self
                .pods
                .get(&ObjectKey::of(&**pod))
                .map(|p| p.resource_version()),
            PodInput::Workload(Change::Apply(w) | Change::Delete(w)) => self
                .workloads
                .get(&ObjectKey::of(&***w))
                .map(|w| w.resource_version()),
            _ => return,
        };
        let unchanged = match (cached, read_version) {
            (None, None) => true,
            (Some(Some(cached)), Some(read)) => cached == read,
            _ => false,
        };
        if unchanged {
            self.take_input(input, touched);
        }
    }

    fn clear(&mut self, input: &PodInput) {
        match input {
            PodInput::Pod(_) => {
                self.pods.clear();
                self.members.clear();
            }
            PodInput::Workload(_) => {
                self.workloads.clear();
                self.unit_workloads.clear();
            }
            PodInput::ResourceFlavor(_) => self.flavors.clear(),
            // The priority classes clear themselves on a full list.
            PodInput::WorkloadPriorityClass(_) | PodInput::PriorityClass(_) => {}
        }
    }

    fn pod(&mut self, pod: Pod, present: bool, touched: &mut Touched) {
        let present = present && (self.plain_pods || suspended_by_parent(&pod));
        let key = ObjectKey::of(&pod);
        let unit = unit_of_pod(&pod);
        if let Some(previous) = self.pods.remove(&key) {
            // A pod's group never changes (the webhook forbids it); its unit is looked up
            // anyway, so a stale entry cannot be left behind.
            let before = unit_of_pod(&previous);
            if let Some(members) = self.members.get_mut(&before) {
                members.remove(&key);
                if members.is_empty() {
                    self.members.remove(&before);
                }
            }
            touched.units.insert(before);
        }
        if present {
            self.members
                .entry(unit.clone())
                .or_default()
                .insert(key.clone());
            self.pods.insert(key, pod);
        }
        touched.units.insert(unit);
    }

    fn workload(&mut self, workload: SharedWorkload, present: bool, touched: &mut Touched) {
        let key = ObjectKey::of(&*workload);
        if let Some(previous) = self.workloads.remove(&key)
            && let Some(unit) = unit_of_workload(&previous)
        {
            if let Some(keys) = self.unit_workloads.get_mut(&unit) {
                keys.remove(&key);
                if keys.is_empty() {
                    self.unit_workloads.remove(&unit);
                }
            }
            touched.units.insert(unit);
        }
        if let Some(unit) = unit_of_workload(&workload) {
            if present {
                self.unit_workloads
                    .entry(unit.clone())
                    .or_default()
                    .insert(key.clone());
            }
            touched.units.insert(unit);
        } else {
            // A Workload named like a pod group but not made for it blocks the group.
            let namesake = Unit {
                namespace: workload.namespace().unwrap_or_default(),
                group: true,
                name: workload.name_any(),
            };
            if self.members.contains_key(&namesake) {
                touched.units.insert(namesake);
            }
        }
        if present {
            self.workloads.insert(workload);
        }
    }

    /// Every unit kuota sees: those with pods and those with a Workload.
    pub fn units(&self) -> BTreeSet<Unit> {
        self.members
            .keys()
            .chain(self.unit_workloads.keys())
            .cloned()
            .collect()
    }

    /// The unit's pods, by name.
    pub fn pods_of(&self, unit: &Unit) -> Vec<Pod> {
        self.members
            .get(unit)
            .into_iter()
            .flatten()
            .filter_map(|key| self.pods.get(key))
            .cloned()
            .collect()
    }

    /// The Workloads to decide `unit` with: a group's is the Workload named after it (made for
    /// it or not, so that a foreign one is reported); a single pod's the one it controls.
    /// Without pods, every Workload made for the unit.
    pub fn workloads_of(&self, unit: &Unit, pods: &[Pod]) -> Vec<&Workload> {
        if unit.group {
            // Without pods, only a Workload made for the group is the group's to let go of.
            return self
                .workloads
                .get(&ObjectKey::new(unit.namespace.as_str(), unit.name.as_str()))
                .filter(|w| !pods.is_empty() || unit_of_workload(w).as_ref() == Some(unit))
                .into_iter()
                .collect();
        }
        let run: Vec<&Workload> = self
            .unit_workloads
            .get(unit)
            .into_iter()
            .flatten()
            .filter_map(|key| self.workloads.get(key))
            .collect();
        match pods.first().and_then(|p| p.metadata.uid.as_deref()) {
            Some(uid) => run
                .into_iter()
                .filter(|w| {
                    w.owner_references()
                        .iter()
                        .any(|o| o.controller == Some(true) && o.uid == uid)
                })
                .take(1)
                .collect(),
            None => run,
        }
    }
}

fn suspended_by_parent(pod: &Pod) -> bool {
    pod.annotations()
        .contains_key(annotations::POD_SUSPENDING_PARENT)
}

/// Feeds each object of `change` to `apply` with whether it is present afterwards.
fn on_change<K>(change: Change<K>, mut apply: impl FnMut(K, bool)) {
    match change {
        Change::Apply(object) => apply(*object, true),
        Change::Delete(object) => apply(*object, false),
        Change::Reset(objects) => {
            for object in objects {
                apply(object, true);
            }
        }
    }
}

#[cfg(test)]
mod tests;
