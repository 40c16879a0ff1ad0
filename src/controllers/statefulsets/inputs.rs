//! What the StatefulSet integration reads, from the shared watches: StatefulSets, the pods the
//! `statefulset` integration suspends, the Workloads made for StatefulSets, and the priority
//! classes their Workloads take a priority from. Each change says which StatefulSets need
//! another look.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::ResourceExt;
use tokio::sync::mpsc;

use super::super::watches::{
    Change, SharedWorkload,
    shared::{SharedWatches, owned},
};
use crate::api::keys::annotations;
use crate::api::{ObjectKey, Workload, WorkloadPriorityClass};
use crate::controllers::watches::priority_classes::PriorityClasses;
use crate::jobs::{
    STATEFULSET_API_VERSION, STATEFULSET_GVK, STATEFULSET_KIND, suspended_by_statefulset,
};

/// A change delivered by one of the StatefulSet integration's watches.
#[derive(Debug)]
pub enum StatefulSetInput {
    StatefulSet(Change<StatefulSet>),
    Pod(Change<Pod>),
    Workload(Change<SharedWorkload>),
    WorkloadPriorityClass(Change<WorkloadPriorityClass>),
    PriorityClass(Change<PriorityClass>),
}

/// The kinds the StatefulSet integration watches.
pub const WATCHED_KINDS: usize = 5;

impl StatefulSetInput {
    /// Which watch delivered it (an index below [`WATCHED_KINDS`]), and whether it is a full list.
    pub fn source(&self) -> (usize, bool) {
        match self {
            StatefulSetInput::StatefulSet(c) => (0, c.is_reset()),
            StatefulSetInput::Pod(c) => (1, c.is_reset()),
            StatefulSetInput::Workload(c) => (2, c.is_reset()),
            StatefulSetInput::WorkloadPriorityClass(c) => (3, c.is_reset()),
            StatefulSetInput::PriorityClass(c) => (4, c.is_reset()),
        }
    }
}

/// Subscribes `inputs` to the shared watches the StatefulSet integration reads.
pub fn subscribe_all(inputs: &mpsc::Sender<StatefulSetInput>, watches: &mut SharedWatches) {
    watches
        .statefulsets
        .subscribe(inputs, |c| StatefulSetInput::StatefulSet(c.map(owned)));
    watches.pods.subscribe_to(
        inputs,
        |c| StatefulSetInput::Pod(c.map(owned)),
        suspended_by_statefulset,
    );
    watches
        .workloads
        .subscribe(inputs, StatefulSetInput::Workload);
    watches.workload_priority_classes.subscribe(inputs, |c| {
        StatefulSetInput::WorkloadPriorityClass(c.map(owned))
    });
    watches
        .priority_classes
        .subscribe(inputs, |c| StatefulSetInput::PriorityClass(c.map(owned)));
}

/// The StatefulSet controlling a pod, by key.
fn controller_of(pod: &Pod) -> Option<ObjectKey> {
    let owner = pod.owner_references().iter().find(|o| {
        o.controller == Some(true)
            && o.kind == STATEFULSET_KIND
            && o.api_version == STATEFULSET_API_VERSION
    })?;
    Some(ObjectKey::new(
        pod.namespace().unwrap_or_default().as_str(),
        owner.name.as_str(),
    ))
}

/// The StatefulSet a Workload was made for, by key: Kueue's `job-owner-name` annotation with
/// the StatefulSet kind, else an owner reference to a StatefulSet.
fn statefulset_of(workload: &Workload) -> Option<ObjectKey> {
    let namespace = workload.namespace().unwrap_or_default();
    let by_owner = workload
        .owner_references()
        .iter()
        .find(|o| o.kind == STATEFULSET_KIND && o.api_version == STATEFULSET_API_VERSION)
        .map(|o| o.name.clone());
    let by_annotation = workload
        .annotations()
        .get(annotations::JOB_OWNER_GVK)
        .filter(|gvk| *gvk == STATEFULSET_GVK)
        .and_then(|_| {
            workload
                .annotations()
                .get(annotations::JOB_OWNER_NAME)
                .cloned()
        });
    by_annotation
        .or(by_owner)
        .map(|name| ObjectKey::new(namespace.as_str(), name.as_str()))
}

/// StatefulSets a change asks to look at again.
#[derive(Debug, Default)]
pub struct Touched {
    pub keys: BTreeSet<ObjectKey>,
    /// Every StatefulSet: a full list, or a priority class changed.
    pub all: bool,
}

/// The StatefulSet integration's view of the cluster.
#[derive(Debug, Default)]
pub struct StatefulSetCaches {
    pub statefulsets: BTreeMap<ObjectKey, StatefulSet>,
    pods: BTreeMap<ObjectKey, Pod>,
    /// Pod keys by the StatefulSet controlling them.
    members: BTreeMap<ObjectKey, BTreeSet<ObjectKey>>,
    /// Workloads made for StatefulSets, by key.
    workloads: BTreeMap<ObjectKey, SharedWorkload>,
    pub priorities: PriorityClasses,
}

impl StatefulSetCaches {
    /// Takes a change, clearing the kind first when it is a full list.
    pub fn take_input(&mut self, input: StatefulSetInput, touched: &mut Touched) {
        if input.source().1 {
            self.clear(&input);
            touched.all = true;
        }
        match input {
            StatefulSetInput::StatefulSet(change) => change.for_each(|sts, present| {
                let key = ObjectKey::of(&sts);
                if present {
                    self.statefulsets.insert(key.clone(), sts);
                } else {
                    self.statefulsets.remove(&key);
                }
                touched.keys.insert(key);
            }),
            StatefulSetInput::Pod(change) => change.for_each(|pod, present| {
                let key = ObjectKey::of(&pod);
                if let Some(before) = self.pods.remove(&key).as_ref().and_then(controller_of)
                    && let Some(members) = self.members.get_mut(&before)
                {
                    members.remove(&key);
                    if members.is_empty() {
                        self.members.remove(&before);
                    }
                }
                if let Some(owner) = controller_of(&pod) {
                    if present {
                        self.members
                            .entry(owner.clone())
                            .or_default()
                            .insert(key.clone());
                        self.pods.insert(key, pod);
                    }
                    touched.keys.insert(owner);
                }
            }),
            StatefulSetInput::Workload(change) => change.for_each(|workload, present| {
                let key = ObjectKey::of(&*workload);
                if let Some(owner) = self
                    .workloads
                    .remove(&key)
                    .as_deref()
                    .and_then(statefulset_of)
                {
                    touched.keys.insert(owner);
                }
                if let Some(owner) = statefulset_of(&workload) {
                    touched.keys.insert(owner);
                    if present {
                        self.workloads.insert(key, workload);
                    }
                }
            }),
            StatefulSetInput::WorkloadPriorityClass(change) => {
                touched.all = true;
                self.priorities.take_workload_classes(change);
            }
            StatefulSetInput::PriorityClass(change) => {
                touched.all = true;
                self.priorities.take_priority_classes(change);
            }
        }
    }

    fn clear(&mut self, input: &StatefulSetInput) {
        match input {
            StatefulSetInput::StatefulSet(_) => self.statefulsets.clear(),
            StatefulSetInput::Pod(_) => {
                self.pods.clear();
                self.members.clear();
            }
            StatefulSetInput::Workload(_) => self.workloads.clear(),
            // The priority classes clear themselves on a full list.
            StatefulSetInput::WorkloadPriorityClass(_) | StatefulSetInput::PriorityClass(_) => {}
        }
    }

    /// The pods the StatefulSet of `key` controls (the caller checks the controller's UID).
    pub fn pods_of(&self, key: &ObjectKey) -> Vec<Pod> {
        self.members
            .get(key)
            .into_iter()
            .flatten()
            .filter_map(|k| self.pods.get(k))
            .cloned()
            .collect()
    }

    /// The Workload of one of these names in `namespace`, the first found.
    pub fn workload_named(&self, namespace: &str, names: &[String]) -> Option<&Workload> {
        names
            .iter()
            .find_map(|name| {
                self.workloads
                    .get(&ObjectKey::new(namespace, name.as_str()))
            })
            .map(|w| &**w)
    }
}
