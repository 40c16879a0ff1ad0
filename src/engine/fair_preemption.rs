//! Fair-sharing preemption (C.5): victims come from the ClusterQueue whose side of the tree has the
//! highest dominant resource share, and a victim in another queue is taken only when the
//! preemptor's new share stays at or below the target's (S2-a) or below the target's old share
//! (S2-b), so two workloads can never take turns evicting each other.

use std::collections::{BTreeMap, VecDeque};

use super::decision::PreemptionReason;
use super::fair_sharing::{Share, apply_usage, dominant_share};
use super::features::Feature;
use super::model::{FairPreemptionStrategy, ReclaimWithinCohort};
use super::preemption::{
    Preemptor, Target, above_nominal, admitted_users, apply, candidate_order, fits, minimise,
    reclaim_allows, topology_fits, within_queue_allows, workloads_of,
};
use super::quota::{NodeId, QuotaTree};
use super::state::World;

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
            !list.is_empty() && tree.path(self.world.cqs[*cq as usize].node).contains(&at)
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
pub fn find_targets(world: &World<'_>, tree: &mut QuotaTree, p: &Preemptor<'_>) -> Vec<Target> {
    let info = &world.cqs[p.cq as usize];
    let node = info.node;
    let policy = info.preemption;
    let root = tree.root(node);
    let mut remaining: BTreeMap<u32, VecDeque<u32>> = BTreeMap::new();
    for &cq in world.tree_cqs(root) {
        let cq_node = world.cqs[cq as usize].node;
        let mut list: Vec<u32> = if cq == p.cq {
            admitted_users(world, cq, p.request)
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
            admitted_users(world, cq, p.request)
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
            if preemptor_new.is_infinite() && !target_old.is_infinite() {
                continue;
            }
            let mut rest = list.into_iter();
            let mut failed = VecDeque::new();
            for v in rest.by_ref() {
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
    let chosen = minimise(world, tree, chosen, |t, released| {
        fits(t, node, p.request, true) && topology_fits(world, p, released)
    });
    chosen
        .iter()
        .for_each(|t| apply(world, tree, t.workload, 1));
    chosen
}
