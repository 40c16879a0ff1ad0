//! What the LeaderWorkerSet integration reads: LeaderWorkerSets from their own watch (started
//! once their CRD is established), and from the shared watches the pods the LeaderWorkerSet
//! integration suspends, the Workloads made for LeaderWorkerSets, and the priority classes their
//! Workloads take a priority from. Each change says which LeaderWorkerSets need another look.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::ResourceExt;
use kube::api::DynamicObject;
use tokio::sync::mpsc;

use super::super::watches::{
    Change, SharedWorkload,
    shared::{SharedWatches, owned},
};
use crate::api::{ObjectKey, Workload, WorkloadPriorityClass};
use crate::controllers::watches::priority_classes::PriorityClasses;
use crate::jobs::{LEADERWORKERSET, lws_of_pod, suspended_by_lws};

/// A change delivered by one of the LeaderWorkerSet integration's watches.
#[derive(Debug)]
pub enum LwsInput {
    LeaderWorkerSet(Change<DynamicObject>),
    Pod(Change<Pod>),
    Workload(Change<SharedWorkload>),
    WorkloadPriorityClass(Change<WorkloadPriorityClass>),
    PriorityClass(Change<PriorityClass>),
}

/// The kinds the LeaderWorkerSet integration watches.
pub const WATCHED_KINDS: usize = 5;

impl LwsInput {
    /// Which watch delivered it (an index below [`WATCHED_KINDS`]), and whether it is a full list.
    pub fn source(&self) -> (usize, bool) {
        match self {
            LwsInput::LeaderWorkerSet(c) => (0, c.is_reset()),
            LwsInput::Pod(c) => (1, c.is_reset()),
            LwsInput::Workload(c) => (2, c.is_reset()),
            LwsInput::WorkloadPriorityClass(c) => (3, c.is_reset()),
            LwsInput::PriorityClass(c) => (4, c.is_reset()),
        }
    }
}

/// Subscribes `inputs` to the shared watches the LeaderWorkerSet integration reads.
pub fn subscribe_shared(inputs: &mpsc::Sender<LwsInput>, watches: &mut SharedWatches) {
    watches
        .pods
        .subscribe_to(inputs, |c| LwsInput::Pod(c.map(owned)), suspended_by_lws);
    watches.workloads.subscribe(inputs, LwsInput::Workload);
    watches
        .workload_priority_classes
        .subscribe(inputs, |c| LwsInput::WorkloadPriorityClass(c.map(owned)));
    watches
        .priority_classes
        .subscribe(inputs, |c| LwsInput::PriorityClass(c.map(owned)));
}

/// The LeaderWorkerSet a pod belongs to, by key.
fn lws_key_of_pod(pod: &Pod) -> Option<ObjectKey> {
    let name = lws_of_pod(pod)?;
    Some(ObjectKey::new(
        pod.namespace().unwrap_or_default().as_str(),
        name,
    ))
}

/// The LeaderWorkerSet owning a Workload, by key.
fn lws_key_of_workload(workload: &Workload) -> Option<ObjectKey> {
    let owner = workload.owner_references().iter().find(|o| {
        o.kind == LEADERWORKERSET.kind && o.api_version == LEADERWORKERSET.api_version()
    })?;
    Some(ObjectKey::new(
        workload.namespace().unwrap_or_default().as_str(),
        owner.name.as_str(),
    ))
}

/// LeaderWorkerSets a change asks to look at again.
#[derive(Debug, Default)]
pub struct Touched {
    pub keys: BTreeSet<ObjectKey>,
    /// Every LeaderWorkerSet: a full list, or a priority class changed.
    pub all: bool,
}

/// Objects grouped by the LeaderWorkerSet they belong to.
#[derive(Debug)]
struct Grouped<K> {
    objects: BTreeMap<ObjectKey, K>,
    members: BTreeMap<ObjectKey, BTreeSet<ObjectKey>>,
    group_of: fn(&K) -> Option<ObjectKey>,
}

impl<K> Grouped<K> {
    fn new(group_of: fn(&K) -> Option<ObjectKey>) -> Self {
        Grouped {
            objects: BTreeMap::new(),
            members: BTreeMap::new(),
            group_of,
        }
    }

    fn clear(&mut self) {
        self.objects.clear();
        self.members.clear();
    }

    /// Takes `object` of `key` (present or gone); marks the groups it left and joined.
    fn take(&mut self, key: ObjectKey, object: K, present: bool, touched: &mut Touched) {
        if let Some(before) = self.objects.remove(&key).as_ref().and_then(self.group_of)
            && let Some(members) = self.members.get_mut(&before)
        {
            members.remove(&key);
            if members.is_empty() {
                self.members.remove(&before);
            }
            touched.keys.insert(before);
        }
        if let Some(group) = (self.group_of)(&object) {
            if present {
                self.members
                    .entry(group.clone())
                    .or_default()
                    .insert(key.clone());
                self.objects.insert(key, object);
            }
            touched.keys.insert(group);
        }
    }

    fn of(&self, group: &ObjectKey) -> impl Iterator<Item = &K> {
        self.members
            .get(group)
            .into_iter()
            .flatten()
            .filter_map(|k| self.objects.get(k))
    }
}

/// The LeaderWorkerSet integration's view of the cluster.
#[derive(Debug)]
pub struct LwsCaches {
    pub sets: BTreeMap<ObjectKey, DynamicObject>,
    pods: Grouped<Pod>,
    workloads: Grouped<SharedWorkload>,
    pub priorities: PriorityClasses,
}

impl Default for LwsCaches {
    fn default() -> Self {
        LwsCaches {
            sets: BTreeMap::new(),
            pods: Grouped::new(lws_key_of_pod),
            workloads: Grouped::new(|w: &SharedWorkload| lws_key_of_workload(w)),
            priorities: PriorityClasses::default(),
        }
    }
}

impl LwsCaches {
    /// Takes a change, clearing the kind first when it is a full list.
    pub fn take_input(&mut self, input: LwsInput, touched: &mut Touched) {
        if input.source().1 {
            touched.all = true;
        }
        match input {
            LwsInput::LeaderWorkerSet(change) => {
                if change.is_reset() {
                    self.sets.clear();
                }
                change.for_each(|lws, present| {
                    let key = ObjectKey::of(&lws);
                    if present {
                        self.sets.insert(key.clone(), lws);
                    } else {
                        self.sets.remove(&key);
                    }
                    touched.keys.insert(key);
                });
            }
            LwsInput::Pod(change) => {
                if change.is_reset() {
                    self.pods.clear();
                }
                change.for_each(|pod, present| {
                    self.pods.take(ObjectKey::of(&pod), pod, present, touched);
                });
            }
            LwsInput::Workload(change) => {
                if change.is_reset() {
                    self.workloads.clear();
                }
                change.for_each(|workload, present| {
                    let key = ObjectKey::of(&*workload);
                    self.workloads.take(key, workload, present, touched);
                });
            }
            LwsInput::WorkloadPriorityClass(change) => {
                touched.all = true;
                self.priorities.take_workload_classes(change);
            }
            LwsInput::PriorityClass(change) => {
                touched.all = true;
                self.priorities.take_priority_classes(change);
            }
        }
    }

    /// The pods labelled with the LeaderWorkerSet of `key`.
    pub fn pods_of(&self, key: &ObjectKey) -> Vec<Pod> {
        self.pods.of(key).cloned().collect()
    }

    /// The Workloads owned by `lws` (its UID, not only its name).
    pub fn workloads_of(&self, key: &ObjectKey, lws: &DynamicObject) -> Vec<&Workload> {
        let uid = lws.metadata.uid.as_deref().unwrap_or_default();
        self.workloads
            .of(key)
            .filter(|w| w.owner_references().iter().any(|o| o.uid == uid))
            .map(|w| &**w)
            .collect()
    }
}
