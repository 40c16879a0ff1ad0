//! Classic preemption (C.4), with hierarchical reclaim: which admitted workloads a preemptor may
//! evict, and the smallest set, in candidate order, that makes it fit.
//!
//! The simulation removes candidates' usage from the live quota tree and always puts it back before
//! returning; the caller then evicts the chosen targets for real.

use std::cmp::{Ordering, Reverse};

use super::decision::{PreemptionReason, WorkloadKey};
use super::fair_preemption;
use super::fair_sharing::apply_usage;
use super::flavor::{Mode, TopologyNeed};
use super::model::{BorrowWithinCohortPolicy, ReclaimWithinCohort, WithinClusterQueue};
use super::quantity::Quantity;
use super::quota::{NodeId, QuotaTree};
use super::resources::{Fr, FrAmounts, amount_of};
use super::state::{Wl, World};
use super::topology_seam::{TopologyQuery, TopologyVerdict};
use super::victim_side::{leaves_side_at_quota, side_borrowed_before_cycle};

/// A chosen victim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    pub workload: u32,
    pub reason: PreemptionReason,
}

/// The preemptor as the policies see it.
#[derive(Clone, Copy, Debug)]
pub struct Preemptor<'a> {
    pub cq: u32,
    pub workload: &'a Wl,
    pub priority: i32,
    pub creation: i64,
    pub request: &'a FrAmounts,
    /// Pod sets whose placement the topology seam must confirm with the victims gone.
    pub topology: &'a [TopologyNeed],
}

impl<'a> Preemptor<'a> {
    pub fn new(cq: u32, wl: &'a Wl, request: &'a FrAmounts, topology: &'a [TopologyNeed]) -> Self {
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
pub fn topology_fits(world: &World<'_>, p: &Preemptor<'_>, released: &[u32]) -> bool {
    if p.topology.is_empty() {
        return true;
    }
    let released: Vec<WorkloadKey> = released
        .iter()
        .map(|i| world.workloads[*i as usize].key.clone())
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
pub fn within_queue_allows(policy: WithinClusterQueue, p: &Preemptor<'_>, v: &Wl) -> bool {
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
pub fn reclaim_allows(policy: ReclaimWithinCohort, p: &Preemptor<'_>, v: &Wl) -> bool {
    match policy {
        ReclaimWithinCohort::Never => false,
        ReclaimWithinCohort::LowerPriority => p.priority > v.model.priority,
        ReclaimWithinCohort::Any => true,
    }
}

/// Whether preemption is worth simulating for `value` of `fr` in ClusterQueue `cq` (C.2 4.2).
pub fn possible(world: &World<'_>, tree: &QuotaTree, cq: u32, fr: Fr, value: Quantity) -> bool {
    let info = &world.cqs[cq as usize];
    let policy = info.preemption;
    let within = policy.within_cluster_queue != WithinClusterQueue::Never
        && tree.nominal(info.node, fr) >= value;
    let reclaim = policy.reclaim_within_cohort != ReclaimWithinCohort::Never && info.has_cohort;
    let while_borrowing = !world.fair_sharing()
        && policy.borrow_within_cohort.policy != BorrowWithinCohortPolicy::Never
        && info.has_cohort;
    within || reclaim || while_borrowing
}

/// Whether the request fits in `cq` now; without borrowing when `allow_borrowing` is false.
pub fn fits(tree: &QuotaTree, node: NodeId, request: &FrAmounts, allow_borrowing: bool) -> bool {
    request.iter().all(|(fr, amount)| {
        *amount <= tree.available_for_queue(node, *fr)
            && (allow_borrowing || tree.usage(node, *fr) + *amount <= tree.nominal(node, *fr))
    })
}

/// The lowest node on the preemptor's path whose subtree would stay within its own quota with the
/// request added: the preemptor's side is entitled to that capacity.
fn entitled_node(tree: &QuotaTree, node: NodeId, request: &FrAmounts) -> Option<NodeId> {
    let mut remaining: Vec<(Fr, Quantity)> = request.clone();
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

/// Candidate order (C.4): other ClusterQueues first, lower priority, most recently reserved, uid.
pub fn candidate_order(world: &World<'_>, own_cq: u32, a: u32, b: u32) -> Ordering {
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
pub fn admitted_users<'w>(
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
pub fn apply(world: &World<'_>, tree: &mut QuotaTree, workload: u32, sign: i64) {
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

/// Finds victims for a preemptor: classic or fair sharing, per the configuration. Empty when the
/// preemptor cannot fit however many allowed victims go.
pub fn find_targets(world: &World<'_>, tree: &mut QuotaTree, p: &Preemptor<'_>) -> Vec<Target> {
    if world.fair_sharing() {
        fair_preemption::find_targets(world, tree, p)
    } else {
        classic_targets(world, tree, p)
    }
}

/// How preemption would go for `request` of `wl`: Reclaim, Preempt or NoCandidates, with the
/// victims the simulation chose.
pub fn oracle(
    world: &World<'_>,
    tree: &mut QuotaTree,
    cq: u32,
    wl: &Wl,
    request: &FrAmounts,
    topology: &[TopologyNeed],
) -> (Mode, Vec<Target>) {
    let p = Preemptor::new(cq, wl, request, topology);
    let targets = find_targets(world, tree, &p);
    let mode = if targets.is_empty() {
        Mode::NoCandidates
    } else if targets
        .iter()
        .all(|t| t.reason != PreemptionReason::InClusterQueue)
    {
        Mode::Reclaim
    } else {
        Mode::Preempt
    };
    (mode, targets)
}

fn classic_targets(world: &World<'_>, tree: &mut QuotaTree, p: &Preemptor<'_>) -> Vec<Target> {
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
            let outside_entitled = entitled.is_some_and(|n| !tree.path(cq_node).contains(&n));
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

/// Drops every chosen victim, from the second-to-last back to the first, without which the
/// preemptor still fits. Expects the chosen victims removed from `tree`; leaves the kept ones
/// removed and the dropped ones restored.
pub fn minimise<T: Copy + HasWorkload>(
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
pub fn workloads_of<T: HasWorkload>(chosen: &[T]) -> Vec<u32> {
    chosen.iter().map(HasWorkload::workload).collect()
}

/// Something that names a victim.
pub trait HasWorkload {
    fn workload(&self) -> u32;
}

impl HasWorkload for Candidate {
    fn workload(&self) -> u32 {
        self.workload
    }
}

impl HasWorkload for Target {
    fn workload(&self) -> u32 {
        self.workload
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::engine::decision::{PendingReason, WorkloadKey};
    use crate::engine::model::Workload;

    fn victim(priority: i32, creation: i64) -> Wl {
        Wl {
            model: Workload {
                priority,
                creation,
                ..Default::default()
            },
            key: WorkloadKey::default(),
            uid: Arc::from("v"),
            per_pod: Vec::new(),
            cq: None,
            blocked: None,
            holding: None,
            pending: (PendingReason::PendingEvaluation, Arc::from("")),
            last_eviction: None,
            finished: false,
            removed: false,
            eq_class: 0,
            local_queue_stop: Default::default(),
            preemption_credit_spent: false,
        }
    }

    #[test]
    fn policy_predicates() {
        let request = FrAmounts::new();
        let preemptor = victim(5, 10);
        let p = Preemptor::new(0, &preemptor, &request, &[]);
        let lower = victim(4, 20);
        let equal_newer = victim(5, 11);
        let equal_older = victim(5, 9);
        assert!(within_queue_allows(
            WithinClusterQueue::LowerPriority,
            &p,
            &lower
        ));
        assert!(!within_queue_allows(
            WithinClusterQueue::LowerPriority,
            &p,
            &equal_newer
        ));
        assert!(within_queue_allows(
            WithinClusterQueue::LowerOrNewerEqualPriority,
            &p,
            &equal_newer
        ));
        assert!(!within_queue_allows(
            WithinClusterQueue::LowerOrNewerEqualPriority,
            &p,
            &equal_older
        ));
        assert!(!within_queue_allows(WithinClusterQueue::Never, &p, &lower));
        assert!(reclaim_allows(ReclaimWithinCohort::Any, &p, &equal_older));
        assert!(!reclaim_allows(
            ReclaimWithinCohort::LowerPriority,
            &p,
            &equal_older
        ));
        assert!(!reclaim_allows(ReclaimWithinCohort::Never, &p, &lower));
    }
}
