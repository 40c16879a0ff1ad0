//! What classic and fair-sharing preemption share: the preemptor and its victims, Kueue's policy
//! predicates and candidate order, and the simulation on the quota tree (remove a candidate's
//! usage, check the fit, minimise the victims, restore).

use std::cmp::{Ordering, Reverse};

use crate::engine::decision::{PreemptionReason, WorkloadKey};
use crate::engine::model::{ReclaimWithinCohort, WithinClusterQueue};
use crate::engine::quota::{NodeId, QuotaTree};
use crate::engine::resources::{FlavorId, FlavorResourceAmounts, amount_of};
use crate::engine::state::{WorkloadSlot, World};
use crate::engine::topology_placer::{TopologyQuery, TopologyVerdict};

/// A pod set whose placement the topology seam must confirm, also during preemption.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TopologyNeed {
    pub(crate) pod_set: usize,
    pub(crate) flavor: FlavorId,
    pub(crate) count: i32,
}

/// A chosen victim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Target {
    pub(crate) workload: u32,
    pub(crate) reason: PreemptionReason,
}

/// The preemptor as the policies see it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Preemptor<'a> {
    pub(super) cq: u32,
    pub(super) workload: &'a WorkloadSlot,
    pub(super) priority: i32,
    pub(super) creation: i64,
    pub(super) request: &'a FlavorResourceAmounts,
    /// Pod sets whose placement the topology seam must confirm with the victims gone.
    pub(super) topology: &'a [TopologyNeed],
}

impl<'a> Preemptor<'a> {
    pub(crate) fn new(
        cq: u32,
        wl: &'a WorkloadSlot,
        request: &'a FlavorResourceAmounts,
        topology: &'a [TopologyNeed],
    ) -> Self {
        Preemptor {
            cq,
            workload: wl,
            priority: wl.model.priority,
            creation: wl.model.creation,
            request,
            topology,
        }
    }
}

/// Whether the topology seam places every TAS pod set of the preemptor once `released` are gone.
pub(super) fn topology_fits(world: &World<'_>, p: &Preemptor<'_>, released: &[u32]) -> bool {
    if p.topology.is_empty() {
        return true;
    }
    let released: Vec<WorkloadKey> = released
        .iter()
        .map(|i| world.workloads[*i as usize].key())
        .collect();
    p.topology.iter().all(|need| {
        let (Some(flavor), Some(pod_set)) = (
            world.flavor(need.flavor),
            p.workload.model.pod_sets.get(need.pod_set),
        ) else {
            return false;
        };
        let cq = &world.cqs[p.cq as usize];
        let query = TopologyQuery {
            workload: &p.workload.model,
            pod_set_index: need.pod_set,
            pod_set,
            count: need.count,
            flavor,
            cluster_queue: &cq.name,
            tas_only_cluster_queue: cq.tas_only,
            released: &released,
        };
        matches!(world.placer.place(&query), TopologyVerdict::Fits(_))
    })
}

/// `withinClusterQueue` predicate.
pub(super) fn within_queue_allows(
    policy: WithinClusterQueue,
    p: &Preemptor<'_>,
    v: &WorkloadSlot,
) -> bool {
    match policy {
        WithinClusterQueue::Never => false,
        WithinClusterQueue::LowerPriority => p.priority > v.model.priority,
        WithinClusterQueue::LowerOrNewerEqualPriority => {
            p.priority > v.model.priority
                || p.priority == v.model.priority && p.creation < v.model.creation
        }
    }
}

/// `reclaimWithinCohort` predicate.
pub(super) fn reclaim_allows(
    policy: ReclaimWithinCohort,
    p: &Preemptor<'_>,
    v: &WorkloadSlot,
) -> bool {
    match policy {
        ReclaimWithinCohort::Never => false,
        ReclaimWithinCohort::LowerPriority => p.priority > v.model.priority,
        ReclaimWithinCohort::Any => true,
    }
}

/// Whether the request fits in `cq` now; without borrowing when `allow_borrowing` is false.
pub(crate) fn fits(
    tree: &QuotaTree,
    node: NodeId,
    request: &FlavorResourceAmounts,
    allow_borrowing: bool,
) -> bool {
    request.iter().all(|(fr, amount)| {
        *amount <= tree.available_for_queue(node, *fr)
            && (allow_borrowing || tree.usage(node, *fr) + *amount <= tree.nominal(node, *fr))
    })
}

/// Kueue's candidate order: other ClusterQueues first, lower priority, most recently reserved, uid.
pub(super) fn candidate_order(world: &World<'_>, own_cq: u32, a: u32, b: u32) -> Ordering {
    let key = |i: u32| {
        let w = &world.workloads[i as usize];
        let holding = w.holding.as_ref();
        (
            holding.and_then(|h| h.cq) == Some(own_cq),
            w.model.priority,
            Reverse(holding.map(|h| h.reserved_at).unwrap_or(i64::MIN)),
            w.uid.clone(),
        )
    };
    key(a).cmp(&key(b))
}

/// Admitted workloads of `cq` that may be victims of `p`: they use a pair of its request, were not
/// admitted this cycle, and, once `p` has spent its preemption credit, have a strictly lower
/// priority.
///
/// The credit is what makes every run settle. A workload may once take quota from victims of equal
/// or higher priority (reclaiming, fair sharing, `LowerOrNewerEqualPriority`); after that it only
/// preempts strictly lower priorities. There are finitely many first-time preemptions, and every
/// later preemption replaces lower-priority work with higher-priority work, which can only happen
/// finitely often, so a chain of preemptions (A evicts B, B evicts C, C evicts A) cannot go on.
pub(super) fn admitted_users<'w>(
    world: &'w World<'_>,
    cq: u32,
    p: &'w Preemptor<'_>,
) -> impl Iterator<Item = u32> + 'w {
    let credit_spent = p.workload.preemption_credit_spent;
    world.queues[cq as usize]
        .admitted
        .iter()
        .copied()
        .filter(move |&i| {
            let w = &world.workloads[i as usize];
            (!credit_spent || w.model.priority < p.priority)
                && w.holding.as_ref().is_some_and(|h| {
                    h.cycle != world.cycle
                        && h.usage
                            .iter()
                            .any(|(fr, _)| !amount_of(p.request, *fr).is_zero())
                })
        })
}

/// Removes (`sign` = -1) or restores (`sign` = 1) a workload's usage in the simulation.
pub(crate) fn apply(world: &World<'_>, tree: &mut QuotaTree, workload: u32, sign: i64) {
    let w = &world.workloads[workload as usize];
    if let Some(h) = &w.holding
        && let Some(cq) = h.cq
    {
        let node = world.cqs[cq as usize].node;
        for (fr, amount) in &h.usage {
            tree.add_usage(node, *fr, amount.saturating_mul(sign));
        }
    }
}

/// Drops every chosen victim, from the second-to-last back to the first, without which the
/// preemptor still fits. Expects the chosen victims removed from `tree`; leaves the kept ones
/// removed and the dropped ones restored.
pub(super) fn minimise<T: Copy + HasWorkload>(
    world: &World<'_>,
    tree: &mut QuotaTree,
    mut chosen: Vec<T>,
    still_fits: impl Fn(&mut QuotaTree, &[u32]) -> bool,
) -> Vec<T> {
    if chosen.len() < 2 {
        return chosen;
    }
    for i in (0..chosen.len() - 1).rev() {
        let workload = chosen[i].workload();
        apply(world, tree, workload, 1);
        let mut released = workloads_of(&chosen);
        released.remove(i);
        if still_fits(tree, &released) {
            chosen.remove(i);
        } else {
            apply(world, tree, workload, -1);
        }
    }
    chosen
}

/// The workload indexes of chosen victims.
pub(super) fn workloads_of<T: HasWorkload>(chosen: &[T]) -> Vec<u32> {
    chosen.iter().map(HasWorkload::workload).collect()
}

/// Something that names a victim.
pub(super) trait HasWorkload {
    fn workload(&self) -> u32;
}

impl HasWorkload for Target {
    fn workload(&self) -> u32 {
        self.workload
    }
}

#[cfg(test)]
mod tests;
