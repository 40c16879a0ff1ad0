//! Topology for `kuota simulate`: the [`TopologySnapshot`] built from the manifests' Nodes, Pods,
//! Topologies, TAS flavors and admitted Workloads, and hot swap (C.8) of admitted TAS workloads
//! whose assignment holds failed nodes, before admission runs.

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::api::core::v1::Taint;

use super::objects::Objects;
use crate::engine::ModelError;
use crate::engine::features::{Feature, FeatureGates};
use crate::engine::model::{Snapshot, Workload};
use crate::engine::node_match::untolerated_taint;
use crate::engine::topology::admission_placer::pod_set_request;
use crate::engine::topology::model::{DomainAssignment, HOSTNAME_LABEL, Node};
use crate::engine::topology::{TopologySnapshot, decode, encode, replace_failed_nodes};
use crate::state::topology_input;

/// Why a workload is evicted when only one failed node may be replaced.
const MULTIPLE_FAILURES: &str =
    "more than one assigned node failed and TASReplaceMultipleFailedNodes is off";

/// The taint the node lifecycle controller puts on a node with `spec.unschedulable` set.
const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

/// Builds the topology snapshot; `snapshot` supplies the admitted Workloads (in engine form).
pub fn build(objects: &Objects, snapshot: &Snapshot) -> Result<TopologySnapshot, String> {
    let mut topo = TopologySnapshot::new();
    for topology in &objects.topologies {
        topo.upsert_topology(topology_input::topology(&topology.object))
            .map_err(|e| format!("{}: {e}", topology.origin))?;
    }
    for flavor in &objects.resource_flavors {
        if let Some(tas) = topology_input::tas_flavor(&flavor.object) {
            topo.upsert_flavor(tas)
                .map_err(|e| format!("{}: {e}", flavor.origin))?;
        }
    }
    for node in &objects.nodes {
        topo.upsert_node(
            topology_input::node(&node.object).map_err(|e| format!("{}: {e}", node.origin))?,
        );
    }
    for pod in &objects.pods {
        if let Some(bound) =
            topology_input::bound_pod(&pod.object).map_err(|e| format!("{}: {e}", pod.origin))?
        {
            topo.upsert_pod(bound);
        }
    }
    for workload in &snapshot.workloads {
        admit(&mut topo, workload).map_err(|e| e.to_string())?;
    }
    Ok(topo)
}

fn admit(topo: &mut TopologySnapshot, workload: &Workload) -> Result<(), ModelError> {
    let usage = topology_input::admitted_tas_usage(workload, |f| topo.tree(f).is_some())?;
    if let Some(usage) = usage {
        let label = usage.workload.clone();
        topo.admit(usage).map_err(|e| {
            ModelError::invalid("Workload", label, "status.admission", e.to_string())
        })?;
    }
    Ok(())
}

/// What hot swap did to one admitted Workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HotSwap {
    /// Every failed node was replaced: per pod set, the domains dropped and the domains added.
    Replaced(Vec<ReplacedPodSet>),
    /// No replacement: the Workload is evicted (`NodeFailures`) and requeued.
    Evicted {
        /// The `Evicted` condition's message.
        message: String,
        /// Why no replacement exists.
        detail: String,
    },
}

/// The replacement of one pod set's failed nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplacedPodSet {
    pub pod_set: String,
    pub removed: Vec<DomainAssignment>,
    pub added: Vec<DomainAssignment>,
}

/// Nodes by their hostname label (or name), to find the nodes an assignment names.
fn nodes_by_hostname(objects: &Objects) -> HashMap<String, Node> {
    objects
        .nodes
        .iter()
        .filter_map(|n| topology_input::node(&n.object).ok())
        .map(|n| {
            let host = n
                .labels
                .get(HOSTNAME_LABEL)
                .cloned()
                .unwrap_or_else(|| n.name.clone());
            (host, n)
        })
        .collect()
}

/// Whether a node has failed for pods with `tolerations` (C.8): absent, not Ready, or carrying a
/// NoSchedule/NoExecute taint they do not tolerate (`spec.unschedulable` counts as the taint the
/// node lifecycle controller adds for it).
fn failed(
    node: Option<&Node>,
    tolerations: &[k8s_openapi::api::core::v1::Toleration],
    gates: &FeatureGates,
) -> bool {
    let Some(node) = node else {
        return true;
    };
    if !gates.enabled(Feature::TASReplaceNodeOnNodeTaints) {
        return !node.ready;
    }
    let mut taints = node.taints.clone();
    if node.unschedulable {
        taints.push(Taint {
            key: UNSCHEDULABLE_TAINT.into(),
            effect: "NoSchedule".into(),
            ..Taint::default()
        });
    }
    !node.ready || untolerated_taint(&taints, tolerations).is_some()
}

/// Replaces the failed nodes of every admitted TAS Workload of `snapshot`, or evicts it (its
/// admission is cleared so admission places it again from scratch). Keyed by `namespace/name`.
/// Gates: `TASFailedNodeReplacement` off disables hot swap; `TASReplaceNodeOnNodeTaints` off
/// ignores taints; `TASReplaceMultipleFailedNodes` off evicts on more than one failed node, as
/// Kueue does.
pub fn hot_swap(
    objects: &Objects,
    topo: &mut TopologySnapshot,
    snapshot: &mut Snapshot,
    gates: &FeatureGates,
) -> BTreeMap<String, HotSwap> {
    let mut outcomes = BTreeMap::new();
    if !gates.enabled(Feature::TASFailedNodeReplacement) {
        return outcomes;
    }
    let nodes = nodes_by_hostname(objects);
    let flavor_tolerations: HashMap<String, Vec<_>> = snapshot
        .resource_flavors
        .iter()
        .map(|f| (f.name.clone(), f.tolerations.clone()))
        .collect();
    for workload in &mut snapshot.workloads {
        let key = format!("{}/{}", workload.namespace, workload.name);
        let Some(admission) = workload.admission.clone() else {
            continue;
        };
        let mut replaced = Vec::new();
        let mut failure = None;
        for (index, assignment) in admission.pod_set_assignments.iter().enumerate() {
            let (Some(encoded), Some(pod_set)) = (
                &assignment.topology_assignment,
                workload.pod_sets.iter().find(|p| p.name == assignment.name),
            ) else {
                continue;
            };
            let Some(flavor) = assignment.flavors.values().find(|f| topo.tree(f).is_some()) else {
                continue;
            };
            let Ok(list) = decode(encoded) else {
                continue;
            };
            if list.levels != [HOSTNAME_LABEL] {
                continue;
            }
            let mut tolerations = pod_set.tolerations.clone();
            tolerations.extend(flavor_tolerations.get(flavor).cloned().unwrap_or_default());
            let failed_nodes: Vec<String> = list
                .domains
                .iter()
                .filter_map(|d| d.values.last())
                .filter(|host| failed(nodes.get(*host), &tolerations, gates))
                .map(|host| {
                    nodes
                        .get(host)
                        .map_or_else(|| host.clone(), |n| n.name.clone())
                })
                .collect();
            if failed_nodes.is_empty() {
                continue;
            }
            if failed_nodes.len() > 1 && !gates.enabled(Feature::TASReplaceMultipleFailedNodes) {
                failure = Some((failed_nodes, MULTIPLE_FAILURES.to_string()));
                break;
            }
            // The pod set holds a TAS assignment, so it is a TAS pod set: implied when it has no
            // topology request of its own.
            let request =
                match pod_set_request(pod_set, assignment.count, flavor, true, true, gates) {
                    Ok(Some(request)) => request,
                    Ok(None) => continue,
                    Err(reason) => {
                        failure = Some((failed_nodes, reason));
                        break;
                    }
                };
            match replace_failed_nodes(topo, &request, &list, &failed_nodes, gates) {
                Ok(replacement) => {
                    if let Some(admission) = &mut workload.admission {
                        admission.pod_set_assignments[index].topology_assignment =
                            Some(encode(&replacement.assignment, gates));
                    }
                    if let Err(error) = admit(topo, workload) {
                        failure = Some((failed_nodes, error.to_string()));
                        break;
                    }
                    replaced.push(ReplacedPodSet {
                        pod_set: pod_set.name.clone(),
                        removed: replacement.removed,
                        added: replacement.added,
                    });
                }
                Err(error) => {
                    failure = Some((failed_nodes, error.to_string()));
                    break;
                }
            }
        }
        if let Some((failed_nodes, detail)) = failure {
            topo.release(&key);
            workload.admission = None;
            workload.quota_reserved_at = None;
            let message = if detail == MULTIPLE_FAILURES {
                format!(
                    "Workload eviction triggered due to multiple TAS assigned node failures, including: {}",
                    failed_nodes.join(", ")
                )
            } else {
                format!(
                    "Workload was evicted as there was no replacement for unhealthy node(s): {}",
                    failed_nodes.join(", ")
                )
            };
            outcomes.insert(key, HotSwap::Evicted { message, detail });
        } else if !replaced.is_empty() {
            outcomes.insert(key, HotSwap::Replaced(replaced));
        }
    }
    outcomes
}
