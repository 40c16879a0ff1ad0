//! The node-health loop: Kueue's TAS node controller as a task of its own. Its own watches (Nodes,
//! ResourceFlavors, and the pods kuota started, to know whose pods still progress on a failing
//! node) and the shared Workload watch feed its own queue; it finds, per admitted TAS Workload,
//! which of its nodes have failed (timing the Ready delay where a gate asks for one) and tells the
//! admission loop (an empty list: none any more). It decides failures only; the replacement or
//! eviction is the admission loop's, made in the one engine state admission places into, so the
//! two never claim the same capacity. It runs in the [`WorkQueue`] on every replica, not only the
//! leader: what it tells the admission loop is acted on by the leader alone.

mod facts;
mod pods;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{Node, Pod, Toleration};
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use tokio::sync::mpsc;
use tokio::time::Instant;

use self::facts::node_facts;
use self::pods::{ProgressingPods, slim_pod};
use super::watches::{
    Change, SharedWorkload,
    shared::{SharedWatches, owned},
};
use super::work_queue::{Dirty, Task, Verdict, WorkQueue, Writes};
use crate::api::keys::labels;
use crate::api::{ObjectKey, ResourceFlavor, Workload};
use crate::clock::{Clock, Reading};
use crate::engine::features::{Feature, FeatureGates};
use crate::engine::topology::model::HOSTNAME_LABEL;
use crate::engine::topology::node_failure::{
    AssignedPodSet, FailedNode, NodeFacts, NodeLookup, assigned_pod_sets, workload_nodes,
};

/// Watch changes waiting for the node-health loop.
const INPUT_DEPTH: usize = 1024;
/// How long after a deadline the loop looks: deadlines are in whole seconds of the API's times.
const AFTER_DEADLINE: Duration = Duration::from_millis(100);

/// The nodes of one admitted Workload that have failed; empty when none has (any more).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeFailures {
    pub workload: ObjectKey,
    pub failed: Vec<FailedNode>,
}

/// A change delivered by one of the loop's watches.
#[derive(Debug)]
enum HealthInput {
    Node(Change<Node>),
    Workload(Change<SharedWorkload>),
    ResourceFlavor(Change<ResourceFlavor>),
    Pod(Change<Pod>),
}

/// Subscribes the loop to the shared watches it reads and returns it; it sends what it finds
/// to `reports`.
pub fn start(
    gates: FeatureGates,
    reports: mpsc::Sender<NodeFailures>,
    watches: &mut SharedWatches,
    clock: Clock,
) -> impl Future<Output = ()> + use<> {
    let (inputs, received) = mpsc::channel(INPUT_DEPTH);
    watches.workloads.subscribe(&inputs, HealthInput::Workload);
    watches
        .nodes
        .subscribe(&inputs, |c| HealthInput::Node(c.map(owned)));
    watches
        .resource_flavors
        .subscribe(&inputs, |c| HealthInput::ResourceFlavor(c.map(owned)));
    if reads_pods(&gates) {
        // Only pods kuota started carry the pod-set label.
        watches.pods.subscribe_to(
            &inputs,
            |c| HealthInput::Pod(c.map(|pod| slim_pod(owned(pod)))),
            |pod| pod.labels().contains_key(labels::POD_SET),
        );
    }
    WorkQueue::ungated(NodeHealthTask::new(gates, reports), clock).run(received)
}

/// Whether failure detection asks where a Workload's pods stand: a node that is not Ready waits for
/// them with `TASReplaceNodeOnPodTermination`, a tainted one with either taint rule.
fn reads_pods(gates: &FeatureGates) -> bool {
    gates.enabled(Feature::TASFailedNodeReplacement)
        && (gates.enabled(Feature::TASReplaceNodeOnPodTermination)
            || gates.enabled(Feature::TASReplaceNodeOnNodeTaints))
}

struct NodeHealthTask {
    gates: FeatureGates,
    reports: mpsc::Sender<NodeFailures>,
    /// Nodes by hostname.
    nodes: BTreeMap<String, NodeFacts>,
    /// Deleted nodes by hostname: their name and when the deletion was seen.
    gone: BTreeMap<String, (String, Timestamp)>,
    /// Each ResourceFlavor's tolerations.
    flavors: BTreeMap<String, Vec<Toleration>>,
    /// The admitted Workloads with hostname-level assignments, as read.
    workloads: BTreeMap<ObjectKey, SharedWorkload>,
    /// The failed nodes last reported per Workload.
    reported: BTreeMap<ObjectKey, Vec<String>>,
    /// When each Workload's verdict changes by the passing of time alone.
    rechecks: BTreeMap<ObjectKey, Timestamp>,
    /// Where the pods kuota started still progress.
    pods: ProgressingPods,
    /// Whether each watch (Nodes, Workloads, ResourceFlavors, pods) has listed once.
    listed: [bool; 4],
}

impl NodeHealthTask {
    /// The task before its watches have listed; the pods count as listed when it reads none.
    fn new(gates: FeatureGates, reports: mpsc::Sender<NodeFailures>) -> Self {
        let watch_pods = reads_pods(&gates);
        NodeHealthTask {
            gates,
            reports,
            nodes: BTreeMap::new(),
            gone: BTreeMap::new(),
            flavors: BTreeMap::new(),
            workloads: BTreeMap::new(),
            reported: BTreeMap::new(),
            rechecks: BTreeMap::new(),
            pods: ProgressingPods::default(),
            listed: [false, false, false, !watch_pods],
        }
    }

    fn node_change(&mut self, change: Change<Node>, now: Timestamp) {
        if let Change::Reset(list) = &change {
            self.listed[0] = true;
            let listed: Vec<String> = list.iter().map(hostname).collect();
            let missing: Vec<String> = self
                .nodes
                .keys()
                .filter(|host| !listed.contains(host))
                .cloned()
                .collect();
            for host in missing {
                if let Some(node) = self.nodes.remove(&host) {
                    self.gone.insert(host, (node.name, now));
                }
            }
        }
        for (node, present) in objects(change) {
            let host = hostname(&node);
            if present {
                self.gone.remove(&host);
                let facts = node_facts(&node, self.nodes.get(&host), now);
                self.nodes.insert(host, facts);
            } else if self.nodes.remove(&host).is_some() {
                self.gone.insert(host, (node.name_any(), now));
            }
        }
    }

    /// The failed nodes of the Workload `key` at `now`; its recheck is kept for [`Task::due`].
    fn failed(&mut self, key: &ObjectKey, now: Timestamp) -> Vec<FailedNode> {
        self.rechecks.remove(key);
        let Some(workload) = self.workloads.get(key) else {
            return Vec::new();
        };
        let pod_sets: Vec<AssignedPodSet> = match assigned_pod_sets(workload, &self.flavors) {
            Ok(pod_sets) => pod_sets,
            Err(error) => {
                tracing::debug!(workload = %key, %error, "assignment not read");
                return Vec::new();
            }
        };
        if pod_sets.is_empty() {
            return Vec::new();
        }
        let verdict = workload_nodes(
            &pod_sets,
            |host| self.lookup(host),
            |node| self.pods.on(key, node),
            &self.gates,
            now,
        );
        if let Some(at) = verdict.recheck_at {
            self.rechecks.insert(key.clone(), at);
        }
        verdict.failed
    }

    fn lookup(&self, host: &str) -> NodeLookup<'_> {
        if let Some(node) = self.nodes.get(host) {
            return NodeLookup::Present(node);
        }
        match self.gone.get(host) {
            Some((name, since)) => NodeLookup::Gone {
                name,
                since: *since,
            },
            None => NodeLookup::Unknown,
        }
    }

    /// Deleted nodes no watched Workload is assigned to any more need no remembering.
    fn forget_unassigned_tombstones(&mut self) {
        if self.gone.is_empty() {
            return;
        }
        let assigned: BTreeSet<String> = self
            .workloads
            .values()
            .filter_map(|w| assigned_pod_sets(w, &self.flavors).ok())
            .flatten()
            .flat_map(|p| p.hosts)
            .collect();
        self.gone.retain(|host, _| assigned.contains(host));
    }
}

impl Task for NodeHealthTask {
    type Input = HealthInput;
    type Key = ObjectKey;
    type Write = NodeFailures;
    type Answer = ();

    /// Marks what a change may move: a pod update that leaves where every Workload's pods
    /// progress as it was marks nothing.
    fn take(&mut self, input: HealthInput, now: Reading, dirty: &mut Dirty<ObjectKey>) {
        match input {
            HealthInput::Node(change) => self.node_change(change, now.wall),
            HealthInput::Workload(change) => {
                if matches!(change, Change::Reset(_)) {
                    self.listed[1] = true;
                    dirty.extend(std::mem::take(&mut self.workloads).into_keys());
                }
                for (workload, present) in objects(change) {
                    let key = ObjectKey::of(&*workload);
                    if present && has_host_assignment(&workload) {
                        self.workloads.insert(key.clone(), workload);
                    } else {
                        self.workloads.remove(&key);
                    }
                    dirty.insert(key);
                }
                return;
            }
            HealthInput::Pod(Change::Reset(list)) => {
                self.listed[3] = true;
                self.pods.reset(&list);
            }
            HealthInput::Pod(Change::Apply(pod)) => {
                if !self.pods.apply(&pod) {
                    return;
                }
            }
            HealthInput::Pod(Change::Delete(pod)) => {
                if !self.pods.delete(&pod) {
                    return;
                }
            }
            HealthInput::ResourceFlavor(change) => {
                if matches!(change, Change::Reset(_)) {
                    self.listed[2] = true;
                    self.flavors.clear();
                }
                for (flavor, present) in objects(change) {
                    if present {
                        let tolerations = flavor.spec.tolerations.clone();
                        self.flavors.insert(flavor.name_any(), tolerations);
                    } else {
                        self.flavors.remove(&flavor.name_any());
                    }
                }
            }
        }
        dirty.all();
    }

    fn listed(&self) -> bool {
        self.listed.iter().all(|l| *l)
    }

    fn keys(&self) -> Vec<ObjectKey> {
        let reported = self.reported.keys();
        self.workloads.keys().chain(reported).cloned().collect()
    }

    fn due(&mut self, now: Reading, dirty: &mut Dirty<ObjectKey>) -> Option<Instant> {
        let (due, later): (Vec<_>, Vec<_>) =
            self.rechecks.iter().partition(|(_, at)| **at <= now.wall);
        dirty.extend(due.into_iter().map(|(key, _)| key.clone()));
        let next = later.into_iter().map(|(_, at)| *at).min()?;
        let wait = Duration::try_from(next.duration_since(now.wall)).unwrap_or(Duration::ZERO);
        Some(now.instant + wait + AFTER_DEADLINE)
    }

    /// The Workload's failed nodes, reported when they differ from the last report (an empty
    /// report once none has failed any more, or the Workload is gone).
    fn decide(
        &mut self,
        key: &ObjectKey,
        now: Reading,
        writes: &mut Writes<'_, ObjectKey, NodeFailures>,
    ) {
        let failed = self.failed(key, now.wall);
        let names: Vec<String> = failed.iter().map(|f| f.name.clone()).collect();
        if failed.is_empty() {
            if self.reported.remove(key).is_some() {
                writes.send(
                    key.clone(),
                    NodeFailures {
                        workload: key.clone(),
                        failed,
                    },
                );
            }
        } else if self.reported.get(key) != Some(&names) {
            tracing::info!(workload = %key, nodes = ?names, "assigned nodes failed");
            self.reported.insert(key.clone(), names);
            writes.send(
                key.clone(),
                NodeFailures {
                    workload: key.clone(),
                    failed,
                },
            );
        }
    }

    fn decide_all(
        &mut self,
        keys: Vec<ObjectKey>,
        now: Reading,
        writes: &mut Writes<'_, ObjectKey, NodeFailures>,
    ) {
        for key in keys {
            if writes.busy(&key) {
                writes.later(key);
            } else {
                self.decide(&key, now, writes);
            }
        }
        self.forget_unassigned_tombstones();
    }

    fn write(&self, report: NodeFailures) -> BoxFuture<'static, ()> {
        let reports = self.reports.clone();
        async move {
            if reports.send(report).await.is_err() {
                tracing::error!("the admission loop stopped; node failures are not acted on");
            }
        }
        .boxed()
    }

    fn answered(
        &mut self,
        _key: &ObjectKey,
        (): (),
        _now: Reading,
        _dirty: &mut Dirty<ObjectKey>,
    ) -> Verdict {
        Verdict::Settled
    }
}

/// The hostname an assignment names the node by: its `kubernetes.io/hostname` label, else its
/// name.
fn hostname(node: &Node) -> String {
    node.labels()
        .get(HOSTNAME_LABEL)
        .cloned()
        .unwrap_or_else(|| node.name_any())
}

/// Whether some pod set of the Workload was assigned hosts: only those can lose a node.
fn has_host_assignment(workload: &Workload) -> bool {
    workload
        .status
        .as_ref()
        .and_then(|s| s.admission.as_ref())
        .is_some_and(|a| {
            a.pod_set_assignments.iter().any(|p| {
                p.topology_assignment
                    .as_ref()
                    .is_some_and(|t| t.levels == [HOSTNAME_LABEL])
            })
        })
}

/// Each object of `change` with whether it is present afterwards.
fn objects<K>(change: Change<K>) -> Vec<(K, bool)> {
    match change {
        Change::Apply(object) => vec![(*object, true)],
        Change::Delete(object) => vec![(*object, false)],
        Change::Reset(list) => list.into_iter().map(|o| (o, true)).collect(),
    }
}

#[cfg(test)]
mod tests;
