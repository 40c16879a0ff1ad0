//! The domain tree of one TAS flavor (C.7.1): which nodes belong, which were left out and why, and
//! free capacity aggregated per domain. Children are kept sorted by value, so walking the tree
//! depth-first visits domains in lexicographic order of their level-value paths; that order is the
//! deterministic tie-break of every placement and the rank order of assignments.
//!
//! Updates touch one root-to-leaf path: O(levels × resources), independent of cluster size (plus
//! a binary search among siblings when a domain is created or removed).

use std::collections::{BTreeMap, HashMap};

use super::model::{Node, TasFlavor, Topology};
use super::nodes::NodeId;
use super::resources::ResVec;
use crate::engine::node_match::selector_map_matches;

/// "No such slot".
pub const NONE: u32 = u32::MAX;

/// Why a node that carries the flavor's `nodeLabels` is not in the flavor's tree.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NodeExclusion {
    NotReady,
    Unschedulable,
    MissingLevelLabel(String),
}

impl std::fmt::Display for NodeExclusion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NodeExclusion::NotReady => f.write_str("not ready"),
            NodeExclusion::Unschedulable => f.write_str("unschedulable"),
            NodeExclusion::MissingLevelLabel(key) => write!(f, "missing label {key:?}"),
        }
    }
}

/// One domain at one level.
#[derive(Clone, Debug, Default)]
pub struct Domain {
    pub value: String,
    /// Slot of the parent at the level above; [`NONE`] at level 0.
    pub parent: u32,
    /// Slots at the level below, sorted by value.
    pub children: Vec<u32>,
    /// Nodes of a lowest-level domain.
    pub nodes: Vec<NodeId>,
    /// Allocatable minus every usage, summed over the domain's nodes.
    pub free: ResVec,
    /// Admitted TAS usage recorded against this (lowest-level, non-hostname) domain.
    pub tas: ResVec,
}

/// The tree of one TAS flavor.
#[derive(Clone, Debug)]
pub struct FlavorTree {
    pub flavor: TasFlavor,
    pub topology: Topology,
    /// Per level, a slot arena of domains.
    pub arena: Vec<Vec<Option<Domain>>>,
    vacant: Vec<Vec<u32>>,
    /// Level-0 slots, sorted by value.
    pub roots: Vec<u32>,
    /// Node id → lowest-level slot, [`NONE`] when the node is not in the tree.
    node_leaf: Vec<u32>,
    /// Member nodes with their lowest-level slot, unordered: the flat array placement scans.
    pub members: Vec<(NodeId, u32)>,
    /// Node id → index in `members`, [`NONE`] when absent.
    member_pos: Vec<u32>,
    /// Nodes carrying the flavor's labels but left out, with the reason.
    pub excluded: HashMap<NodeId, NodeExclusion>,
}

/// Where a node goes in a tree.
pub enum Membership {
    /// Not labelled for this flavor.
    Foreign,
    Excluded(NodeExclusion),
    /// Level values, coarsest first.
    Member(Vec<String>),
}

impl FlavorTree {
    pub fn new(flavor: TasFlavor, topology: Topology) -> Self {
        let levels = topology.levels.len();
        FlavorTree {
            flavor,
            topology,
            arena: vec![Vec::new(); levels],
            vacant: vec![Vec::new(); levels],
            roots: Vec::new(),
            node_leaf: Vec::new(),
            members: Vec::new(),
            member_pos: Vec::new(),
            excluded: HashMap::new(),
        }
    }

    /// Number of levels.
    pub fn depth(&self) -> usize {
        self.arena.len()
    }

    /// Whether, and where, `node` belongs (C.7.1 step 1, B.9).
    pub fn membership(&self, node: &Node) -> Membership {
        if !selector_map_matches(&self.flavor.node_labels, &node.labels) {
            return Membership::Foreign;
        }
        if !node.ready {
            return Membership::Excluded(NodeExclusion::NotReady);
        }
        if node.unschedulable {
            return Membership::Excluded(NodeExclusion::Unschedulable);
        }
        let mut path = Vec::with_capacity(self.depth());
        for key in &self.topology.levels {
            match node.labels.get(key) {
                Some(value) => path.push(value.clone()),
                None => return Membership::Excluded(NodeExclusion::MissingLevelLabel(key.clone())),
            }
        }
        Membership::Member(path)
    }

    /// The domain at `level` in `slot`.
    pub fn domain(&self, level: usize, slot: u32) -> Option<&Domain> {
        self.arena.get(level)?.get(slot as usize)?.as_ref()
    }

    fn domain_mut(&mut self, level: usize, slot: u32) -> Option<&mut Domain> {
        self.arena.get_mut(level)?.get_mut(slot as usize)?.as_mut()
    }

    /// Slots of the children of (`level`, `slot`), or the roots for `level == None`.
    pub fn children(&self, level: Option<usize>, slot: u32) -> &[u32] {
        match level {
            None => &self.roots,
            Some(l) => self.domain(l, slot).map_or(&[], |d| d.children.as_slice()),
        }
    }

    /// The lowest-level slot holding `node`.
    pub fn leaf_of(&self, node: NodeId) -> Option<u32> {
        self.node_leaf
            .get(node as usize)
            .copied()
            .filter(|s| *s != NONE)
    }

    /// The slot of the child with `value` among `siblings`, or where it would be inserted.
    fn find(&self, level: usize, siblings: &[u32], value: &str) -> Result<usize, usize> {
        siblings.binary_search_by(|s| {
            self.domain(level, *s)
                .map_or("", |d| d.value.as_str())
                .cmp(value)
        })
    }

    /// Slots from level 0 down to the leaf for `path`, if the whole path exists.
    pub fn lookup(&self, path: &[String]) -> Option<Vec<u32>> {
        if path.len() != self.depth() {
            return None;
        }
        self.slots_along(path)
    }

    /// Slots from level 0 down for `path` (a path from the roots, possibly not down to the leaf),
    /// if every domain along it exists.
    pub fn slots_along(&self, path: &[String]) -> Option<Vec<u32>> {
        let mut slots = Vec::with_capacity(path.len());
        let mut siblings = self.roots.as_slice();
        for (level, value) in path.iter().enumerate() {
            let at = self.find(level, siblings, value).ok()?;
            let slot = siblings[at];
            slots.push(slot);
            siblings = self.children(Some(level), slot);
        }
        Some(slots)
    }

    /// The level values from level 0 to (`level`, `slot`).
    pub fn path(&self, level: usize, slot: u32) -> Vec<String> {
        let mut values = Vec::with_capacity(level + 1);
        let (mut l, mut s) = (level, slot);
        while let Some(d) = self.domain(l, s) {
            values.push(d.value.clone());
            if l == 0 {
                break;
            }
            (l, s) = (l - 1, d.parent);
        }
        values.reverse();
        values
    }

    /// Adds `node` at `path` with free capacity `free`; true when its lowest-level domain is new.
    pub fn insert_node(&mut self, node: NodeId, path: &[String], free: &ResVec) -> bool {
        let mut parent = NONE;
        let mut slots = Vec::with_capacity(path.len());
        for (level, value) in path.iter().enumerate() {
            let found = {
                let siblings = if level == 0 {
                    &self.roots
                } else {
                    self.children(Some(level - 1), parent)
                };
                self.find(level, siblings, value).map(|at| siblings[at])
            };
            let slot = match found {
                Ok(slot) => slot,
                Err(at) => self.create(level, parent, value, at),
            };
            slots.push(slot);
            parent = slot;
        }
        if self.node_leaf.len() <= node as usize {
            self.node_leaf.resize(node as usize + 1, NONE);
        }
        self.node_leaf[node as usize] = parent;
        if self.member_pos.len() <= node as usize {
            self.member_pos.resize(node as usize + 1, NONE);
        }
        self.member_pos[node as usize] = self.members.len() as u32;
        self.members.push((node, parent));
        let leaf_level = self.depth() - 1;
        let mut new_leaf = false;
        if let Some(leaf) = self.domain_mut(leaf_level, parent) {
            new_leaf = leaf.nodes.is_empty();
            leaf.nodes.push(node);
        }
        self.add_along(&slots, free, 1);
        new_leaf
    }

    fn create(&mut self, level: usize, parent: u32, value: &str, at: usize) -> u32 {
        let domain = Domain {
            value: value.to_string(),
            parent,
            ..Domain::default()
        };
        let slot = match self.vacant[level].pop() {
            Some(slot) => {
                self.arena[level][slot as usize] = Some(domain);
                slot
            }
            None => {
                self.arena[level].push(Some(domain));
                (self.arena[level].len() - 1) as u32
            }
        };
        if level == 0 {
            self.roots.insert(at, slot);
        } else if let Some(p) = self.domain_mut(level - 1, parent) {
            p.children.insert(at, slot);
        }
        slot
    }

    /// Slots from level 0 to the leaf holding `node`.
    pub fn slots_of(&self, node: NodeId) -> Option<Vec<u32>> {
        let leaf = self.leaf_of(node)?;
        let mut slots = vec![leaf];
        let mut level = self.depth() - 1;
        while level > 0 {
            let parent = self.domain(level, *slots.last()?)?.parent;
            slots.push(parent);
            level -= 1;
        }
        slots.reverse();
        Some(slots)
    }

    /// Adds `delta × factor` to the free capacity of every domain on `slots` (root to leaf).
    pub fn add_along(&mut self, slots: &[u32], delta: &ResVec, factor: i64) {
        for (level, slot) in slots.iter().enumerate() {
            if let Some(d) = self.domain_mut(level, *slot) {
                d.free.add_scaled(delta, factor);
            }
        }
    }

    /// Changes the free capacity along the path of `node` by `delta × factor`.
    pub fn add_free_of_node(&mut self, node: NodeId, delta: &ResVec, factor: i64) {
        if let Some(slots) = self.slots_of(node) {
            self.add_along(&slots, delta, factor);
        }
    }

    /// Records `usage × factor` of admitted TAS pods on the lowest-level domain at `path`.
    pub fn add_domain_tas(&mut self, path: &[String], usage: &ResVec, factor: i64) {
        let Some(slots) = self.lookup(path) else {
            return;
        };
        if let Some(leaf) = slots
            .last()
            .and_then(|s| self.domain_mut(path.len() - 1, *s))
        {
            leaf.tas.add_scaled(usage, factor);
        }
        self.add_along(&slots, usage, -factor);
    }

    /// Removes `node` (whose free capacity was `free`), dropping domains left empty.
    pub fn remove_node(&mut self, node: NodeId, free: &ResVec) {
        self.excluded.remove(&node);
        let Some(slots) = self.slots_of(node) else {
            return;
        };
        self.add_along(&slots, free, -1);
        self.node_leaf[node as usize] = NONE;
        let pos = self.member_pos[node as usize] as usize;
        self.member_pos[node as usize] = NONE;
        self.members.swap_remove(pos);
        if let Some(&(moved, _)) = self.members.get(pos) {
            self.member_pos[moved as usize] = pos as u32;
        }
        let leaf_level = self.depth() - 1;
        let mut released = None;
        if let Some(leaf) = self.domain_mut(leaf_level, slots[leaf_level]) {
            leaf.nodes.retain(|n| *n != node);
            if leaf.nodes.is_empty() {
                released = Some(std::mem::take(&mut leaf.tas));
            }
        }
        // A vanished domain takes its recorded TAS usage with it; ancestors stop subtracting it.
        if let Some(tas) = released {
            self.add_along(&slots, &tas, 1);
        }
        for level in (0..self.depth()).rev() {
            let slot = slots[level];
            let empty = self
                .domain(level, slot)
                .is_some_and(|d| d.nodes.is_empty() && d.children.is_empty());
            if !empty {
                break;
            }
            let value = self
                .domain(level, slot)
                .map(|d| d.value.clone())
                .unwrap_or_default();
            let at = {
                let siblings = if level == 0 {
                    &self.roots
                } else {
                    self.children(Some(level - 1), slots[level - 1])
                };
                self.find(level, siblings, &value).ok()
            };
            if let Some(at) = at {
                if level == 0 {
                    self.roots.remove(at);
                } else if let Some(p) = self.domain_mut(level - 1, slots[level - 1]) {
                    p.children.remove(at);
                }
            }
            self.arena[level][slot as usize] = None;
            self.vacant[level].push(slot);
        }
    }

    /// Counts of excluded nodes by reason.
    pub fn exclusion_counts(&self) -> BTreeMap<String, u64> {
        let mut counts = BTreeMap::new();
        for reason in self.excluded.values() {
            *counts.entry(reason.to_string()).or_insert(0) += 1;
        }
        counts
    }

    /// Slots at `level` in depth-first (lexicographic path) order.
    pub fn level_order(&self, level: usize) -> Vec<u32> {
        let mut current = self.roots.clone();
        for l in 0..level {
            current = current
                .iter()
                .flat_map(|s| self.children(Some(l), *s).iter().copied())
                .collect();
        }
        current
    }

    /// Number of domains at each level.
    pub fn domain_counts(&self) -> Vec<usize> {
        self.arena
            .iter()
            .map(|a| a.iter().filter(|d| d.is_some()).count())
            .collect()
    }
}
