//! [`TopologySnapshot`]: every node once, one tree per TAS flavor, and the usage that reduces free
//! capacity, kept current by small events (C.7.1).
//!
//! Usage sources: bound non-TAS pods (per node), admitted TAS workloads (per hostname when the
//! topology's lowest level is the hostname, else per lowest-level domain of that topology, summed
//! across every flavor sharing the topology). Each event touches one node's columns and one
//! root-to-leaf path per flavor tree holding that node.

use std::collections::{BTreeMap, HashMap};

use thiserror::Error;

use super::model::{AdmittedTasUsage, BoundPod, HOSTNAME_LABEL, Node, TasFlavor, Topology};
use super::nodes::{NodeId, NodeStore};
use super::resources::{ResVec, ResourceRegistry};
use super::tree::{FlavorTree, Membership};
use crate::api::ObjectKey;
use crate::name_table::{NameTable, Named};

/// Input the snapshot cannot use, naming the object and field.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SnapshotError {
    #[error("ResourceFlavor {flavor:?}: spec.topologyName {topology:?} names no known Topology")]
    UnknownTopology { flavor: String, topology: String },
    #[error(
        "Topology {topology:?}: spec.levels must list 1 to 16 distinct keys, with {HOSTNAME_LABEL:?} only last"
    )]
    InvalidLevels { topology: String },
    #[error(
        "Workload {workload:?}: podSetAssignments[{index}] uses flavor {flavor:?}, which is not a TAS flavor"
    )]
    UnknownFlavor {
        workload: String,
        index: usize,
        flavor: String,
    },
    #[error(
        "Workload {workload:?}: podSetAssignments[{index}].topologyAssignment.levels {got:?} do not match {expected:?}"
    )]
    AssignmentLevels {
        workload: String,
        index: usize,
        expected: Vec<String>,
        got: Vec<String>,
    },
    #[error(
        "Workload {workload:?}: podSetAssignments[{index}].topologyAssignment domain {domain} has {got} values, expected {expected}"
    )]
    DomainValues {
        workload: String,
        index: usize,
        domain: usize,
        expected: usize,
        got: usize,
    },
}

impl Named<()> for AdmittedTasUsage {
    fn names<'a>(&'a self, _: &'a ()) -> Option<(&'a str, &'a str)> {
        Some((&self.workload.namespace, &self.workload.name))
    }
}

#[derive(Clone, Debug)]
struct PodRecord {
    node: String,
    /// Requests plus one `pods`, when the pod counts as non-TAS usage.
    usage: Option<ResVec>,
}

/// The cluster as topology placement sees it. Build it once from a list of objects, then apply
/// events; every update is proportional to the number of levels (per flavor tree holding the node).
#[derive(Clone, Debug, Default)]
pub struct TopologySnapshot {
    pub(crate) registry: ResourceRegistry,
    pub(crate) nodes: NodeStore,
    topologies: BTreeMap<String, Topology>,
    flavors: BTreeMap<String, TasFlavor>,
    pub(crate) trees: BTreeMap<String, FlavorTree>,
    pods: HashMap<ObjectKey, PodRecord>,
    non_tas_by_node: HashMap<String, ResVec>,
    tas_by_hostname: HashMap<String, ResVec>,
    tas_by_domain: HashMap<(String, Vec<String>), ResVec>,
    /// Found by the Workload each usage names, so its key is not kept twice.
    admitted: NameTable<AdmittedTasUsage>,
}

impl TopologySnapshot {
    pub fn new() -> Self {
        Self::default()
    }

    /// The tree of TAS flavor `name`.
    pub fn tree(&self, flavor: &str) -> Option<&FlavorTree> {
        self.trees.get(flavor)
    }

    /// The node store (all nodes, with usage).
    pub fn nodes(&self) -> &NodeStore {
        &self.nodes
    }

    /// Resource names known to the snapshot.
    pub fn registry(&self) -> &ResourceRegistry {
        &self.registry
    }

    /// Adds or replaces a Topology; trees of flavors using it are rebuilt.
    pub fn upsert_topology(&mut self, topology: Topology) -> Result<(), SnapshotError> {
        let levels = &topology.levels;
        let distinct = levels
            .iter()
            .collect::<std::collections::BTreeSet<_>>()
            .len()
            == levels.len();
        let hostname_last = levels.iter().rev().skip(1).all(|l| l != HOSTNAME_LABEL);
        if levels.is_empty() || levels.len() > 16 || !distinct || !hostname_last {
            return Err(SnapshotError::InvalidLevels {
                topology: topology.name,
            });
        }
        let name = topology.name.clone();
        self.topologies.insert(name.clone(), topology);
        let users: Vec<TasFlavor> = self
            .flavors
            .values()
            .filter(|f| f.topology_name == name)
            .cloned()
            .collect();
        for flavor in users {
            self.upsert_flavor(flavor)?;
        }
        Ok(())
    }

    /// Removes a Topology and the trees of flavors using it (the flavors are kept).
    pub fn remove_topology(&mut self, name: &str) {
        self.topologies.remove(name);
        self.trees.retain(|_, t| t.topology.name != name);
    }

    /// Adds or replaces a TAS flavor and builds its tree: O(nodes).
    pub fn upsert_flavor(&mut self, flavor: TasFlavor) -> Result<(), SnapshotError> {
        let topology = self
            .topologies
            .get(&flavor.topology_name)
            .cloned()
            .ok_or_else(|| SnapshotError::UnknownTopology {
                flavor: flavor.name.clone(),
                topology: flavor.topology_name.clone(),
            })?;
        self.flavors.insert(flavor.name.clone(), flavor.clone());
        let mut tree = FlavorTree::new(flavor.clone(), topology.clone());
        for (id, node) in self.nodes.iter() {
            self.place_in_tree(&mut tree, id, node);
        }
        self.trees.insert(flavor.name, tree);
        Ok(())
    }

    /// Removes a TAS flavor and its tree.
    pub fn remove_flavor(&mut self, name: &str) {
        self.flavors.remove(name);
        self.trees.remove(name);
    }

    fn place_in_tree(&self, tree: &mut FlavorTree, id: NodeId, node: &Node) {
        match tree.membership(node) {
            Membership::Foreign => {}
            Membership::Excluded(reason) => {
                tree.excluded.insert(id, reason);
            }
            Membership::Member(path) => {
                let new_leaf = tree.insert_node(id, &path, &self.nodes.free_vec(id));
                if new_leaf && !tree.topology.hostname_leaves() {
                    let key = (tree.topology.name.clone(), path);
                    if let Some(usage) = self.tas_by_domain.get(&key) {
                        tree.add_domain_tas(&key.1, usage, 1);
                    }
                }
            }
        }
    }

    /// Adds or replaces a node (a node event): O(flavors × levels).
    pub fn upsert_node(&mut self, node: Node) {
        self.remove_node(&node.name);
        let allocatable = self.registry.dense(&node.allocatable);
        self.nodes.ensure_columns(&self.registry);
        let non_tas = self
            .non_tas_by_node
            .get(&node.name)
            .cloned()
            .unwrap_or_default();
        let tas = node
            .labels
            .get(HOSTNAME_LABEL)
            .and_then(|h| self.tas_by_hostname.get(h))
            .cloned()
            .unwrap_or_default();
        let id = self.nodes.insert(node, &allocatable, &non_tas, &tas);
        let mut trees = std::mem::take(&mut self.trees);
        if let Some(node) = self.nodes.get(id) {
            for tree in trees.values_mut() {
                self.place_in_tree(tree, id, node);
            }
        }
        self.trees = trees;
    }

    /// Removes a node (deleted from the cluster).
    pub fn remove_node(&mut self, name: &str) {
        let Some(id) = self.nodes.id(name) else {
            return;
        };
        let free = self.nodes.free_vec(id);
        for tree in self.trees.values_mut() {
            tree.remove_node(id, &free);
        }
        self.nodes.remove(name);
    }

    fn add_non_tas(&mut self, node_name: &str, usage: &ResVec, factor: i64) {
        let entry = self
            .non_tas_by_node
            .entry(node_name.to_string())
            .or_default();
        entry.add_scaled(usage, factor);
        if entry.is_zero() {
            self.non_tas_by_node.remove(node_name);
        }
        if let Some(id) = self.nodes.id(node_name) {
            self.nodes.add_non_tas(id, usage, factor);
            for tree in self.trees.values_mut() {
                tree.add_free_of_node(id, usage, -factor);
            }
        }
    }

    /// Adds or replaces a bound pod (a pod event). Only running, non-TAS pods use capacity here;
    /// TAS pods are counted through their Workload's assignment.
    pub fn upsert_pod(&mut self, pod: BoundPod) {
        let key = ObjectKey::new(pod.namespace, pod.name);
        self.remove_pod(&key);
        let usage = (!pod.tas && !pod.phase.is_terminal()).then(|| {
            let mut usage = self.registry.dense(&pod.requests);
            usage.add(0, crate::engine::quantity::Quantity::from_units(1));
            usage
        });
        self.nodes.ensure_columns(&self.registry);
        if let Some(usage) = &usage {
            self.add_non_tas(&pod.node_name, usage, 1);
        }
        self.pods.insert(
            key,
            PodRecord {
                node: pod.node_name,
                usage,
            },
        );
    }

    /// Removes a bound pod (deleted).
    pub fn remove_pod(&mut self, key: &ObjectKey) {
        let Some(old) = self.pods.remove(key) else {
            return;
        };
        if let Some(usage) = &old.usage {
            self.add_non_tas(&old.node, usage, -1);
        }
    }

    /// Records the TAS usage of an admitted Workload (replacing an earlier record of it).
    pub fn admit(&mut self, usage: AdmittedTasUsage) -> Result<(), SnapshotError> {
        self.validate_usage(&usage)?;
        self.release(&usage.workload);
        self.apply_usage(&usage, 1);
        self.admitted.insert(&(), usage);
        Ok(())
    }

    /// Drops the TAS usage of a Workload that finished or was evicted.
    pub fn release(&mut self, workload: &ObjectKey) {
        if let Some(old) = self
            .admitted
            .remove(&(), &workload.namespace, &workload.name)
        {
            self.apply_usage(&old, -1);
        }
    }

    fn validate_usage(&self, usage: &AdmittedTasUsage) -> Result<(), SnapshotError> {
        for (index, ps) in usage.pod_sets.iter().enumerate() {
            let topology = self
                .flavors
                .get(&ps.flavor)
                .and_then(|f| self.topologies.get(&f.topology_name))
                .ok_or_else(|| SnapshotError::UnknownFlavor {
                    workload: usage.workload.to_string(),
                    index,
                    flavor: ps.flavor.clone(),
                })?;
            let expected = topology.assignment_levels();
            if ps.assignment.levels != expected {
                return Err(SnapshotError::AssignmentLevels {
                    workload: usage.workload.to_string(),
                    index,
                    expected,
                    got: ps.assignment.levels.clone(),
                });
            }
            if let Some((domain, d)) = ps
                .assignment
                .domains
                .iter()
                .enumerate()
                .find(|(_, d)| d.values.len() != expected.len())
            {
                return Err(SnapshotError::DomainValues {
                    workload: usage.workload.to_string(),
                    index,
                    domain,
                    expected: expected.len(),
                    got: d.values.len(),
                });
            }
        }
        Ok(())
    }

    fn apply_usage(&mut self, usage: &AdmittedTasUsage, factor: i64) {
        for ps in &usage.pod_sets {
            let Some(topology) = self
                .flavors
                .get(&ps.flavor)
                .and_then(|f| self.topologies.get(&f.topology_name))
                .cloned()
            else {
                continue;
            };
            let mut per_pod = self.registry.dense(&ps.per_pod);
            per_pod.add(0, crate::engine::quantity::Quantity::from_units(1));
            self.nodes.ensure_columns(&self.registry);
            for domain in &ps.assignment.domains {
                let mut amount = ResVec::default();
                amount.add_scaled(&per_pod, i64::from(domain.count));
                if topology.hostname_leaves() {
                    let Some(host) = domain.values.last() else {
                        continue;
                    };
                    self.add_hostname_tas(host, &amount, factor);
                } else {
                    let key = (topology.name.clone(), domain.values.clone());
                    let entry = self.tas_by_domain.entry(key.clone()).or_default();
                    entry.add_scaled(&amount, factor);
                    if entry.is_zero() {
                        self.tas_by_domain.remove(&key);
                    }
                    for tree in self
                        .trees
                        .values_mut()
                        .filter(|t| t.topology.name == topology.name)
                    {
                        tree.add_domain_tas(&key.1, &amount, factor);
                    }
                }
            }
        }
    }

    fn add_hostname_tas(&mut self, host: &str, amount: &ResVec, factor: i64) {
        let entry = self.tas_by_hostname.entry(host.to_string()).or_default();
        entry.add_scaled(amount, factor);
        if entry.is_zero() {
            self.tas_by_hostname.remove(host);
        }
        for id in self.nodes.with_hostname(host).to_vec() {
            self.nodes.add_tas(id, amount, factor);
            for tree in self.trees.values_mut() {
                tree.add_free_of_node(id, amount, -factor);
            }
        }
    }

    /// Admitted TAS usage of `workload`, as recorded.
    pub fn admitted(&self, workload: &ObjectKey) -> Option<&AdmittedTasUsage> {
        self.admitted.get(&(), &workload.namespace, &workload.name)
    }
}
