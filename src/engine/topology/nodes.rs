//! Every node of the cluster, once, with its capacity and usage in per-resource columns. Flavor
//! trees refer to nodes by [`NodeId`], so flavors that share nodes share their usage.

use std::collections::HashMap;

use super::model::{HOSTNAME_LABEL, Node};
use super::resources::{ResVec, ResourceId, ResourceRegistry};

/// Dense index of a node slot; slots are reused after removal.
pub type NodeId = u32;

/// The nodes and their usage, column-major so a placement scans memory linearly.
#[derive(Clone, Debug, Default)]
pub struct NodeStore {
    slots: Vec<Option<Node>>,
    vacant: Vec<NodeId>,
    by_name: HashMap<String, NodeId>,
    by_hostname: HashMap<String, Vec<NodeId>>,
    /// `[resource][node]` allocatable, in nanos.
    pub(crate) alloc: Vec<Vec<i128>>,
    /// `[resource][node]` requests of bound, running, non-TAS pods (plus one `pods` each).
    pub(crate) non_tas: Vec<Vec<i128>>,
    /// `[resource][node]` admitted TAS usage attributed to this node by hostname.
    pub(crate) tas: Vec<Vec<i128>>,
    /// Whether the node has taints (most do not, and then need no toleration check).
    pub(crate) tainted: Vec<bool>,
}

impl NodeStore {
    /// The id of node `name`.
    pub fn id(&self, name: &str) -> Option<NodeId> {
        self.by_name.get(name).copied()
    }

    /// The node in slot `id`.
    pub fn get(&self, id: NodeId) -> Option<&Node> {
        self.slots.get(id as usize).and_then(Option::as_ref)
    }

    /// Live nodes.
    pub fn iter(&self) -> impl Iterator<Item = (NodeId, &Node)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, n)| n.as_ref().map(|n| (i as NodeId, n)))
    }

    /// Number of slots, live or vacant.
    pub fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// Nodes whose hostname label is `hostname`.
    pub fn with_hostname(&self, hostname: &str) -> &[NodeId] {
        self.by_hostname.get(hostname).map_or(&[], Vec::as_slice)
    }

    /// Makes sure every resource of the registry has a column.
    pub fn ensure_columns(&mut self, registry: &ResourceRegistry) {
        let slots = self.slots.len();
        for columns in [&mut self.alloc, &mut self.non_tas, &mut self.tas] {
            while columns.len() < registry.len() {
                columns.push(vec![0; slots]);
            }
        }
    }

    /// Stores `node` with `allocatable` (dense), returning its slot. The caller removes any old
    /// version first.
    pub fn insert(
        &mut self,
        node: Node,
        allocatable: &ResVec,
        non_tas: &ResVec,
        tas: &ResVec,
    ) -> NodeId {
        let id = match self.vacant.pop() {
            Some(id) => id,
            None => {
                self.slots.push(None);
                for columns in [&mut self.alloc, &mut self.non_tas, &mut self.tas] {
                    for column in columns.iter_mut() {
                        column.push(0);
                    }
                }
                self.tainted.push(false);
                (self.slots.len() - 1) as NodeId
            }
        };
        let slot = id as usize;
        self.tainted[slot] = !node.taints.is_empty();
        for (columns, values) in [
            (&mut self.alloc, allocatable),
            (&mut self.non_tas, non_tas),
            (&mut self.tas, tas),
        ] {
            for (r, column) in columns.iter_mut().enumerate() {
                column[slot] = values.get(r).nanos();
            }
        }
        self.by_name.insert(node.name.clone(), id);
        if let Some(host) = node.labels.get(HOSTNAME_LABEL) {
            self.by_hostname.entry(host.clone()).or_default().push(id);
        }
        self.slots[slot] = Some(node);
        id
    }

    /// Removes node `name`, returning its id and object.
    pub fn remove(&mut self, name: &str) -> Option<(NodeId, Node)> {
        let id = self.by_name.remove(name)?;
        let node = self.slots.get_mut(id as usize)?.take()?;
        if let Some(host) = node.labels.get(HOSTNAME_LABEL)
            && let Some(ids) = self.by_hostname.get_mut(host)
        {
            ids.retain(|n| *n != id);
            if ids.is_empty() {
                self.by_hostname.remove(host);
            }
        }
        self.vacant.push(id);
        Some((id, node))
    }

    /// Columns of resource `r`: (allocatable, non-TAS usage, TAS usage), one entry per slot.
    pub fn columns(&self, r: ResourceId) -> Option<(&[i128], &[i128], &[i128])> {
        Some((self.alloc.get(r)?, self.non_tas.get(r)?, self.tas.get(r)?))
    }

    /// Free capacity of a node: allocatable minus non-TAS usage, and minus TAS usage unless
    /// `with_tas` is false (the empty-cluster view).
    pub fn free(&self, id: NodeId, r: ResourceId, with_tas: bool) -> i128 {
        let n = id as usize;
        let get =
            |columns: &Vec<Vec<i128>>| columns.get(r).and_then(|c| c.get(n)).copied().unwrap_or(0);
        let tas = if with_tas { get(&self.tas) } else { 0 };
        get(&self.alloc)
            .saturating_sub(get(&self.non_tas))
            .saturating_sub(tas)
    }

    /// Free capacity of a node as a vector (with TAS usage).
    pub fn free_vec(&self, id: NodeId) -> ResVec {
        let mut out = ResVec::default();
        for r in 0..self.alloc.len() {
            out.add(
                r,
                crate::engine::quantity::Quantity::from_nanos(self.free(id, r, true)),
            );
        }
        out
    }

    /// Adds `delta` to the non-TAS usage of node `id`.
    pub fn add_non_tas(&mut self, id: NodeId, delta: &ResVec, factor: i64) {
        add_columns(&mut self.non_tas, id, delta, factor);
    }

    /// Adds `delta` to the TAS usage of node `id`.
    pub fn add_tas(&mut self, id: NodeId, delta: &ResVec, factor: i64) {
        add_columns(&mut self.tas, id, delta, factor);
    }
}

fn add_columns(columns: &mut [Vec<i128>], id: NodeId, delta: &ResVec, factor: i64) {
    for (r, amount) in delta.iter() {
        if let Some(cell) = columns.get_mut(r).and_then(|c| c.get_mut(id as usize)) {
            *cell = cell.saturating_add(amount.nanos().saturating_mul(i128::from(factor)));
        }
    }
}
