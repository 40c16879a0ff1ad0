//! How many pods of one request fit in every domain of a flavor tree (C.7.1 steps 3-5), computed on
//! demand from the per-node columns: one linear pass over the nodes, then a roll-up per level.
//!
//! Unlike Kueue, a lowest-level domain that aggregates several nodes (topologies without a hostname
//! level) counts the pods that fit *per node*, so capacity split across nodes is never promised as
//! if it were one machine; every node is also checked for taints, nodeSelector and affinity.
//!
//! Amounts are summed and subtracted with saturating arithmetic: a Node or pod may carry any
//! quantity the parser accepts, and capacity must never wrap around.

use std::collections::{BTreeMap, HashMap, HashSet};

use k8s_openapi::api::core::v1::{NodeSelector, Toleration};

use super::nodes::{NodeId, NodeStore};
use super::request::ResolvedRequest;
use super::resources::{PodShape, ResVec, ResourceId, ResourceRegistry, fit_count};
use super::tree::FlavorTree;
use crate::engine::node_match::{
    Labels, node_selector_matches, selector_map_matches, untolerated_taint,
};

/// Which usage counts against capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CapacityView {
    /// Everything bound or admitted now.
    #[default]
    Current,
    /// As if no TAS workload were admitted (non-TAS pods stay): whether preemption could ever help.
    EmptyCluster,
}

/// Usage assumed by earlier pod sets of the workload being placed.
#[derive(Clone, Debug, Default)]
pub struct Assumed {
    pub by_node: HashMap<NodeId, ResVec>,
    /// (topology, lowest-level path) → usage, for topologies without a hostname level.
    pub by_leaf: HashMap<(String, Vec<String>), ResVec>,
}

impl Assumed {
    pub fn is_empty(&self) -> bool {
        self.by_node.is_empty() && self.by_leaf.is_empty()
    }
}

/// The node-level filters of one pod set.
pub struct PodFilter<'a> {
    pub shape: &'a PodShape,
    /// The pod's tolerations followed by the flavor's.
    pub tolerations: &'a [Toleration],
    pub node_selector: &'a Labels,
    pub required_affinity: Option<&'a NodeSelector>,
    /// Nodes that must not be used (failed nodes being replaced).
    pub skip: &'a HashSet<NodeId>,
}

/// Pods that fit, per domain, for one request.
#[derive(Clone, Debug, Default)]
pub struct Capacity {
    /// `[level][slot]` pods that fit.
    pub pods: Vec<Vec<u64>>,
    /// `[level][slot]` whole units (slices of `unit[level]` pods) that fit.
    pub units: Vec<Vec<u64>>,
    /// Units over the whole tree.
    pub root_units: u64,
    /// Nodes of the tree that cannot take a single pod, by reason.
    pub excluded: BTreeMap<String, u64>,
}

impl Capacity {
    pub fn units_at(&self, level: usize, slot: u32) -> u64 {
        self.units
            .get(level)
            .and_then(|v| v.get(slot as usize))
            .copied()
            .unwrap_or(0)
    }

    pub fn pods_at(&self, level: usize, slot: u32) -> u64 {
        self.pods
            .get(level)
            .and_then(|v| v.get(slot as usize))
            .copied()
            .unwrap_or(0)
    }
}

/// Why a node cannot take a pod of this request; `None` when it passes every filter.
fn filter_node(store: &NodeStore, id: NodeId, filter: &PodFilter<'_>) -> Option<String> {
    let node = store.get(id)?;
    if filter.skip.contains(&id) {
        return Some("failed node".to_string());
    }
    if !node.taints.is_empty()
        && let Some(taint) = untolerated_taint(&node.taints, filter.tolerations)
    {
        return Some(format!("taint {:?}", taint.key));
    }
    if !filter.node_selector.is_empty() && !selector_map_matches(filter.node_selector, &node.labels)
    {
        return Some("nodeSelector".to_string());
    }
    if let Some(affinity) = filter.required_affinity
        && !node_selector_matches(affinity, &node.labels, &node.name)
    {
        return Some("node affinity".to_string());
    }
    None
}

/// Computes [`Capacity`] of `tree` for one request.
pub fn compute(
    store: &NodeStore,
    registry: &ResourceRegistry,
    tree: &FlavorTree,
    filter: &PodFilter<'_>,
    resolved: &ResolvedRequest,
    view: CapacityView,
    assumed: &Assumed,
) -> Capacity {
    let depth = tree.depth();
    let mut cap = Capacity {
        pods: tree.arena.iter().map(|a| vec![0; a.len()]).collect(),
        units: tree.arena.iter().map(|a| vec![0; a.len()]).collect(),
        ..Capacity::default()
    };
    for (reason, count) in tree.exclusion_counts() {
        cap.excluded.insert(reason, count);
    }
    if depth == 0 {
        return cap;
    }
    let with_tas = view == CapacityView::Current;
    let leaf_level = depth - 1;
    let shape = filter.shape;
    let columns = columns_for(store, shape, with_tas);
    let unknown = shape
        .unknown
        .first()
        .cloned()
        .or_else(|| (columns.len() != shape.entries.len()).then(|| "unknown".to_string()));
    let leaf_pods = &mut cap.pods[leaf_level];
    for &(node, leaf) in &tree.members {
        let n = node as usize;
        if let Some(reason) = checked_filter(store, node, filter) {
            *cap.excluded.entry(reason).or_insert(0) += 1;
            continue;
        }
        if let Some(name) = &unknown {
            *cap.excluded
                .entry(format!("insufficient {name:?}"))
                .or_insert(0) += 1;
            continue;
        }
        let extra = if assumed.by_node.is_empty() {
            None
        } else {
            assumed.by_node.get(&node)
        };
        let (fit, short) = node_fit(&columns, n, extra, None);
        if let Some(r) = short {
            *cap.excluded
                .entry(format!("insufficient {:?}", registry.name(r)))
                .or_insert(0) += 1;
        }
        if let Some(sum) = leaf_pods.get_mut(leaf as usize) {
            *sum = sum.saturating_add(fit);
        }
    }
    if !tree.topology.hostname_leaves() && unknown.is_none() {
        cap_pooled_leaves(store, tree, filter, &columns, assumed, &mut cap);
    }
    roll_up(tree, resolved, &mut cap);
    cap
}

/// [`filter_node`], skipped for untainted nodes when the request has no selector, affinity or
/// skipped nodes (the common case).
fn checked_filter(store: &NodeStore, node: NodeId, filter: &PodFilter<'_>) -> Option<String> {
    let plain = filter.node_selector.is_empty()
        && filter.required_affinity.is_none()
        && filter.skip.is_empty();
    if plain && !store.tainted.get(node as usize).copied().unwrap_or(false) {
        return None;
    }
    filter_node(store, node, filter)
}

fn columns_for<'a>(store: &'a NodeStore, shape: &PodShape, with_tas: bool) -> Vec<Column<'a>> {
    shape
        .entries
        .iter()
        .filter_map(|&(r, per)| {
            store.columns(r).map(|(alloc, non_tas, tas)| Column {
                r,
                per,
                alloc,
                non_tas,
                tas: with_tas.then_some(tas),
            })
        })
        .collect()
}

/// Pods that fit on node `n` after `extra` and `minus` usage, and the first resource that allows
/// none.
#[inline]
fn node_fit(
    columns: &[Column<'_>],
    n: usize,
    extra: Option<&ResVec>,
    minus: Option<&ResVec>,
) -> (u64, Option<ResourceId>) {
    let mut fit = u64::MAX;
    let mut short = None;
    for column in columns {
        let mut free = column.free(n);
        for usage in [extra, minus].into_iter().flatten() {
            free = free.saturating_sub(usage.get(column.r).nanos());
        }
        let k = fit_count(free, column.per);
        if k < fit {
            fit = k;
            if k == 0 && short.is_none() {
                short = Some(column.r);
            }
        }
    }
    (fit, short)
}

/// For a pod-set group: per lowest-level slot, the fewest worker pods lost by putting the leader on
/// one of its nodes; `u64::MAX` where no node takes the leader.
pub fn leader_costs(
    store: &NodeStore,
    tree: &FlavorTree,
    workers: &PodFilter<'_>,
    leader: &PodFilter<'_>,
    view: CapacityView,
    assumed: &Assumed,
) -> Vec<u64> {
    let leaf_level = tree.depth().saturating_sub(1);
    let mut costs = vec![u64::MAX; tree.arena.get(leaf_level).map_or(0, Vec::len)];
    let with_tas = view == CapacityView::Current;
    let (worker_columns, leader_columns) = (
        columns_for(store, workers.shape, with_tas),
        columns_for(store, leader.shape, with_tas),
    );
    let complete = |f: &PodFilter<'_>, c: &[Column<'_>]| {
        f.shape.unknown.is_empty() && c.len() == f.shape.entries.len()
    };
    if !complete(leader, &leader_columns) {
        return costs;
    }
    let workers_fit = complete(workers, &worker_columns);
    let leader_usage = leader.shape.as_resvec();
    for &(node, leaf) in &tree.members {
        let n = node as usize;
        if checked_filter(store, node, leader).is_some() {
            continue;
        }
        let extra = if assumed.by_node.is_empty() {
            None
        } else {
            assumed.by_node.get(&node)
        };
        if node_fit(&leader_columns, n, extra, None).0 == 0 {
            continue;
        }
        let lost = if workers_fit && checked_filter(store, node, workers).is_none() {
            let before = node_fit(&worker_columns, n, extra, None).0;
            before
                - node_fit(&worker_columns, n, extra, Some(&leader_usage))
                    .0
                    .min(before)
        } else {
            0
        };
        if let Some(cost) = costs.get_mut(leaf as usize) {
            *cost = (*cost).min(lost);
        }
    }
    costs
}

/// One requested resource: its per-pod amount and the node columns it is read from.
struct Column<'a> {
    r: ResourceId,
    per: i128,
    alloc: &'a [i128],
    non_tas: &'a [i128],
    /// Absent in the empty-cluster view.
    tas: Option<&'a [i128]>,
}

impl Column<'_> {
    #[inline]
    fn free(&self, n: usize) -> i128 {
        let at = |c: &[i128]| c.get(n).copied().unwrap_or(0);
        at(self.alloc)
            .saturating_sub(at(self.non_tas))
            .saturating_sub(self.tas.map_or(0, at))
    }
}

/// Lowest-level domains that pool several nodes (no hostname level) may carry admitted or assumed
/// usage on the domain itself: they hold no more than their pooled free capacity allows.
fn cap_pooled_leaves(
    store: &NodeStore,
    tree: &FlavorTree,
    filter: &PodFilter<'_>,
    columns: &[Column<'_>],
    assumed: &Assumed,
    cap: &mut Capacity,
) {
    let leaf_level = tree.depth() - 1;
    let with_tas = columns.first().is_some_and(|c| c.tas.is_some());
    for (slot, domain) in tree.arena[leaf_level].iter().enumerate() {
        let Some(domain) = domain else { continue };
        let extra = if assumed.by_leaf.is_empty() {
            None
        } else {
            let key = (
                tree.topology.name.clone(),
                tree.path(leaf_level, slot as u32),
            );
            assumed.by_leaf.get(&key)
        };
        let domain_tas = with_tas && !domain.tas.is_zero();
        if !domain_tas && extra.is_none() {
            continue;
        }
        let feasible: Vec<usize> = domain
            .nodes
            .iter()
            .filter(|n| filter_node(store, **n, filter).is_none())
            .map(|n| *n as usize)
            .collect();
        for column in columns {
            let mut free: i128 = feasible
                .iter()
                .fold(0, |sum, n| sum.saturating_add(column.free(*n).max(0)));
            if domain_tas {
                free = free.saturating_sub(domain.tas.get(column.r).nanos());
            }
            if let Some(extra) = extra {
                free = free.saturating_sub(extra.get(column.r).nanos());
            }
            let pods = &mut cap.pods[leaf_level][slot];
            *pods = (*pods).min(fit_count(free, column.per));
        }
    }
}

/// Sums pods and units from the lowest level up, converting units at slice-layer levels.
fn roll_up(tree: &FlavorTree, resolved: &ResolvedRequest, cap: &mut Capacity) {
    let depth = tree.depth();
    let unit = |k: usize| u64::from(resolved.unit.get(k).copied().unwrap_or(1).max(1));
    let leaf_level = depth - 1;
    for slot in 0..cap.pods[leaf_level].len() {
        cap.units[leaf_level][slot] = cap.pods[leaf_level][slot] / unit(leaf_level);
    }
    for level in (0..leaf_level).rev() {
        let ratio = unit(level) / unit(level + 1);
        for (slot, domain) in tree.arena[level].iter().enumerate() {
            let Some(domain) = domain else { continue };
            let (mut pods, mut units) = (0u64, 0u64);
            for &child in &domain.children {
                pods = pods.saturating_add(cap.pods[level + 1][child as usize]);
                units = units.saturating_add(cap.units[level + 1][child as usize]);
            }
            cap.pods[level][slot] = pods;
            cap.units[level][slot] = units / ratio.max(1);
        }
    }
    cap.root_units = tree
        .roots
        .iter()
        .fold(0, |sum, s| sum.saturating_add(cap.units[0][*s as usize]));
}
