//! Kueue's fair-sharing preemption: victims come from the ClusterQueue whose side of the tree has
//! the highest dominant resource share, and a victim in another queue is taken only when the
//! preemptor's new share stays at or below the target's new share (Kueue's
//! `LessThanOrEqualToFinalShare` strategy) or below the target's old share (`LessThanInitialShare`),
//! so two workloads can never take turns evicting each other.

use std::collections::{BTreeMap, VecDeque};

use super::common::{
    Preemptor, Target, admitted_users, apply, candidate_order, fits, minimise, reclaim_allows,
    topology_fits, within_queue_allows, workloads_of,
};
use super::victim_side::{above_nominal, leaves_side_at_quota, side_borrows};
use crate::engine::decision::PreemptionReason;
use crate::engine::fair_sharing::{Share, apply_usage, dominant_share};
use crate::engine::features::Feature;
use crate::engine::model::{FairPreemptionStrategy, ReclaimWithinCohort};
use crate::engine::quota::{NodeId, QuotaTree};
use crate::engine::state::World;

/// The children of the lowest common ancestor of `a` and `b`, one on each side.
fn almost_lca(tree: &QuotaTree, a: NodeId, b: NodeId) -> Option<(NodeId, NodeId)> {
    let path_a = tree.path(a);
    let path_b = tree.path(b);
    let lca = path_a.iter().find(|n| path_b.contains(n))?;
    let side = |path: &[NodeId]| {
        let pos = path.iter().position(|n| n == lca)?;
        pos.checked_sub(1).map(|i| path[i])
    };
    Some((side(&path_a)?, side(&path_b)?))
}

struct Search<'w, 'a> {
    world: &'w World<'a>,
    node: NodeId,
    remaining: BTreeMap<u32, VecDeque<u32>>,
}

impl Search<'_, '_> {
    fn has_candidates_below(&self, tree: &QuotaTree, at: NodeId) -> bool {
        self.remaining.iter().any(|(cq, list)| {
            !list.is_empty() && tree.on_path(self.world.cqs[*cq as usize].node, at)
        })
    }

    /// From the root, descend into the child with the highest share that still has candidates.
    fn pick_target(&self, tree: &QuotaTree, root: NodeId) -> Option<u32> {
        let mut at = root;
        if !self.has_candidates_below(tree, at) {
            return None;
        }
        loop {
            if at.index() < self.world.cqs.len() {
                return Some(at.0);
            }
            let mut best: Option<(NodeId, Share)> = None;
            for &child in tree.children(at) {
                if !self.has_candidates_below(tree, child) {
                    continue;
                }
                let share = dominant_share(self.world, tree, child);
                if best.is_none_or(|(_, s)| share > s) {
                    best = Some((child, share));
                }
            }
            at = best?.0;
        }
    }

    fn preemptor_fits(&self, tree: &mut QuotaTree, p: &Preemptor<'_>, chosen: &[Target]) -> bool {
        apply_usage(tree, self.node, p.request, -1);
        let fit = fits(tree, self.node, p.request, true)
            && topology_fits(self.world, p, &workloads_of(chosen));
        apply_usage(tree, self.node, p.request, 1);
        fit
    }
}

/// Fair-sharing victims for `p`, minimised; empty if it cannot fit.
pub(super) fn find_targets(
    world: &World<'_>,
    tree: &mut QuotaTree,
    p: &Preemptor<'_>,
) -> Vec<Target> {
    let info = &world.cqs[p.cq as usize];
    let node = info.node;
    let policy = info.preemption;
    let root = tree.root(node);
    let mut remaining: BTreeMap<u32, VecDeque<u32>> = BTreeMap::new();
    for &cq in world.tree_cqs(root) {
        let cq_node = world.cqs[cq as usize].node;
        let mut list: Vec<u32> = if cq == p.cq {
            admitted_users(world, cq, p)
                .filter(|&v| {
                    within_queue_allows(
                        policy.within_cluster_queue,
                        p,
                        &world.workloads[v as usize],
                    )
                })
                .collect()
        } else if policy.reclaim_within_cohort != ReclaimWithinCohort::Never
            && above_nominal(tree, cq_node, p.request)
        {
            admitted_users(world, cq, p)
                .filter(|&v| {
                    reclaim_allows(
                        policy.reclaim_within_cohort,
                        p,
                        &world.workloads[v as usize],
                    )
                })
                .collect()
        } else {
            Vec::new()
        };
        list.sort_by(|a, b| candidate_order(world, p.cq, *a, *b));
        if !list.is_empty() {
            remaining.insert(cq, list.into());
        }
    }
    let strategies = world.config.fair_sharing.strategies();
    let within_nominal_gate = world
        .config
        .features
        .enabled(Feature::FairSharingPreemptWithinNominal);
    let mut search = Search {
        world,
        node,
        remaining,
    };
    let mut chosen: Vec<Target> = Vec::new();
    let mut retry: BTreeMap<u32, VecDeque<u32>> = BTreeMap::new();
    apply_usage(tree, node, p.request, 1);
    let mut fit = search.preemptor_fits(tree, p, &chosen);
    while !fit {
        let Some(target_cq) = search.pick_target(tree, root) else {
            break;
        };
        let take = |search: &mut Search<'_, '_>| {
            search
                .remaining
                .get_mut(&target_cq)
                .and_then(VecDeque::pop_front)
        };
        // A victim in another queue is taken only while its side of the tree is above nominal:
        // once it is not, the victim's queue could reclaim the quota straight back.
        if target_cq != p.cq
            && !side_borrows(tree, node, world.cqs[target_cq as usize].node, p.request)
        {
            search.remaining.remove(&target_cq);
            continue;
        }
        let direct = if target_cq == p.cq {
            Some(PreemptionReason::InClusterQueue)
        } else if within_nominal_gate
            && p.request
                .iter()
                .all(|(fr, _)| tree.usage(node, *fr) <= tree.nominal(node, *fr))
        {
            Some(PreemptionReason::InCohortReclamation)
        } else {
            None
        };
        if let Some(reason) = direct {
            // Every step takes a candidate or drops the queue, so the loop ends.
            match take(&mut search) {
                Some(v) => {
                    apply(world, tree, v, -1);
                    chosen.push(Target {
                        workload: v,
                        reason,
                    });
                }
                None => {
                    search.remaining.remove(&target_cq);
                }
            }
        } else {
            let target_node = world.cqs[target_cq as usize].node;
            let Some((p_side, t_side)) = almost_lca(tree, node, target_node) else {
                search.remaining.remove(&target_cq);
                continue;
            };
            let preemptor_new = dominant_share(world, tree, p_side);
            let target_old = dominant_share(world, tree, t_side);
            let list = search.remaining.remove(&target_cq).unwrap_or_default();
            // Kueue skips the target only when the target's share is finite; with both infinite
            // (weight-0 queues that borrow) it compares +Inf ≤ +Inf and two such queues evict each
            // other forever. A preemptor with an infinite share never wins by fair sharing here.
            if preemptor_new.is_infinite() {
                continue;
            }
            let mut rest = list.into_iter();
            let mut failed = VecDeque::new();
            for v in rest.by_ref() {
                if !leaves_side_at_quota(world, tree, node, v, p.request)
                    || shielded(world, v, p.cq)
                {
                    failed.push_back(v);
                    continue;
                }
                apply(world, tree, v, -1);
                let target_new = dominant_share(world, tree, t_side);
                let passes = match strategies.first() {
                    Some(FairPreemptionStrategy::LessThanInitialShare) => {
                        preemptor_new < target_old
                    }
                    _ => preemptor_new <= target_new,
                };
                if passes {
                    chosen.push(Target {
                        workload: v,
                        reason: PreemptionReason::InCohortFairSharing,
                    });
                    break;
                }
                apply(world, tree, v, 1);
                failed.push_back(v);
            }
            let unexamined: VecDeque<u32> = rest.collect();
            if !unexamined.is_empty() {
                search.remaining.insert(target_cq, unexamined);
            }
            if !failed.is_empty() {
                retry.entry(target_cq).or_default().extend(failed);
            }
        }
        fit = search.preemptor_fits(tree, p, &chosen);
    }
    if !fit && strategies.get(1) == Some(&FairPreemptionStrategy::LessThanInitialShare) {
        for (cq, list) in &retry {
            let target_node = world.cqs[*cq as usize].node;
            let Some((p_side, t_side)) = almost_lca(tree, node, target_node) else {
                continue;
            };
            let Some(&v) = list.front() else { continue };
            if !leaves_side_at_quota(world, tree, node, v, p.request) || shielded(world, v, p.cq) {
                continue;
            }
            if dominant_share(world, tree, p_side) < dominant_share(world, tree, t_side) {
                apply(world, tree, v, -1);
                chosen.push(Target {
                    workload: v,
                    reason: PreemptionReason::InCohortFairSharing,
                });
                fit = search.preemptor_fits(tree, p, &chosen);
                if fit {
                    break;
                }
            }
        }
    }
    apply_usage(tree, node, p.request, -1);
    if !fit {
        chosen
            .iter()
            .for_each(|t| apply(world, tree, t.workload, 1));
        return Vec::new();
    }
    let reasons = chosen.clone();
    let chosen = minimise(world, tree, chosen, |t, released| {
        fits(t, node, p.request, true) && topology_fits(world, p, released)
    });
    apply_usage(tree, node, p.request, 1);
    let valid = justified(
        world,
        tree,
        p,
        &strategies,
        &reasons,
        &workloads_of(&chosen),
    );
    apply_usage(tree, node, p.request, -1);
    chosen
        .iter()
        .for_each(|t| apply(world, tree, t.workload, 1));
    if valid { chosen } else { Vec::new() }
}

/// Whether `victim` took its quota from `cq` by fair sharing and so may not lose it to `cq` by fair
/// sharing while it runs.
fn shielded(world: &World<'_>, victim: u32, cq: u32) -> bool {
    world.workloads[victim as usize]
        .holding
        .as_ref()
        .is_some_and(|h| h.fair_share_shield.contains(&cq))
}

/// Whether every victim in `released` still has its reason with exactly those victims gone and the
/// preemptor admitted (the tree's current state). Minimisation puts back victims that are not needed
/// to fit, which can take away the reason another victim was chosen for (an own-queue victim that
/// brought the preemptor's queue within nominal, or lowered its share). Kueue issues such a set
/// anyway, and the two workloads can then evict each other in turn; here the preemption is not
/// issued and the preemptor keeps waiting, so every victim is both needed and justified.
fn justified(
    world: &World<'_>,
    tree: &mut QuotaTree,
    p: &Preemptor<'_>,
    strategies: &[FairPreemptionStrategy],
    targets: &[Target],
    released: &[u32],
) -> bool {
    let node = world.cqs[p.cq as usize].node;
    released.iter().all(|&v| {
        let Some(target) = targets.iter().find(|t| t.workload == v) else {
            return false;
        };
        if target.reason != PreemptionReason::InClusterQueue {
            let Some(victim_cq) = world.workloads[v as usize]
                .holding
                .as_ref()
                .and_then(|h| h.cq)
            else {
                return false;
            };
            apply(world, tree, v, 1);
            let borrowed = side_borrows(tree, node, world.cqs[victim_cq as usize].node, p.request);
            let keeps_nominal = target.reason != PreemptionReason::InCohortFairSharing
                || leaves_side_at_quota(world, tree, node, v, p.request);
            apply(world, tree, v, -1);
            if !(borrowed && keeps_nominal) {
                return false;
            }
        }
        match target.reason {
            PreemptionReason::InCohortReclamation => p
                .request
                .iter()
                .all(|(fr, _)| tree.usage(node, *fr) <= tree.nominal(node, *fr)),
            PreemptionReason::InCohortFairSharing => {
                let Some(victim_cq) = world.workloads[v as usize]
                    .holding
                    .as_ref()
                    .and_then(|h| h.cq)
                else {
                    return false;
                };
                let Some((p_side, t_side)) =
                    almost_lca(tree, node, world.cqs[victim_cq as usize].node)
                else {
                    return false;
                };
                let preemptor_new = dominant_share(world, tree, p_side);
                let target_new = dominant_share(world, tree, t_side);
                apply(world, tree, v, 1);
                let target_old = dominant_share(world, tree, t_side);
                apply(world, tree, v, -1);
                preemptor_new.is_finite()
                    && strategies.iter().any(|s| match s {
                        FairPreemptionStrategy::LessThanOrEqualToFinalShare => {
                            preemptor_new <= target_new
                        }
                        FairPreemptionStrategy::LessThanInitialShare => preemptor_new < target_old,
                    })
            }
            PreemptionReason::InClusterQueue | PreemptionReason::InCohortReclaimWhileBorrowing => {
                true
            }
        }
    })
}
