//! Pod-set groups (`podset-group-name`): a leader pod set (count 1) and a worker pod set placed in
//! one domain of the requested level (C.7.3). A domain qualifies when some node in it takes the
//! leader and the workers still fit around it; the leader goes where it costs the workers least.

use super::super::capacity::{self, Assumed, CapacityView};
use super::super::request::{self, PlacementMode, PodSetRequest, RequestError};
use super::super::snapshot::TopologySnapshot;
use super::super::tree::FlavorTree;
use super::select::{LeafPods, Placer, Share};
use super::{FailureReason, PlacementFailure, PodSetPlacement, Prepared};

fn group_error(group: &str, reason: &str) -> RequestError {
    RequestError::Group {
        group: group.to_string(),
        reason: reason.to_string(),
    }
}

fn mode_level(mode: &PlacementMode) -> Option<&str> {
    match mode {
        PlacementMode::Required(l) | PlacementMode::Preferred(l) => Some(l),
        _ => None,
    }
}

/// Indexes of (leader, workers) of the group `group` that the pod set at `index` belongs to.
pub fn pair(
    requests: &[PodSetRequest],
    index: usize,
    group: &str,
) -> Result<(usize, usize), RequestError> {
    let members: Vec<usize> = (0..requests.len())
        .filter(|i| requests[*i].group.as_deref() == Some(group))
        .collect();
    let [a, b] = members[..] else {
        return Err(group_error(
            group,
            &format!("needs exactly 2 pod sets, has {}", members.len()),
        ));
    };
    debug_assert!(a == index || b == index);
    let (ra, rb) = (&requests[a], &requests[b]);
    if ra.flavor != rb.flavor {
        return Err(group_error(group, "both pod sets must use the same flavor"));
    }
    if mode_level(&ra.mode).is_none() || ra.mode != rb.mode {
        return Err(group_error(
            group,
            "both pod sets need the same required or preferred level",
        ));
    }
    if !ra.slices.is_empty() || !rb.slices.is_empty() {
        return Err(group_error(
            group,
            "slices cannot be combined with a pod-set group",
        ));
    }
    match (ra.count, rb.count) {
        (1, _) => Ok((a, b)),
        (_, 1) => Ok((b, a)),
        _ => Err(group_error(
            group,
            "one of the two pod sets must have count 1 (the leader)",
        )),
    }
}

/// Places leader and workers together; returns their placements in that order.
pub fn place_group(
    snapshot: &TopologySnapshot,
    tree: &FlavorTree,
    leader: &PodSetRequest,
    workers: &PodSetRequest,
    view: CapacityView,
    assumed: &mut Assumed,
) -> Result<(PodSetPlacement, PodSetPlacement), PlacementFailure> {
    let invalid = |e| PlacementFailure {
        pod_set: workers.name.clone(),
        reason: FailureReason::Invalid(e),
        fits_empty_cluster: false,
    };
    let topology = &tree.topology;
    let resolved_w =
        request::resolve(workers, &topology.name, &topology.levels).map_err(invalid)?;
    request::resolve(leader, &topology.name, &topology.levels).map_err(invalid)?;
    let (pl, pw) = (
        Prepared::new(snapshot, tree, leader),
        Prepared::new(snapshot, tree, workers),
    );
    let cap_w = pw.capacity(&resolved_w, view, assumed);
    let costs = capacity::leader_costs(
        &snapshot.nodes,
        tree,
        &pw.filter(),
        &pl.filter(),
        view,
        assumed,
    );
    let leaf_level = tree.depth() - 1;
    // Per domain: the cheapest leaf for the leader (first in value order on ties), level by level.
    let mut best_delta: Vec<Vec<u64>> =
        tree.arena.iter().map(|a| vec![u64::MAX; a.len()]).collect();
    let mut leader_leaf: Vec<Vec<u32>> =
        tree.arena.iter().map(|a| vec![u32::MAX; a.len()]).collect();
    for (slot, cost) in costs.iter().enumerate() {
        best_delta[leaf_level][slot] = *cost;
        leader_leaf[leaf_level][slot] = slot as u32;
    }
    for level in (0..leaf_level).rev() {
        for (slot, domain) in tree.arena[level].iter().enumerate() {
            let Some(domain) = domain else { continue };
            for &child in &domain.children {
                let delta = best_delta[level + 1][child as usize];
                if delta < best_delta[level][slot] {
                    best_delta[level][slot] = delta;
                    leader_leaf[level][slot] = leader_leaf[level + 1][child as usize];
                }
            }
        }
    }
    let need = u64::from(workers.count);
    let room = |level: usize, slot: u32| {
        let delta = best_delta[level][slot as usize];
        (delta != u64::MAX).then(|| cap_w.pods_at(level, slot).saturating_sub(delta))
    };
    let main = resolved_w.main_level;
    let levels: Vec<usize> = if resolved_w.required {
        vec![main]
    } else {
        (0..=main).rev().collect()
    };
    let mut chosen = None;
    let mut best_fit = 0;
    for level in levels {
        let mut fitting: Vec<(u64, usize, u32)> = Vec::new();
        for (pos, slot) in tree.level_order(level).into_iter().enumerate() {
            if let Some(r) = room(level, slot) {
                best_fit = best_fit.max(r + 1);
                if r >= need {
                    fitting.push((r, pos, slot));
                }
            }
        }
        if let Some(&(_, _, slot)) = fitting.iter().min() {
            chosen = Some((level, slot));
            break;
        }
    }
    let Some((level, slot)) = chosen else {
        let mut failure = pw.no_fit(&cap_w, best_fit.min(need + 1));
        if let FailureReason::NoFit { wanted, .. } = &mut failure.reason {
            *wanted = need + 1;
        }
        return Err(failure);
    };
    let leader_slot = leader_leaf[level][slot as usize];
    let leader_leaves = vec![LeafPods {
        slot: leader_slot,
        pods: 1,
    }];
    pl.assume(&leader_leaves, assumed);
    // The workers lose exactly the leader's cost on the leader's path (groups have no slices, so
    // units are pods); no need for another pass over the nodes.
    let mut cap_final = cap_w;
    let cost = best_delta[level][slot as usize];
    let (mut l, mut s) = (leaf_level, leader_slot);
    while let Some(d) = tree.domain(l, s) {
        for counts in [&mut cap_final.pods, &mut cap_final.units] {
            if let Some(c) = counts.get_mut(l).and_then(|v| v.get_mut(s as usize)) {
                *c = c.saturating_sub(cost);
            }
        }
        if l == 0 {
            break;
        }
        (l, s) = (l - 1, d.parent);
    }
    cap_final.root_units = cap_final.root_units.saturating_sub(cost);
    let placer = Placer {
        tree,
        cap: &cap_final,
        resolved: &resolved_w,
    };
    let mut worker_leaves = Vec::new();
    if need > 0 {
        placer.descend(
            Share {
                level: Some(level),
                slot,
                units: need,
            },
            &mut worker_leaves,
        );
    }
    pw.assume(&worker_leaves, assumed);
    Ok((pl.placement(&leader_leaves), pw.placement(&worker_leaves)))
}
