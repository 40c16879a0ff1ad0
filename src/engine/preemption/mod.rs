//! Preemption: which admitted workloads a preemptor may evict, and the smallest set that makes it
//! fit. [`find_targets`] runs Kueue's classic preemption (`classic`), or fair-sharing preemption
//! (`fair_sharing`) when fair sharing is on; both build on `common` (the preemptor, Kueue's policy
//! predicates and candidate order, the simulation on the quota tree) and on `victim_side` (the rules
//! about the victim's side of the cohort tree).

mod classic;
mod common;
mod fair_sharing;
mod victim_side;

pub(crate) use common::{Preemptor, Target, TopologyNeed, apply, fits};

use crate::engine::model::{BorrowWithinCohortPolicy, ReclaimWithinCohort, WithinClusterQueue};
use crate::engine::quantity::Quantity;
use crate::engine::quota::QuotaTree;
use crate::engine::resources::FlavorResource;
use crate::engine::state::World;

/// Whether preemption is worth simulating for `value` of `fr` in ClusterQueue `cq`. As in Kueue's
/// flavor assignment, only when the queue may preempt within itself and its nominal quota covers
/// `value`, may reclaim within its cohort, or may preempt while borrowing (classic preemption only).
pub(crate) fn possible(
    world: &World<'_>,
    tree: &QuotaTree,
    cq: u32,
    fr: FlavorResource,
    value: Quantity,
) -> bool {
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

/// Finds victims for a preemptor: classic or fair sharing, per the configuration. Empty when the
/// preemptor cannot fit however many allowed victims go.
pub(crate) fn find_targets(
    world: &World<'_>,
    tree: &mut QuotaTree,
    p: &Preemptor<'_>,
) -> Vec<Target> {
    if world.fair_sharing() {
        fair_sharing::find_targets(world, tree, p)
    } else {
        classic::find_targets(world, tree, p)
    }
}
