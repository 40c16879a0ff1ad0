//! Rules about the victim's side of the cohort tree (from its ClusterQueue up to, not including, the
//! lowest common ancestor with the preemptor): a victim in another queue is taken only while its
//! side borrows, and a borrowing preemptor does not push that side under a quota it would reclaim
//! straight back. Shared by classic and fair-sharing preemption.

use super::common::apply;
use crate::engine::model::ReclaimWithinCohort;
use crate::engine::quantity::Quantity;
use crate::engine::quota::{NodeId, QuotaTree};
use crate::engine::resources::{FlavorResource, FlavorResourceAmounts, amount_of};
use crate::engine::state::World;

/// Whether `node` uses more than its subtree quota on one of the pairs in `request`.
pub(super) fn above_nominal(
    tree: &QuotaTree,
    node: NodeId,
    request: &FlavorResourceAmounts,
) -> bool {
    request
        .iter()
        .any(|(fr, _)| tree.usage(node, *fr) > tree.subtree_quota(node, *fr))
}

/// Whether every node from `cq_node` up to, but excluding, the lowest common ancestor with
/// `preemptor_node` is above nominal: the victim's side is using quota that is not its own.
pub(super) fn side_borrows(
    tree: &QuotaTree,
    preemptor_node: NodeId,
    cq_node: NodeId,
    request: &FlavorResourceAmounts,
) -> bool {
    let mut at = cq_node;
    loop {
        if tree.on_path(preemptor_node, at) {
            return true;
        }
        if !above_nominal(tree, at, request) {
            return false;
        }
        match tree.parent(at) {
            Some(parent) => at = parent,
            None => return true,
        }
    }
}

/// [`side_borrows`] without the workloads admitted in this cycle. They are never victims, so a side
/// that borrows only because of them has nothing to give back: taking its older workloads instead
/// would let those reclaim straight back from the preemptor.
pub(super) fn side_borrowed_before_cycle(
    world: &World<'_>,
    tree: &mut QuotaTree,
    preemptor_node: NodeId,
    cq_node: NodeId,
    request: &FlavorResourceAmounts,
) -> bool {
    let fresh: Vec<u32> = world
        .tree_cqs(tree.root(cq_node))
        .iter()
        .flat_map(|&cq| world.queues[cq as usize].admitted.iter().copied())
        .filter(|&i| {
            let holding = world.workloads[i as usize].holding.as_ref();
            holding.is_some_and(|h| h.cycle == world.cycle)
        })
        .collect();
    fresh.iter().for_each(|&i| apply(world, tree, i, -1));
    let borrows = side_borrows(tree, preemptor_node, cq_node, request);
    fresh.iter().for_each(|&i| apply(world, tree, i, 1));
    borrows
}

/// Whether taking `victim` leaves every node on its side of the tree (from its ClusterQueue up to,
/// not including, the lowest common ancestor with the preemptor) either at or above its own quota on
/// the pairs the preemptor needs, or able to get all of its unused quota from free capacity, when the
/// victim's queue may reclaim. A preemptor that borrows must not push the victim's side under a
/// guaranteed quota it cannot get back freely: that side would then reclaim the quota back (within
/// nominal, or hierarchically), and the two would take turns. A side that can take all it is owed
/// from free capacity has no reason to reclaim. Expects the preemptor's usage in `tree`.
pub(super) fn leaves_side_at_quota(
    world: &World<'_>,
    tree: &mut QuotaTree,
    preemptor_node: NodeId,
    victim: u32,
    request: &FlavorResourceAmounts,
) -> bool {
    let Some(h) = &world.workloads[victim as usize].holding else {
        return false;
    };
    let Some(cq) = h.cq else {
        return false;
    };
    let info = &world.cqs[cq as usize];
    if info.preemption.reclaim_within_cohort == ReclaimWithinCohort::Never {
        return true;
    }
    let needed: Vec<FlavorResource> = h
        .usage
        .iter()
        .filter(|(fr, _)| !amount_of(request, *fr).is_zero())
        .map(|(fr, _)| *fr)
        .collect();
    apply(world, tree, victim, -1);
    let mut at = Some(info.node);
    let mut kept = true;
    while let Some(node) = at.filter(|n| !tree.on_path(preemptor_node, *n)) {
        kept &= needed.iter().all(|fr| {
            let unused = tree.subtree_quota(node, *fr) - tree.usage(node, *fr);
            unused <= Quantity::ZERO || tree.available(node, *fr) >= unused
        });
        at = tree.parent(node);
    }
    apply(world, tree, victim, 1);
    kept
}
