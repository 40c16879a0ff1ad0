//! The quota tree of Kueue's cohorts: ClusterQueues are leaves, Cohorts inner nodes, and every node
//! keeps, per flavor-resource pair, its subtree quota, the local quota its parent never sees, and its
//! usage.
//!
//! Usage is maintained incrementally: adding usage at a ClusterQueue bubbles up only the part beyond
//! each node's remaining local quota, so `Available` and `PotentialAvailable` are walks up the
//! ancestors, O(depth).

use super::quantity::Quantity;
use super::resources::{FlavorResource, PerFlavorResource};

/// Index of a node in the tree. ClusterQueue `i` is node `i`; Cohorts follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

impl NodeId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Quota a node declares for itself.
#[derive(Clone, Debug, Default)]
pub struct NodeQuota {
    pub nominal: PerFlavorResource,
    pub borrowing_limit: Vec<Option<Quantity>>,
    pub lending_limit: Vec<Option<Quantity>>,
}

impl NodeQuota {
    pub fn empty(pairs: usize) -> Self {
        NodeQuota {
            nominal: PerFlavorResource::zeros(pairs),
            borrowing_limit: vec![None; pairs],
            lending_limit: vec![None; pairs],
        }
    }
}

#[derive(Clone, Debug)]
struct Node {
    parent: Option<NodeId>,
    children: Vec<NodeId>,
    height: u32,
    quota: NodeQuota,
    subtree_quota: PerFlavorResource,
    local_quota: PerFlavorResource,
    usage: PerFlavorResource,
}

/// The forest of cohort trees with quota and usage at every node.
#[derive(Clone, Debug)]
pub struct QuotaTree {
    nodes: Vec<Node>,
    pairs: usize,
}

impl QuotaTree {
    /// A forest of unconnected nodes with the given quotas; connect with [`QuotaTree::set_parent`],
    /// then call [`QuotaTree::finish`].
    pub fn new(quotas: Vec<NodeQuota>, pairs: usize) -> Self {
        let nodes = quotas
            .into_iter()
            .map(|quota| Node {
                parent: None,
                children: Vec::new(),
                height: 0,
                quota,
                subtree_quota: PerFlavorResource::zeros(pairs),
                local_quota: PerFlavorResource::zeros(pairs),
                usage: PerFlavorResource::zeros(pairs),
            })
            .collect();
        QuotaTree { nodes, pairs }
    }

    /// Links `child` under `parent`. The caller guarantees the result is acyclic.
    pub fn set_parent(&mut self, child: NodeId, parent: NodeId) {
        self.nodes[child.index()].parent = Some(parent);
        self.nodes[parent.index()].children.push(child);
    }

    /// Computes subtree quotas, local quotas and heights, bottom-up. Usage must still be zero.
    pub fn finish(&mut self) {
        let order = self.post_order();
        for id in order {
            let mut subtree = self.nodes[id.index()].quota.nominal.clone();
            let mut height = 0;
            for child in self.nodes[id.index()].children.clone() {
                let c = &self.nodes[child.index()];
                height = height.max(c.height + 1);
                for i in 0..self.pairs {
                    let fr = FlavorResource(i as u32);
                    subtree.add(fr, c.subtree_quota.get(fr) - c.local_quota.get(fr));
                }
            }
            let node = &mut self.nodes[id.index()];
            let mut local = PerFlavorResource::zeros(self.pairs);
            for i in 0..self.pairs {
                let fr = FlavorResource(i as u32);
                if let (Some(lending), true) = (node.quota.lending_limit[i], node.parent.is_some())
                {
                    local.set(fr, (subtree.get(fr) - lending).clamp_non_negative());
                }
            }
            node.subtree_quota = subtree;
            node.local_quota = local;
            node.height = height;
        }
    }

    fn post_order(&self) -> Vec<NodeId> {
        let mut order = Vec::with_capacity(self.nodes.len());
        let roots = (0..self.nodes.len()).filter(|i| self.nodes[*i].parent.is_none());
        for root in roots {
            let mut stack = vec![(NodeId(root as u32), false)];
            while let Some((id, expanded)) = stack.pop() {
                if expanded {
                    order.push(id);
                    continue;
                }
                stack.push((id, true));
                for child in &self.nodes[id.index()].children {
                    stack.push((*child, false));
                }
            }
        }
        order
    }

    pub fn parent(&self, id: NodeId) -> Option<NodeId> {
        self.nodes[id.index()].parent
    }

    pub fn children(&self, id: NodeId) -> &[NodeId] {
        &self.nodes[id.index()].children
    }

    fn height(&self, id: NodeId) -> u32 {
        self.nodes[id.index()].height
    }

    pub fn root(&self, mut id: NodeId) -> NodeId {
        while let Some(parent) = self.parent(id) {
            id = parent;
        }
        id
    }

    /// Whether `node` is `id` or one of its ancestors: [`Self::path`] without building it, for the
    /// checks preemption makes once per candidate victim.
    pub fn on_path(&self, id: NodeId, node: NodeId) -> bool {
        let mut at = Some(id);
        while let Some(current) = at {
            if current == node {
                return true;
            }
            at = self.parent(current);
        }
        false
    }

    /// `id` followed by its ancestors, lowest first.
    pub fn path(&self, id: NodeId) -> Vec<NodeId> {
        let mut path = vec![id];
        let mut at = id;
        while let Some(parent) = self.parent(at) {
            path.push(parent);
            at = parent;
        }
        path
    }

    pub fn nominal(&self, id: NodeId, fr: FlavorResource) -> Quantity {
        self.nodes[id.index()].quota.nominal.get(fr)
    }

    pub fn borrowing_limit(&self, id: NodeId, fr: FlavorResource) -> Option<Quantity> {
        self.nodes[id.index()].quota.borrowing_limit[fr.index()]
    }

    pub fn subtree_quota(&self, id: NodeId, fr: FlavorResource) -> Quantity {
        self.nodes[id.index()].subtree_quota.get(fr)
    }

    pub fn local_quota(&self, id: NodeId, fr: FlavorResource) -> Quantity {
        self.nodes[id.index()].local_quota.get(fr)
    }

    pub fn usage(&self, id: NodeId, fr: FlavorResource) -> Quantity {
        self.nodes[id.index()].usage.get(fr)
    }

    /// Adds (or, with a negative amount, removes) usage at `id` and bubbles the part beyond each
    /// node's local quota up to its parent.
    pub fn add_usage(&mut self, id: NodeId, fr: FlavorResource, amount: Quantity) {
        let mut at = id;
        let mut delta = amount;
        loop {
            let node = &mut self.nodes[at.index()];
            let old = node.usage.get(fr);
            let new = old + delta;
            node.usage.set(fr, new);
            let Some(parent) = node.parent else { return };
            let local = node.local_quota.get(fr);
            let bubbled = (new - local).clamp_non_negative() - (old - local).clamp_non_negative();
            if bubbled.is_zero() {
                return;
            }
            at = parent;
            delta = bubbled;
        }
    }

    /// `max(0, localQuota − Usage)`.
    fn local_available(&self, id: NodeId, fr: FlavorResource) -> Quantity {
        (self.local_quota(id, fr) - self.usage(id, fr)).clamp_non_negative()
    }

    /// Kueue's `Available`, unclamped: may be negative when a node is over-committed.
    pub fn available(&self, id: NodeId, fr: FlavorResource) -> Quantity {
        let node = &self.nodes[id.index()];
        let Some(parent) = node.parent else {
            return node.subtree_quota.get(fr) - node.usage.get(fr);
        };
        let usage = node.usage.get(fr);
        let local = node.local_quota.get(fr);
        let from_parent = self.available(parent, fr);
        let from_parent = match node.quota.borrowing_limit[fr.index()] {
            Some(limit) => {
                let cap = (node.subtree_quota.get(fr) - local)
                    - (usage - local).clamp_non_negative()
                    + limit;
                from_parent.min(cap)
            }
            None => from_parent,
        };
        self.local_available(id, fr) + from_parent
    }

    /// What a ClusterQueue can take right now: `Available` clamped at zero.
    pub fn available_for_queue(&self, id: NodeId, fr: FlavorResource) -> Quantity {
        self.available(id, fr).clamp_non_negative()
    }

    /// Kueue's `PotentialAvailable`: the most `id` could use with zero usage everywhere.
    pub fn potential_available(&self, id: NodeId, fr: FlavorResource) -> Quantity {
        let node = &self.nodes[id.index()];
        let Some(parent) = node.parent else {
            return node.subtree_quota.get(fr);
        };
        let potential = node.local_quota.get(fr) + self.potential_available(parent, fr);
        match node.quota.borrowing_limit[fr.index()] {
            Some(limit) => potential.min(node.subtree_quota.get(fr) + limit),
            None => potential,
        }
    }

    /// Whether `amount` more at `id` would take it beyond its own subtree quota.
    fn borrowing_with(&self, id: NodeId, fr: FlavorResource, amount: Quantity) -> bool {
        self.usage(id, fr) + amount > self.subtree_quota(id, fr)
    }

    /// Height of the lowest subtree containing `id` within whose quota `amount` more fits (0 when it
    /// fits inside the ClusterQueue's own nominal quota).
    pub fn borrowing_level(&self, id: NodeId, fr: FlavorResource, amount: Quantity) -> u32 {
        let mut at = id;
        let mut remaining = amount;
        loop {
            if !self.borrowing_with(at, fr, remaining) {
                return self.height(at);
            }
            let Some(parent) = self.parent(at) else {
                return self.height(at);
            };
            let usage = self.usage(at, fr);
            let local = self.local_quota(at, fr);
            remaining = (usage + remaining - local).clamp_non_negative()
                - (usage - local).clamp_non_negative();
            at = parent;
        }
    }
}

#[cfg(test)]
mod tests;
