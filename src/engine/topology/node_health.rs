//! Failed nodes under admitted TAS workloads, and what to do about them, as Kueue's failed-node
//! replacement decides: a node has failed as failure detection counts it (gone, not Ready, or with
//! gate `TASReplaceNodeOnNodeTaints` a NoSchedule or NoExecute taint the workload does not
//! tolerate for good); every failed node of a pod set is replaced inside the domain its request
//! requires, or the workload is evicted (`NodeFailures`) and queued again. Replacing several
//! failed nodes of one workload at once is kuota's own extension, behind its gate
//! `TASReplaceMultipleFailedNodes` (on by default; Kueue has no such gate): Kueue replaces one
//! failed node at a time and evicts the workload when another of its nodes fails before the first
//! is replaced, which is what the gate off does with more than one failed node.

use std::collections::{BTreeSet, HashMap};

use k8s_openapi::api::core::v1::Toleration;
use k8s_openapi::jiff::Timestamp;

use super::admission_placer::pod_set_request;
use super::model::{DomainAssignment, HOSTNAME_LABEL, Node};
use super::node_failure::{
    NodeFacts, NodeHealth, NodeLookup, PodsOnNode, ReadyCondition, node_health,
};
use super::{TopologySnapshot, decode, encode, replace_failed_nodes};
use crate::engine::features::{Feature, FeatureGates};
use crate::engine::model::{Admission, Workload};

/// What hot swap does to one admitted workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HotSwap {
    /// Every failed node was replaced: the admission to hold from now on, and per pod set the
    /// domains dropped and added.
    Replaced {
        admission: Admission,
        pod_sets: Vec<ReplacedPodSet>,
    },
    /// No replacement: the workload is evicted and queued again.
    Evicted(NoReplacement),
}

/// The replacement of one pod set's failed nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplacedPodSet {
    pub pod_set: String,
    pub removed: Vec<DomainAssignment>,
    pub added: Vec<DomainAssignment>,
}

/// Why an admitted workload with failed nodes is evicted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoReplacement {
    /// The failed nodes, by name.
    pub failed_nodes: Vec<String>,
    pub cause: NoReplacementCause,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoReplacementCause {
    /// More than one node failed and kuota's gate `TASReplaceMultipleFailedNodes` is off.
    MultipleFailures,
    /// The topology has no replacement; the placement's own explanation.
    NoFit(String),
}

impl NoReplacement {
    /// The `Evicted` condition's message, as Kueue words it.
    pub fn message(&self) -> String {
        let nodes = self.failed_nodes.join(", ");
        match self.cause {
            NoReplacementCause::MultipleFailures => format!(
                "Workload eviction triggered due to multiple TAS assigned node failures, including: {nodes}"
            ),
            NoReplacementCause::NoFit(_) => format!(
                "Workload was evicted as there was no replacement for unhealthy node(s): {nodes}"
            ),
        }
    }

    /// Why no replacement exists, for people reading the output.
    pub fn detail(&self) -> String {
        match &self.cause {
            NoReplacementCause::MultipleFailures => {
                "more than one assigned node failed and TASReplaceMultipleFailedNodes is off".into()
            }
            NoReplacementCause::NoFit(detail) => detail.clone(),
        }
    }
}

/// Whether a node has failed for pods with `tolerations` in a snapshot, which has no history and
/// no pods: failure detection's rule, long after the node came to look as it does, with the
/// workload's pods there stopped. Absent, not Ready, or (gate `TASReplaceNodeOnNodeTaints`)
/// carrying a NoSchedule/NoExecute taint they do not tolerate for good.
pub(crate) fn node_failed(
    node: Option<&Node>,
    tolerations: &[Toleration],
    gates: &FeatureGates,
) -> bool {
    let Some(node) = node else {
        return true;
    };
    let facts = NodeFacts {
        name: node.name.clone(),
        ready: Some(ReadyCondition {
            ready: node.ready,
            since: Timestamp::UNIX_EPOCH,
        }),
        taints: node.taints.clone(),
        unschedulable: node.unschedulable,
        seen_at: Timestamp::UNIX_EPOCH,
    };
    let health = node_health(
        NodeLookup::Present(&facts),
        tolerations,
        PodsOnNode::Stopped,
        gates,
        Timestamp::MAX,
    );
    matches!(health, NodeHealth::Failed { .. })
}

/// What the cluster looks like to hot swap: nodes by hostname and each flavor's tolerations.
pub struct NodeHealthView<'a> {
    pub nodes_by_hostname: &'a HashMap<String, Node>,
    pub flavor_tolerations: &'a HashMap<String, Vec<Toleration>>,
    pub gates: &'a FeatureGates,
    /// The failed nodes by name, when failure detection has already decided (the node-health
    /// loop, which times the Ready delay); `None` judges each node as it is now.
    pub failed: Option<&'a BTreeSet<String>>,
}

impl NodeHealthView<'_> {
    /// The node an assignment's hostname names, by node name, if it has failed.
    fn failed_node(&self, host: &str, tolerations: &[Toleration]) -> Option<String> {
        let node = self.nodes_by_hostname.get(host);
        let name = node.map_or_else(|| host.to_string(), |n| n.name.clone());
        let failed = match self.failed {
            Some(failed) => failed.contains(&name),
            None => node_failed(node, tolerations, self.gates),
        };
        failed.then_some(name)
    }
}

/// Hot swap for one admitted workload, against `topo` (which holds the workload's own usage):
/// `None` when none of its nodes failed (or `TASFailedNodeReplacement` is off). Replacements are
/// placed in `topo` as they are found, so a later pod set or workload sees them.
pub fn hot_swap(
    topo: &mut TopologySnapshot,
    workload: &Workload,
    view: &NodeHealthView<'_>,
) -> Option<HotSwap> {
    let gates = view.gates;
    if !gates.enabled(Feature::TASFailedNodeReplacement) {
        return None;
    }
    let mut admission = workload.admission.clone()?;
    let mut replaced = Vec::new();
    for index in 0..admission.pod_set_assignments.len() {
        let assignment = &admission.pod_set_assignments[index];
        let (Some(encoded), Some(pod_set)) = (
            &assignment.topology_assignment,
            workload.pod_sets.iter().find(|p| p.name == assignment.name),
        ) else {
            continue;
        };
        let Some(flavor) = assignment.flavors.values().find(|f| topo.tree(f).is_some()) else {
            continue;
        };
        let Ok(list) = decode(encoded, assignment.count) else {
            continue;
        };
        if list.levels != [HOSTNAME_LABEL] {
            continue;
        }
        let mut tolerations = pod_set.tolerations.clone();
        tolerations.extend(
            view.flavor_tolerations
                .get(flavor)
                .cloned()
                .unwrap_or_default(),
        );
        let failed_nodes: Vec<String> = list
            .domains
            .iter()
            .filter_map(|d| d.values.last())
            .filter_map(|host| view.failed_node(host, &tolerations))
            .collect();
        if failed_nodes.is_empty() {
            continue;
        }
        let evicted = |cause| {
            Some(HotSwap::Evicted(NoReplacement {
                failed_nodes: failed_nodes.clone(),
                cause,
            }))
        };
        if failed_nodes.len() > 1 && !gates.enabled(Feature::TASReplaceMultipleFailedNodes) {
            return evicted(NoReplacementCause::MultipleFailures);
        }
        // The pod set holds a TAS assignment, so it is a TAS pod set: implied when it has no
        // topology request of its own.
        let request = match pod_set_request(pod_set, assignment.count, flavor, true, true, gates) {
            Ok(Some(request)) => request,
            Ok(None) => continue,
            Err(reason) => return evicted(NoReplacementCause::NoFit(reason)),
        };
        match replace_failed_nodes(topo, &request, &list, &failed_nodes, gates) {
            Ok(replacement) => {
                admission.pod_set_assignments[index].topology_assignment =
                    Some(encode(&replacement.assignment, gates));
                replaced.push(ReplacedPodSet {
                    pod_set: pod_set.name.clone(),
                    removed: replacement.removed,
                    added: replacement.added,
                });
            }
            Err(error) => return evicted(NoReplacementCause::NoFit(error.to_string())),
        }
    }
    (!replaced.is_empty()).then_some(HotSwap::Replaced {
        admission,
        pod_sets: replaced,
    })
}
