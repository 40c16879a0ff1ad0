//! What the topology ungater reads, from the shared watches: Workloads admitted with a topology
//! assignment, the pods kuota started (those carrying the `kueue.x-k8s.io/podset` label) by the
//! Workload they were started for, and which hosts are ready. Each change says which Workloads
//! need another look.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Node, Pod, PodSpec, PodStatus};
use kube::ResourceExt;
use tokio::sync::mpsc;

use super::hosts::{ReadyHosts, slim_node};
use crate::api::keys::{annotations, labels};
use crate::api::{ObjectKey, Workload};
use crate::controllers::watches::read_workloads::ReadWorkloads;
use crate::controllers::watches::shared::{SharedWatches, owned};
use crate::controllers::watches::{Change, SharedWorkload, is_older};

/// A change delivered by one of the ungater's watches.
#[derive(Debug)]
pub enum UngaterInput {
    Workload(Change<SharedWorkload>),
    Pod(Change<Pod>),
    Node(Change<Node>),
}

/// The kinds the ungater watches.
pub const WATCHED_KINDS: usize = 3;

impl UngaterInput {
    /// Which watch delivered it (an index below [`WATCHED_KINDS`]), and whether it is a full list.
    pub fn source(&self) -> (usize, bool) {
        match self {
            UngaterInput::Workload(c) => (0, c.is_reset()),
            UngaterInput::Pod(c) => (1, c.is_reset()),
            UngaterInput::Node(c) => (2, c.is_reset()),
        }
    }
}

/// Subscribes `inputs` to the shared watches of Workloads, the pods kuota started, and Nodes.
pub fn subscribe(inputs: &mpsc::Sender<UngaterInput>, shared: &mut SharedWatches) {
    shared.workloads.subscribe(inputs, UngaterInput::Workload);
    shared.pods.subscribe_to(
        inputs,
        |c| UngaterInput::Pod(c.map(|pod| slim_pod(owned(pod)))),
        |pod| pod.labels().contains_key(labels::POD_SET),
    );
    shared.nodes.subscribe(inputs, |c| {
        UngaterInput::Node(c.map(|n| slim_node(owned(n))))
    });
}

/// A pod reduced to what the ungater reads and patches: identity, version, when it was created
/// and whether it is being deleted, labels, the Kueue annotations, scheduling gates,
/// nodeSelector and phase.
pub fn slim_pod(pod: Pod) -> Pod {
    let mut slim = Pod::default();
    let keep = [annotations::WORKLOAD, annotations::POD_INDEX_OFFSET];
    slim.metadata.name = pod.metadata.name;
    slim.metadata.namespace = pod.metadata.namespace;
    slim.metadata.uid = pod.metadata.uid;
    slim.metadata.resource_version = pod.metadata.resource_version;
    slim.metadata.creation_timestamp = pod.metadata.creation_timestamp;
    slim.metadata.deletion_timestamp = pod.metadata.deletion_timestamp;
    slim.metadata.labels = pod.metadata.labels;
    slim.metadata.annotations = pod.metadata.annotations.map(|all| {
        all.into_iter()
            .filter(|(key, _)| keep.contains(&key.as_str()))
            .collect()
    });
    slim.spec = pod.spec.map(|spec| PodSpec {
        scheduling_gates: spec.scheduling_gates,
        node_selector: spec.node_selector,
        node_name: spec.node_name,
        ..PodSpec::default()
    });
    slim.status = pod.status.map(|status| PodStatus {
        phase: status.phase,
        ..PodStatus::default()
    });
    slim
}

/// The Workload a pod was started for.
fn workload_of(pod: &Pod) -> Option<ObjectKey> {
    let name = pod.annotations().get(annotations::WORKLOAD)?;
    Some(ObjectKey::new(pod.namespace().unwrap_or_default(), name))
}

/// Whether the ungater holds `workload`: one admitted with a topology assignment for a pod set.
/// Only such a Workload has pods to release into domains or hosts to drop.
fn placed_by_topology(workload: &Workload) -> bool {
    workload
        .status
        .as_ref()
        .and_then(|s| s.admission.as_ref())
        .is_some_and(|a| {
            a.pod_set_assignments
                .iter()
                .any(|p| p.topology_assignment.is_some())
        })
}

/// Workloads a change asks to look at again.
#[derive(Debug, Default)]
pub struct Touched {
    pub workloads: BTreeSet<ObjectKey>,
    /// Every Workload: what all of them read changed (a host, a full list).
    pub all: bool,
}

/// The ungater's view of the cluster.
#[derive(Debug, Default)]
pub struct UngaterCaches {
    workloads: ReadWorkloads,
    pods: BTreeMap<ObjectKey, Pod>,
    /// Pods by the Workload they were started for.
    pods_of: BTreeMap<ObjectKey, BTreeSet<ObjectKey>>,
    pub ready_hosts: ReadyHosts,
}

impl UngaterCaches {
    /// Takes a change, clearing the kind first when it is a full list.
    pub fn take_input(&mut self, input: UngaterInput, touched: &mut Touched) {
        if input.source().1 {
            touched.all = true;
            match &input {
                UngaterInput::Workload(_) => self.workloads.clear(),
                UngaterInput::Pod(_) => {
                    self.pods.clear();
                    self.pods_of.clear();
                }
                UngaterInput::Node(_) => self.ready_hosts.clear(),
            }
        }
        match input {
            UngaterInput::Workload(change) => {
                change.for_each(|workload, present| self.take_workload(workload, present, touched));
            }
            UngaterInput::Pod(change) => {
                change.for_each(|pod, present| self.take_pod(pod, present, touched));
            }
            // A host turning ready or not may hold or free pods of any Workload.
            UngaterInput::Node(change) => change.for_each(|node, present| {
                touched.all |= self.ready_hosts.apply(&node, present);
            }),
        }
    }

    /// Takes the pod a write left behind, only while the cache still holds the version the
    /// write was decided on: an answer that comes back after the watch brought a newer version
    /// must not put the older one back.
    pub fn take_written(
        &mut self,
        input: UngaterInput,
        read_version: Option<&str>,
        touched: &mut Touched,
    ) {
        let UngaterInput::Pod(Change::Apply(pod)) = &input else {
            return;
        };
        let cached = self
            .pods
            .get(&ObjectKey::of(&**pod))
            .and_then(|p| p.resource_version());
        if cached.is_some() && cached.as_deref() == read_version {
            self.take_input(input, touched);
        }
    }

    fn take_workload(&mut self, workload: SharedWorkload, present: bool, touched: &mut Touched) {
        let key = ObjectKey::of(&*workload);
        if present && is_older(&*workload, self.read_workload(&key)) {
            return;
        }
        let previous = self.workloads.remove(&key);
        let kept = present && placed_by_topology(&workload);
        if kept || previous.is_some() {
            touched.workloads.insert(key);
        }
        if kept {
            self.workloads.insert(workload);
        }
    }

    fn take_pod(&mut self, pod: Pod, present: bool, touched: &mut Touched) {
        let key = ObjectKey::of(&pod);
        if present && is_older(&pod, self.pods.get(&key)) {
            return;
        }
        if let Some(workload) = workload_of(&pod) {
            touched.workloads.insert(workload.clone());
            let pods = self.pods_of.entry(workload.clone()).or_default();
            if present {
                pods.insert(key.clone());
            } else {
                pods.remove(&key);
                if pods.is_empty() {
                    self.pods_of.remove(&workload);
                }
            }
        }
        if present {
            self.pods.insert(key, pod);
        } else {
            self.pods.remove(&key);
        }
    }

    /// The Workload `key`, as last read, when it is placed by topology.
    pub fn read_workload(&self, key: &ObjectKey) -> Option<&Workload> {
        self.workloads.get(key)
    }

    /// The key of every Workload held, in order.
    pub fn workload_keys(&self) -> BTreeSet<ObjectKey> {
        self.workloads.keys().collect()
    }

    /// The pod `key`, as last read.
    pub fn pod(&self, key: &ObjectKey) -> Option<&Pod> {
        self.pods.get(key)
    }

    /// The Workload the pod `key` was started for.
    pub fn workload_of_pod(&self, key: &ObjectKey) -> Option<ObjectKey> {
        self.pods.get(key).and_then(workload_of)
    }

    /// The pods started for the Workload `key`.
    pub fn pods_of(&self, key: &ObjectKey) -> Vec<&Pod> {
        self.pods_of
            .get(key)
            .into_iter()
            .flatten()
            .filter_map(|pod| self.pods.get(pod))
            .collect()
    }
}

#[cfg(test)]
mod tests;
