//! The node-health loop: Kueue's TAS node controller as a task of its own. Its own watches (Nodes,
//! ResourceFlavors, and the pods kuota started, to know whose pods still progress on a failing
//! node) and the shared Workload watch feed its own queue; it finds, per admitted TAS Workload,
//! which of its nodes have failed (timing the Ready delay where a gate asks for one) and tells the
//! admission loop (an empty list: none any more). It decides failures only; the replacement or
//! eviction is the admission loop's, made in the one engine state admission places into, so the
//! two never claim the same capacity.

mod facts;
mod pods;

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod, Toleration};
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use tokio::sync::mpsc;

use self::facts::node_facts;
use self::pods::{ProgressingPods, slim_pod};
use super::watches::{
    Change, SharedWorkload,
    shared::{SharedWatches, owned},
};
use crate::api::keys::labels;
use crate::api::{ResourceFlavor, Workload};
use crate::engine::features::{Feature, FeatureGates};
use crate::engine::topology::model::HOSTNAME_LABEL;
use crate::engine::topology::node_failure::{
    AssignedPodSet, FailedNode, NodeFacts, NodeLookup, assigned_pod_sets, workload_nodes,
};

/// Watch changes waiting for the node-health loop.
const INPUT_DEPTH: usize = 1024;
/// The longest the loop sleeps without looking again (no deadline pending).
const IDLE: Duration = Duration::from_secs(3600);

/// The nodes of one admitted Workload (`namespace/name`) that have failed; empty when none has
/// (any more).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeFailures {
    pub workload: String,
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
    NodeHealthLoop::new(gates, reports).run(received)
}

/// Whether failure detection asks where a Workload's pods stand: a node that is not Ready waits for
/// them with `TASReplaceNodeOnPodTermination`, a tainted one with either taint rule.
fn reads_pods(gates: &FeatureGates) -> bool {
    gates.enabled(Feature::TASFailedNodeReplacement)
        && (gates.enabled(Feature::TASReplaceNodeOnPodTermination)
            || gates.enabled(Feature::TASReplaceNodeOnNodeTaints))
}

struct NodeHealthLoop {
    gates: FeatureGates,
    reports: mpsc::Sender<NodeFailures>,
    /// Nodes by hostname.
    nodes: BTreeMap<String, NodeFacts>,
    /// Deleted nodes by hostname: their name and when the deletion was seen.
    gone: BTreeMap<String, (String, Timestamp)>,
    /// Each ResourceFlavor's tolerations.
    flavors: BTreeMap<String, Vec<Toleration>>,
    /// The admitted Workloads with hostname-level assignments, as read.
    workloads: BTreeMap<String, SharedWorkload>,
    /// The failed nodes last reported per Workload.
    reported: BTreeMap<String, Vec<String>>,
    /// Where the pods kuota started still progress.
    pods: ProgressingPods,
    /// Whether each watch (Nodes, Workloads, ResourceFlavors, pods) has listed once.
    listed: [bool; 4],
}

impl NodeHealthLoop {
    /// The loop before its watches have listed; the pods count as listed when it reads none.
    fn new(gates: FeatureGates, reports: mpsc::Sender<NodeFailures>) -> Self {
        let watch_pods = reads_pods(&gates);
        NodeHealthLoop {
            gates,
            reports,
            nodes: BTreeMap::new(),
            gone: BTreeMap::new(),
            flavors: BTreeMap::new(),
            workloads: BTreeMap::new(),
            reported: BTreeMap::new(),
            pods: ProgressingPods::default(),
            listed: [false, false, false, !watch_pods],
        }
    }

    async fn run(mut self, mut inputs: mpsc::Receiver<HealthInput>) {
        let mut recheck: Option<Timestamp> = None;
        loop {
            let mut changed = false;
            let sleep = recheck.map_or(IDLE, |at| {
                Duration::try_from(at.duration_since(Timestamp::now()))
                    .unwrap_or(Duration::ZERO)
                    // The deadline is in whole seconds of the API's times: look just after it.
                    .saturating_add(Duration::from_millis(100))
            });
            tokio::select! {
                input = inputs.recv() => match input {
                    Some(input) => changed |= self.take(input, Timestamp::now()),
                    None => return,
                },
                () = tokio::time::sleep(sleep) => changed = true,
            }
            while let Ok(input) = inputs.try_recv() {
                changed |= self.take(input, Timestamp::now());
            }
            if changed && self.listed.iter().all(|l| *l) {
                recheck = self.pass(Timestamp::now()).await;
            }
        }
    }

    /// Takes one change in; false when it cannot change any verdict (a pod update that leaves
    /// where every Workload's pods progress as it was), so no pass is needed for it.
    fn take(&mut self, input: HealthInput, now: Timestamp) -> bool {
        match input {
            HealthInput::Node(change) => self.node_change(change, now),
            HealthInput::Workload(change) => {
                if matches!(change, Change::Reset(_)) {
                    self.listed[1] = true;
                    self.workloads.clear();
                }
                for (workload, present) in objects(change) {
                    let key = format!(
                        "{}/{}",
                        workload.namespace().unwrap_or_default(),
                        workload.name_any()
                    );
                    if present && has_host_assignment(&workload) {
                        self.workloads.insert(key, workload);
                    } else {
                        self.workloads.remove(&key);
                    }
                }
            }
            HealthInput::Pod(Change::Reset(list)) => {
                self.listed[3] = true;
                self.pods.reset(&list);
            }
            HealthInput::Pod(Change::Apply(pod)) => return self.pods.apply(&pod),
            HealthInput::Pod(Change::Delete(pod)) => return self.pods.delete(&pod),
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
        true
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

    /// Finds the failed nodes of every watched Workload at `now`, reports what changed, and
    /// returns when to look again.
    async fn pass(&mut self, now: Timestamp) -> Option<Timestamp> {
        let mut recheck: Option<Timestamp> = None;
        let mut found: BTreeMap<String, Vec<FailedNode>> = BTreeMap::new();
        for (key, workload) in &self.workloads {
            let pod_sets: Vec<AssignedPodSet> = match assigned_pod_sets(workload, &self.flavors) {
                Ok(pod_sets) => pod_sets,
                Err(error) => {
                    tracing::debug!(workload = %key, %error, "assignment not read");
                    continue;
                }
            };
            if pod_sets.is_empty() {
                continue;
            }
            let verdict = workload_nodes(
                &pod_sets,
                |host| self.lookup(host),
                |node| self.pods.on(key, node),
                &self.gates,
                now,
            );
            if let Some(at) = verdict.recheck_at {
                recheck = Some(recheck.map_or(at, |r| r.min(at)));
            }
            if !verdict.failed.is_empty() {
                found.insert(key.clone(), verdict.failed);
            }
        }
        let mut reports = Vec::new();
        for (key, failed) in &found {
            let names: Vec<String> = failed.iter().map(|f| f.name.clone()).collect();
            if self.reported.get(key) != Some(&names) {
                tracing::info!(workload = %key, nodes = ?names, "assigned nodes failed");
                reports.push(NodeFailures {
                    workload: key.clone(),
                    failed: failed.clone(),
                });
                self.reported.insert(key.clone(), names);
            }
        }
        let recovered: Vec<String> = self
            .reported
            .keys()
            .filter(|key| !found.contains_key(*key))
            .cloned()
            .collect();
        for key in recovered {
            self.reported.remove(&key);
            reports.push(NodeFailures {
                workload: key,
                failed: Vec::new(),
            });
        }
        for report in reports {
            if self.reports.send(report).await.is_err() {
                tracing::error!("the admission loop stopped; node failures are not acted on");
            }
        }
        self.forget_unassigned_tombstones();
        recheck
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
        let assigned: std::collections::BTreeSet<String> = self
            .workloads
            .values()
            .filter_map(|w| assigned_pod_sets(w, &self.flavors).ok())
            .flatten()
            .flat_map(|p| p.hosts)
            .collect();
        self.gone.retain(|host, _| assigned.contains(host));
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
