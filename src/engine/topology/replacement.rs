//! Node replacement for hot swap (C.8): new domains for the pods of failed nodes that keep the
//! original's required domain and whole slices, against current usage, without preemption.
//!
//! Kueue replaces one failed node and evicts the workload on a second failure; kuota replaces any
//! number at once. Broken slices are found from the counts that remain (a slice-level domain whose
//! count is no longer a multiple of the slice size lost pods of a slice), layer by layer from the
//! outermost, so each broken slice is completed inside its own domain and whole lost slices may go
//! anywhere inside the required domain. Preferred requests try the neighbourhood of the remaining
//! pods first, climbing a level at a time, before going anywhere.
//!
//! A remaining host that is still a node but has left the tree (not Ready, or cordoned) stays in
//! the assignment, where its pods may still run: Kueue calls such an assignment stale and evicts
//! the workload, so two hosts whose pods stop at different moments would cost the whole gang. A
//! host that is no node at all, or whose ancestors are gone, still makes the assignment stale, and
//! so does a host out of the tree when the request is for one host or slices by host.

use std::collections::{BTreeMap, HashSet};

use thiserror::Error;

use super::capacity::{Assumed, CapacityView};
use super::model::{DomainAssignment, DomainList, HOSTNAME_LABEL};
use super::placement::select::{LeafPods, Placer, Share};
use super::placement::{Prepared, place_single};
use super::request::{self, PlacementMode, PodSetRequest, RequestError, SliceLayer};
use super::snapshot::TopologySnapshot;
use super::tree::{FlavorTree, Membership, NONE, NodeExclusion};
use crate::engine::features::FeatureGates;

/// The patched assignment and what changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replacement {
    /// Remaining and new domains merged, in topology order.
    pub assignment: DomainList,
    /// Domains (and pod counts) given to the replacement pods.
    pub added: Vec<DomainAssignment>,
    /// Domains of the failed nodes that were dropped.
    pub removed: Vec<DomainAssignment>,
}

/// Why no replacement exists.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReplacementError {
    #[error("pod set {pod_set:?}: flavor {flavor:?} is not a TAS flavor of this snapshot")]
    UnknownFlavor { pod_set: String, flavor: String },
    #[error(
        "pod set {pod_set:?}: node replacement needs {HOSTNAME_LABEL:?} as the lowest level of topology {topology:?}"
    )]
    NeedsHostnameLevel { pod_set: String, topology: String },
    #[error("pod set {pod_set:?}: node {node:?} is not in the topology assignment")]
    NotAssigned { pod_set: String, node: String },
    #[error(
        "pod set {pod_set:?}: existing topologyAssignment is invalid: stale domain {hostname:?}"
    )]
    StaleDomain { pod_set: String, hostname: String },
    #[error("no replacement for unhealthy node(s) {}: {reason}", .nodes.join(", "))]
    NoReplacement {
        pod_set: String,
        nodes: Vec<String>,
        reason: String,
    },
    #[error(transparent)]
    Invalid(#[from] RequestError),
}

/// A placement the replacement must make: `pods` inside `scope` (anywhere when `None`), in whole
/// slices of `layers`.
#[derive(Clone, Debug)]
struct Task {
    scope: Option<(usize, u32)>,
    pods: u64,
    layers: Vec<SliceLayer>,
}

/// A remaining domain: its slots from level 0 to the leaf, and its count. The leaf slot of a host
/// that has left the tree is [`NONE`].
type Member = (Vec<u32>, u64);

/// Replacement domains for the pods that `assignment` put on `failed` nodes.
pub fn replace_failed_nodes(
    snapshot: &TopologySnapshot,
    request: &PodSetRequest,
    assignment: &DomainList,
    failed: &[String],
    gates: &FeatureGates,
) -> Result<Replacement, ReplacementError> {
    let pod_set = || request.name.clone();
    let tree = snapshot
        .tree(&request.flavor)
        .ok_or_else(|| ReplacementError::UnknownFlavor {
            pod_set: pod_set(),
            flavor: request.flavor.clone(),
        })?;
    if !tree.topology.hostname_leaves() {
        return Err(ReplacementError::NeedsHostnameLevel {
            pod_set: pod_set(),
            topology: tree.topology.name.clone(),
        });
    }
    let levels = &tree.topology.levels;
    request::resolve(request, &tree.topology.name, levels)?;
    let nodes = snapshot.nodes();
    let hostname_of = |name: &str| {
        nodes
            .id(name)
            .and_then(|id| nodes.get(id))
            .and_then(|n| n.labels.get(HOSTNAME_LABEL).cloned())
            .unwrap_or_else(|| name.to_string())
    };
    let failed_hosts: HashSet<String> = failed.iter().map(|n| hostname_of(n)).collect();
    for (node, host) in failed.iter().map(|n| (n, hostname_of(n))) {
        if !assignment
            .domains
            .iter()
            .any(|d| d.values.last() == Some(&host))
        {
            return Err(ReplacementError::NotAssigned {
                pod_set: pod_set(),
                node: node.clone(),
            });
        }
    }
    let (removed, kept): (Vec<_>, Vec<_>) = assignment
        .domains
        .iter()
        .cloned()
        .partition(|d| d.values.last().is_some_and(|h| failed_hosts.contains(h)));
    let leaf_level = tree.depth() - 1;
    let mut members: Vec<Member> = Vec::with_capacity(kept.len());
    for domain in &kept {
        let host = domain.values.last().cloned().unwrap_or_default();
        let in_tree = nodes
            .with_hostname(&host)
            .iter()
            .find_map(|id| tree.slots_of(*id));
        let slots = in_tree
            .or_else(|| slots_out_of_tree(tree, snapshot, &host))
            .ok_or_else(|| ReplacementError::StaleDomain {
                pod_set: pod_set(),
                hostname: host.clone(),
            })?;
        members.push((slots, u64::from(domain.count)));
    }
    let missing: u64 = removed.iter().map(|d| u64::from(d.count)).sum();
    let no_replacement = |reason: String| ReplacementError::NoReplacement {
        pod_set: pod_set(),
        nodes: failed.to_vec(),
        reason,
    };
    let layers: Vec<(usize, u32)> = request
        .slices
        .iter()
        .filter_map(|l| {
            levels
                .iter()
                .position(|k| *k == l.level)
                .map(|at| (at, l.size))
        })
        .collect();
    // A host out of the tree has no leaf slot: it cannot anchor a host-level slice or a request
    // for one host.
    let leaf_layer = layers.iter().any(|(at, _)| *at == leaf_level);
    let required_host = matches!(&request.mode, PlacementMode::Required(level)
        if levels.iter().position(|k| k == level) == Some(leaf_level));
    if leaf_layer || required_host {
        let out_of_tree = kept
            .iter()
            .zip(&members)
            .find(|(_, (slots, _))| slots[leaf_level] == NONE);
        if let Some((domain, _)) = out_of_tree {
            return Err(ReplacementError::StaleDomain {
                pod_set: pod_set(),
                hostname: domain.values.last().cloned().unwrap_or_default(),
            });
        }
    }
    let top_scope = match &request.mode {
        PlacementMode::Required(level) => {
            let at = levels.iter().position(|k| k == level).unwrap_or(0);
            members.first().map(|(slots, _)| (at, slots[at]))
        }
        _ => None,
    };
    let mut tasks = Vec::new();
    plan(&layers, 0, &members, missing, top_scope, levels, &mut tasks).map_err(no_replacement)?;
    // Most constrained first: deeper scopes before shallower ones, "anywhere" last.
    tasks.sort_by_key(|t| std::cmp::Reverse(t.scope.map_or(0, |(level, _)| level + 1)));
    let mut prepared = Prepared::new(snapshot, tree, request);
    prepared.skip = failed.iter().filter_map(|n| nodes.id(n)).collect();
    let mut assumed = Assumed::default();
    let mut new_leaves: Vec<LeafPods> = Vec::new();
    for task in tasks {
        let scopes = candidate_scopes(&task, request, tree, &members);
        let mut last_error = String::new();
        let mut placed = None;
        for scope in scopes {
            match run_task(&prepared, tree, request, &task, scope, &assumed, gates) {
                Ok(leaves) => {
                    placed = Some(leaves);
                    break;
                }
                Err(e) => last_error = e,
            }
        }
        let leaves = placed.ok_or_else(|| no_replacement(last_error))?;
        prepared.assume(&leaves, &mut assumed);
        new_leaves.extend(leaves);
    }
    Ok(merge(
        tree,
        leaf_level,
        &kept,
        &members,
        &new_leaves,
        removed,
    ))
}

/// The slots of a host that is a node but not in the tree (not Ready, or cordoned): its ancestors'
/// from its labels, which must all exist, and [`NONE`] for the host itself.
fn slots_out_of_tree(
    tree: &FlavorTree,
    snapshot: &TopologySnapshot,
    host: &str,
) -> Option<Vec<u32>> {
    let nodes = snapshot.nodes();
    let node = nodes
        .with_hostname(host)
        .iter()
        .find_map(|id| nodes.get(*id))?;
    let left = matches!(
        tree.membership(node),
        Membership::Excluded(NodeExclusion::NotReady | NodeExclusion::Unschedulable)
    );
    if !left {
        return None;
    }
    let levels = &tree.topology.levels;
    let (_, above) = levels.split_last()?;
    let path: Vec<String> = above
        .iter()
        .map(|key| node.labels.get(key).cloned())
        .collect::<Option<_>>()?;
    let mut slots = tree.slots_along(&path)?;
    slots.push(NONE);
    Some(slots)
}

/// Splits `budget` missing pods among the broken slice domains of layer `j` (and recursively
/// their inner layers); the rest, whole slices of layer `j`, go anywhere in `scope`.
fn plan(
    layers: &[(usize, u32)],
    j: usize,
    members: &[Member],
    budget: u64,
    scope: Option<(usize, u32)>,
    levels: &[String],
    tasks: &mut Vec<Task>,
) -> Result<(), String> {
    let as_layers = |from: usize| {
        layers[from..]
            .iter()
            .map(|(at, size)| SliceLayer {
                level: levels[*at].clone(),
                size: *size,
            })
            .collect::<Vec<_>>()
    };
    let Some(&(at, size)) = layers.get(j) else {
        if budget > 0 {
            tasks.push(Task {
                scope,
                pods: budget,
                layers: Vec::new(),
            });
        }
        return Ok(());
    };
    let size = u64::from(size);
    let mut by_domain: BTreeMap<u32, Vec<Member>> = BTreeMap::new();
    for member in members {
        by_domain
            .entry(member.0[at])
            .or_default()
            .push(member.clone());
    }
    let mut used = 0;
    for (slot, inside) in &by_domain {
        let need = need_inside(layers, j, inside);
        if need == 0 {
            continue;
        }
        used += need;
        if used > budget {
            return Err(format!(
                "the remaining pods of slice domain {:?} need {need} more, only {budget} are missing",
                levels[at]
            ));
        }
        plan(
            layers,
            j + 1,
            inside,
            need,
            Some((at, *slot)),
            levels,
            tasks,
        )?;
    }
    let free = budget - used;
    if !free.is_multiple_of(size) {
        return Err(format!(
            "{free} pods to re-place do not make whole slices of {size}"
        ));
    }
    if free > 0 {
        tasks.push(Task {
            scope,
            pods: free,
            layers: as_layers(j),
        });
    }
    Ok(())
}

/// Pods that must return into one layer-`j` domain holding `members` to make its slices whole.
fn need_inside(layers: &[(usize, u32)], j: usize, members: &[Member]) -> u64 {
    let (_, size) = layers[j];
    let size = u64::from(size);
    let remaining: u64 = members.iter().map(|m| m.1).sum();
    let base = (size - remaining % size) % size;
    let Some(&(inner_at, _)) = layers.get(j + 1) else {
        return base;
    };
    let mut inner: BTreeMap<u32, Vec<Member>> = BTreeMap::new();
    for member in members {
        inner
            .entry(member.0[inner_at])
            .or_default()
            .push(member.clone());
    }
    let inner_need: u64 = inner.values().map(|m| need_inside(layers, j + 1, m)).sum();
    if inner_need > base {
        base + (inner_need - base).div_ceil(size) * size
    } else {
        base
    }
}

/// Where to try a task: its scope; for a preferred request without one, the ancestors of the
/// remaining pods from the preferred level up, then anywhere.
fn candidate_scopes(
    task: &Task,
    request: &PodSetRequest,
    tree: &FlavorTree,
    members: &[Member],
) -> Vec<Option<(usize, u32)>> {
    if task.scope.is_some() {
        return vec![task.scope];
    }
    let mut scopes = Vec::new();
    if let (PlacementMode::Preferred(level), Some((slots, _))) = (&request.mode, members.first())
        && let Some(at) = tree.topology.levels.iter().position(|k| k == level)
    {
        let deepest_layer = task
            .layers
            .first()
            .and_then(|l| tree.topology.levels.iter().position(|k| *k == l.level));
        for level in (0..=at)
            .rev()
            .filter(|l| deepest_layer.is_none_or(|d| *l <= d))
            .filter(|l| slots[*l] != NONE)
        {
            scopes.push(Some((level, slots[level])));
        }
    }
    scopes.push(None);
    scopes
}

fn run_task(
    prepared: &Prepared<'_>,
    tree: &FlavorTree,
    request: &PodSetRequest,
    task: &Task,
    scope: Option<(usize, u32)>,
    assumed: &Assumed,
    gates: &FeatureGates,
) -> Result<Vec<LeafPods>, String> {
    let levels = &tree.topology.levels;
    let mode = match scope {
        Some((level, _)) => PlacementMode::Required(levels[level].clone()),
        None => request.mode.clone(),
    };
    let count = u32::try_from(task.pods).map_err(|_| "too many pods".to_string())?;
    let sub = PodSetRequest {
        count,
        slices: task.layers.clone(),
        mode,
        ..request.clone()
    };
    let resolved =
        request::resolve(&sub, &tree.topology.name, levels).map_err(|e| e.to_string())?;
    let cap = prepared.capacity(&resolved, CapacityView::Current, assumed);
    let placer = Placer {
        tree,
        cap: &cap,
        resolved: &resolved,
    };
    let unit = u64::from(resolved.unit.get(resolved.main_level).copied().unwrap_or(1));
    let mut leaves = Vec::new();
    match scope {
        Some((level, slot)) => {
            let room = cap.units_at(level, slot);
            if room < resolved.total_units {
                return Err(format!(
                    "{} {:?} allows to fit only {} out of {} pod(s)",
                    levels[level],
                    tree.path(level, slot).join("/"),
                    room * unit,
                    task.pods
                ));
            }
            placer.descend(
                Share {
                    level: Some(level),
                    slot,
                    units: resolved.total_units,
                },
                &mut leaves,
            );
        }
        None => {
            leaves = place_single(&placer, gates).map_err(|fit| {
                format!(
                    "topology {:?} allows to fit only {fit} out of {} pod(s)",
                    tree.topology.name, task.pods
                )
            })?;
        }
    }
    Ok(leaves)
}

/// Remaining and new domains, counts summed per host, in topology (rank) order.
fn merge(
    tree: &FlavorTree,
    leaf_level: usize,
    kept: &[DomainAssignment],
    members: &[Member],
    new_leaves: &[LeafPods],
    removed: Vec<DomainAssignment>,
) -> Replacement {
    let mut by_path: BTreeMap<Vec<String>, DomainAssignment> = BTreeMap::new();
    for (domain, (slots, _)) in kept.iter().zip(members) {
        let path = if slots[leaf_level] == NONE {
            let host = domain.values.last().cloned().unwrap_or_default();
            let mut path = leaf_level
                .checked_sub(1)
                .map_or_else(Vec::new, |above| tree.path(above, slots[above]));
            path.push(host);
            path
        } else {
            tree.path(leaf_level, slots[leaf_level])
        };
        by_path
            .entry(path)
            .or_insert_with(|| DomainAssignment {
                values: domain.values.clone(),
                count: 0,
            })
            .count += domain.count;
    }
    let mut added: BTreeMap<Vec<String>, DomainAssignment> = BTreeMap::new();
    for leaf in new_leaves.iter().filter(|l| l.pods > 0) {
        let path = tree.path(leaf_level, leaf.slot);
        let values = vec![path.last().cloned().unwrap_or_default()];
        let pods = u32::try_from(leaf.pods).unwrap_or(u32::MAX);
        added
            .entry(path.clone())
            .or_insert_with(|| DomainAssignment {
                values: values.clone(),
                count: 0,
            })
            .count += pods;
        by_path
            .entry(path)
            .or_insert_with(|| DomainAssignment { values, count: 0 })
            .count += pods;
    }
    Replacement {
        assignment: DomainList {
            levels: tree.topology.assignment_levels(),
            domains: by_path.into_values().collect(),
        },
        added: added.into_values().collect(),
        removed,
    }
}
