//! Pod-set groups (`podset-group-name`): a leader pod set (count 1) and a worker pod set placed in
//! one domain of the requested level (C.7.3). A domain qualifies when some node in it takes the
//! leader and the workers still fit around it; the leader goes where it costs the workers least.
//! The workers may ask for slices (Kueue's grouped pod-set slicing): the leader then costs whole
//! slices only where its pods break one. With `TASBalancedPlacement` a preferred group is
//! balanced as Kueue balances it ([`super::balanced`]), the leader in the first domain filled.

use super::super::capacity::{self, Assumed, CapacityView};
use super::super::request::{self, PlacementMode, PodSetRequest, RequestError};
use super::super::snapshot::TopologySnapshot;
use super::super::tree::FlavorTree;
use super::balanced::{self, LeaderCost};
use super::select::{LeafPods, Placer, Share};
use super::{FailureReason, PlacementFailure, PodSetPlacement, Prepared};
use crate::engine::features::{Feature, FeatureGates};

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
    let (leader, workers) = match (ra.count, rb.count) {
        (1, _) => (a, b),
        (_, 1) => (b, a),
        _ => {
            return Err(group_error(
                group,
                "one of the two pod sets must have count 1 (the leader)",
            ));
        }
    };
    // Kueue's grouped pod-set slicing: the workers may come in slices, the single leader may not.
    if requests[leader].slices.iter().any(|layer| layer.size > 1) {
        return Err(group_error(group, "the leader pod set cannot use slices"));
    }
    Ok((leader, workers))
}

/// Places leader and workers together; returns their placements in that order.
pub fn place_group(
    snapshot: &TopologySnapshot,
    tree: &FlavorTree,
    leader: &PodSetRequest,
    workers: &PodSetRequest,
    view: CapacityView,
    assumed: &mut Assumed,
    gates: &FeatureGates,
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
    let unit = |level: usize| u64::from(resolved_w.unit.get(level).copied().unwrap_or(1).max(1));
    // Per domain: the fewest worker units the leader costs there, and the leaf where it costs
    // that (first in value order on ties), level by level. A leaf loses whole slices only when
    // the leader's pods break one; a parent loses what its cheapest child loses, in its own units.
    let mut best_delta: Vec<Vec<u64>> =
        tree.arena.iter().map(|a| vec![u64::MAX; a.len()]).collect();
    let mut leader_leaf: Vec<Vec<u32>> =
        tree.arena.iter().map(|a| vec![u32::MAX; a.len()]).collect();
    // The fewest worker pods the leader costs in each domain (balanced placement weighs both).
    let mut pod_delta: Vec<Vec<u64>> = tree.arena.iter().map(|a| vec![u64::MAX; a.len()]).collect();
    for (slot, cost) in costs.iter().enumerate() {
        if *cost == u64::MAX {
            continue;
        }
        pod_delta[leaf_level][slot] = *cost;
        let pods = cap_w.pods_at(leaf_level, slot as u32);
        let u = unit(leaf_level);
        best_delta[leaf_level][slot] = pods / u - pods.saturating_sub(*cost) / u;
        leader_leaf[leaf_level][slot] = slot as u32;
    }
    for level in (0..leaf_level).rev() {
        let ratio = (unit(level) / unit(level + 1)).max(1);
        for (slot, domain) in tree.arena[level].iter().enumerate() {
            let Some(domain) = domain else { continue };
            let children_units: u64 = domain
                .children
                .iter()
                .map(|c| cap_w.units_at(level + 1, *c))
                .sum();
            for &child in &domain.children {
                pod_delta[level][slot] =
                    pod_delta[level][slot].min(pod_delta[level + 1][child as usize]);
                let child_loss = best_delta[level + 1][child as usize];
                if child_loss == u64::MAX {
                    continue;
                }
                let loss =
                    children_units / ratio - children_units.saturating_sub(child_loss) / ratio;
                if loss < best_delta[level][slot] {
                    best_delta[level][slot] = loss;
                    leader_leaf[level][slot] = leader_leaf[level + 1][child as usize];
                }
            }
        }
    }
    let need = resolved_w.total_units;
    let main_unit = unit(resolved_w.main_level);
    let room = |level: usize, slot: u32| {
        let delta = best_delta[level][slot as usize];
        (delta != u64::MAX).then(|| cap_w.units_at(level, slot).saturating_sub(delta))
    };
    let main = resolved_w.main_level;
    let balanced = (gates.enabled(Feature::TASBalancedPlacement) && resolved_w.climbs)
        .then(|| {
            let placer = Placer {
                tree,
                cap: &cap_w,
                resolved: &resolved_w,
            };
            let cost = LeaderCost {
                units: &best_delta,
                pods: &pod_delta,
            };
            balanced::balanced_group_shares(&placer, main, need, &cost)
        })
        .flatten()
        .and_then(|(shares, host)| {
            let at = shares.get(host)?;
            let leader_slot = leader_leaf[at.level?][at.slot as usize];
            Some((leader_slot, shares))
        });
    let levels: Vec<usize> = if balanced.is_some() {
        Vec::new()
    } else if resolved_w.required {
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
                best_fit = best_fit.max(r.saturating_mul(main_unit) + 1);
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
    let wanted = u64::from(workers.count) + 1;
    let single = |(level, slot): (usize, u32)| {
        let share = Share {
            level: Some(level),
            slot,
            units: need,
        };
        (leader_leaf[level][slot as usize], vec![share])
    };
    let Some((leader_slot, shares)) = balanced.or_else(|| chosen.map(single)) else {
        let mut failure = pw.no_fit(&cap_w, best_fit.min(wanted));
        if let FailureReason::NoFit { wanted: w, .. } = &mut failure.reason {
            *w = wanted;
        }
        return Err(failure);
    };
    let leader_leaves = vec![LeafPods {
        slot: leader_slot,
        pods: 1,
    }];
    pl.assume(&leader_leaves, assumed);
    // The workers lose the leader's pods on the leader's path; units are recomputed along it.
    let mut cap_final = cap_w;
    let cost = costs.get(leader_slot as usize).copied().unwrap_or(0);
    let (mut l, mut s) = (leaf_level, leader_slot);
    while let Some(d) = tree.domain(l, s) {
        if let Some(pods) = cap_final
            .pods
            .get_mut(l)
            .and_then(|v| v.get_mut(s as usize))
        {
            *pods = pods.saturating_sub(cost);
        }
        let units = if l == leaf_level {
            cap_final.pods_at(l, s) / unit(l)
        } else {
            let children: u64 = d
                .children
                .iter()
                .map(|c| cap_final.units_at(l + 1, *c))
                .sum();
            children / (unit(l) / unit(l + 1)).max(1)
        };
        if let Some(u) = cap_final
            .units
            .get_mut(l)
            .and_then(|v| v.get_mut(s as usize))
        {
            *u = units;
        }
        if l == 0 {
            break;
        }
        (l, s) = (l - 1, d.parent);
    }
    cap_final.root_units = tree
        .roots
        .iter()
        .fold(0, |sum, r| sum.saturating_add(cap_final.units_at(0, *r)));
    let placer = Placer {
        tree,
        cap: &cap_final,
        resolved: &resolved_w,
    };
    let mut worker_leaves = Vec::new();
    if need > 0 {
        for share in shares {
            placer.descend(share, &mut worker_leaves);
        }
    }
    pw.assume(&worker_leaves, assumed);
    Ok((pl.placement(&leader_leaves), pw.placement(&worker_leaves)))
}
