//! Kueue's classic preemption, with hierarchical reclaim: which admitted workloads a preemptor may
//! evict, and the smallest set, in candidate order, that makes it fit.
//!
//! The simulation removes candidates' usage from the live quota tree and always puts it back before
//! returning; the caller then evicts the chosen targets for real.

use super::common::{
    HasWorkload, Preemptor, Target, admitted_users, apply, candidate_order, fits, minimise,
    reclaim_allows, topology_fits, within_queue_allows, workloads_of,
};
use super::victim_side::{leaves_side_at_quota, side_borrowed_before_cycle};
use crate::engine::decision::PreemptionReason;
use crate::engine::fair_sharing::apply_usage;
use crate::engine::model::BorrowWithinCohortPolicy;
use crate::engine::quantity::Quantity;
use crate::engine::quota::{NodeId, QuotaTree};
use crate::engine::resources::{FlavorResource, FlavorResourceAmounts};
use crate::engine::state::World;

/// The lowest node on the preemptor's path whose subtree would stay within its own quota with the
/// request added: the preemptor's side is entitled to that capacity.
fn entitled_node(
    tree: &QuotaTree,
    node: NodeId,
    request: &FlavorResourceAmounts,
) -> Option<NodeId> {
    let mut remaining: Vec<(FlavorResource, Quantity)> = request.clone();
    let mut at = node;
    loop {
        if remaining
            .iter()
            .all(|(fr, amount)| tree.usage(at, *fr) + *amount <= tree.subtree_quota(at, *fr))
        {
            return Some(at);
        }
        let parent = tree.parent(at)?;
        for (fr, amount) in remaining.iter_mut() {
            let usage = tree.usage(at, *fr);
            let local = tree.local_quota(at, *fr);
            *amount = (usage + *amount - local).clamp_non_negative()
                - (usage - local).clamp_non_negative();
        }
        at = parent;
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Hierarchical,
    WithoutBorrowing,
    WhileBorrowing,
    SameQueue,
}

#[derive(Clone, Copy, Debug)]
struct Candidate {
    workload: u32,
    class: Class,
}

/// Classic victims for `p`, in candidate order and minimised; empty if it cannot fit.
pub(super) fn find_targets(
    world: &World<'_>,
    tree: &mut QuotaTree,
    p: &Preemptor<'_>,
) -> Vec<Target> {
    let info = &world.cqs[p.cq as usize];
    let node = info.node;
    let policy = info.preemption;
    let entitled = entitled_node(tree, node, p.request);
    let root = tree.root(node);
    let mut hierarchical = Vec::new();
    let mut others = Vec::new();
    let mut same = Vec::new();
    for &cq in world.tree_cqs(root) {
        let cq_node = world.cqs[cq as usize].node;
        for v in admitted_users(world, cq, p) {
            let victim = &world.workloads[v as usize];
            if cq == p.cq {
                if within_queue_allows(policy.within_cluster_queue, p, victim) {
                    same.push(Candidate {
                        workload: v,
                        class: Class::SameQueue,
                    });
                }
                continue;
            }
            if !reclaim_allows(policy.reclaim_within_cohort, p, victim)
                || !side_borrowed_before_cycle(world, tree, node, cq_node, p.request)
            {
                continue;
            }
            let outside_entitled = entitled.is_some_and(|n| !tree.on_path(cq_node, n));
            let borrow = policy.borrow_within_cohort;
            let class = if outside_entitled {
                Class::Hierarchical
            } else if borrow.policy == BorrowWithinCohortPolicy::Never
                || victim.model.priority >= p.priority
                || borrow
                    .max_priority_threshold
                    .is_some_and(|t| victim.model.priority > t)
            {
                Class::WithoutBorrowing
            } else {
                Class::WhileBorrowing
            };
            let list = if class == Class::Hierarchical {
                &mut hierarchical
            } else {
                &mut others
            };
            list.push(Candidate { workload: v, class });
        }
    }
    for list in [&mut hierarchical, &mut others, &mut same] {
        list.sort_by(|a, b| candidate_order(world, p.cq, a.workload, b.workload));
    }
    let other_queues = !hierarchical.is_empty() || !others.is_empty();
    let candidates: Vec<Candidate> = hierarchical
        .iter()
        .chain(&others)
        .chain(&same)
        .copied()
        .collect();
    let borrow_forbidden = policy.borrow_within_cohort.policy == BorrowWithinCohortPolicy::Never;
    let strictly_under_nominal = p
        .request
        .iter()
        .all(|(fr, _)| tree.usage(node, *fr) < tree.nominal(node, *fr));
    let attempts: &[bool] = if !other_queues || borrow_forbidden && !strictly_under_nominal {
        &[true]
    } else if borrow_forbidden && hierarchical.is_empty() {
        &[false, true]
    } else {
        &[true, false]
    };
    for &allow_borrowing in attempts {
        if let Some(targets) = attempt(world, tree, p, &candidates, allow_borrowing) {
            return targets;
        }
    }
    Vec::new()
}

fn attempt(
    world: &World<'_>,
    tree: &mut QuotaTree,
    p: &Preemptor<'_>,
    candidates: &[Candidate],
    allow_borrowing: bool,
) -> Option<Vec<Target>> {
    let node = world.cqs[p.cq as usize].node;
    let mut chosen: Vec<Candidate> = Vec::new();
    let mut fit = false;
    for c in candidates {
        if allow_borrowing && c.class == Class::WithoutBorrowing {
            continue;
        }
        if c.class != Class::SameQueue {
            let victim_cq = world.workloads[c.workload as usize]
                .holding
                .as_ref()
                .and_then(|h| h.cq);
            let still_borrowing = victim_cq.is_some_and(|cq| {
                let cq_node = world.cqs[cq as usize].node;
                side_borrowed_before_cycle(world, tree, node, cq_node, p.request)
            });
            if !still_borrowing {
                continue;
            }
        }
        if c.class == Class::WhileBorrowing {
            apply_usage(tree, node, p.request, 1);
            let keeps = leaves_side_at_quota(world, tree, node, c.workload, p.request);
            apply_usage(tree, node, p.request, -1);
            if !keeps {
                continue;
            }
        }
        apply(world, tree, c.workload, -1);
        chosen.push(*c);
        if fits(tree, node, p.request, allow_borrowing)
            && topology_fits(world, p, &workloads_of(&chosen))
        {
            fit = true;
            break;
        }
    }
    if !fit {
        chosen
            .iter()
            .for_each(|c| apply(world, tree, c.workload, 1));
        return None;
    }
    let chosen = minimise(world, tree, chosen, |t, released| {
        fits(t, node, p.request, allow_borrowing) && topology_fits(world, p, released)
    });
    chosen
        .iter()
        .for_each(|c| apply(world, tree, c.workload, 1));
    let reason = |class: Class| match class {
        Class::SameQueue => PreemptionReason::InClusterQueue,
        Class::WhileBorrowing if allow_borrowing => PreemptionReason::InCohortReclaimWhileBorrowing,
        _ => PreemptionReason::InCohortReclamation,
    };
    Some(
        chosen
            .iter()
            .map(|c| Target {
                workload: c.workload,
                reason: reason(c.class),
            })
            .collect(),
    )
}

impl HasWorkload for Candidate {
    fn workload(&self) -> u32 {
        self.workload
    }
}
