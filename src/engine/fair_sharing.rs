//! Kueue's fair sharing: the dominant resource share of a node, and the admission tournament that
//! orders one round's candidates across the ClusterQueues of a cohort tree.

use std::cmp::Ordering;

use super::features::Feature;
use super::quantity::Quantity;
use super::quota::{NodeId, QuotaTree};
use super::resources::{FlavorResource, FlavorResourceAmounts};
use super::state::World;

/// A share: `borrowed × 1000 / lendable` of the dominant resource, divided by the weight.
/// `f64::INFINITY` for a borrower with weight 0 or with nothing lendable.
pub type Share = f64;

fn weight(world: &World<'_>, node: NodeId) -> Option<Quantity> {
    let i = node.index();
    if i < world.cqs.len() {
        world.cqs[i].weight
    } else {
        world
            .cohort_weights
            .get(i - world.cqs.len())
            .copied()
            .flatten()
    }
}

/// Dominant resource share of `node` with the tree's current usage (0 for a root or a node that
/// does not borrow).
pub fn dominant_share(world: &World<'_>, tree: &QuotaTree, node: NodeId) -> Share {
    let Some(parent) = tree.parent(node) else {
        return 0.0;
    };
    let resources = world.names.resource_count();
    let mut borrowed = vec![Quantity::ZERO; resources];
    let mut lendable = vec![Quantity::ZERO; resources];
    for i in 0..world.names.pair_count() {
        let fr = FlavorResource(i as u32);
        let (_, resource) = world.names.pair_of(fr);
        let r = resource.0 as usize;
        borrowed[r] += (tree.usage(node, fr) - tree.subtree_quota(node, fr)).clamp_non_negative();
        lendable[r] += tree.potential_available(parent, fr);
    }
    let mut dominant: Share = 0.0;
    for (b, l) in borrowed.iter().zip(&lendable) {
        if b.is_zero() {
            continue;
        }
        let ratio = if *l <= Quantity::ZERO {
            f64::INFINITY
        } else {
            b.nanos() as f64 * 1000.0 / l.nanos() as f64
        };
        dominant = dominant.max(ratio);
    }
    if dominant == 0.0 {
        return 0.0;
    }
    let weight = weight(world, node).map_or(1.0, |w| w.nanos() as f64 / 1e9);
    if weight <= 0.0 {
        f64::INFINITY
    } else {
        dominant / weight
    }
}

/// Adds (`sign` 1) or removes (`sign` -1) `usage` at `node`.
pub fn apply_usage(tree: &mut QuotaTree, node: NodeId, usage: &FlavorResourceAmounts, sign: i64) {
    for (fr, amount) in usage {
        tree.add_usage(node, *fr, amount.saturating_mul(sign));
    }
}

/// One round's candidate from one ClusterQueue.
#[derive(Clone, Copy, Debug)]
pub struct Contender<'a> {
    pub cq: u32,
    pub priority: i32,
    pub creation: i64,
    pub usage: &'a FlavorResourceAmounts,
}

/// How a contender looks from the cohort above `side`: whether `side` would borrow, and its share,
/// both with the contender's usage added.
fn standing(
    world: &World<'_>,
    tree: &mut QuotaTree,
    c: &Contender<'_>,
    side: NodeId,
) -> (bool, Share) {
    let node = world.cqs[c.cq as usize].node;
    apply_usage(tree, node, c.usage, 1);
    let borrowing = c
        .usage
        .iter()
        .any(|(fr, _)| tree.usage(side, *fr) > tree.subtree_quota(side, *fr));
    let share = dominant_share(world, tree, side);
    apply_usage(tree, node, c.usage, -1);
    (borrowing, share)
}

/// Picks the tournament winner among `contenders` (all in the tree rooted at `root`): each Cohort,
/// from the bottom up, keeps the child candidate that does not borrow (gate
/// `FairSharingPrioritizeNonBorrowing`), then has the lower share, then the higher priority, then
/// the earlier creation.
pub fn tournament_winner(
    world: &World<'_>,
    tree: &mut QuotaTree,
    root: NodeId,
    contenders: &[Contender<'_>],
) -> Option<usize> {
    let by_cq: Vec<Option<usize>> = {
        let mut v = vec![None; world.cqs.len()];
        for (i, c) in contenders.iter().enumerate() {
            v[c.cq as usize] = Some(i);
        }
        v
    };
    winner_below(world, tree, root, contenders, &by_cq)
}

fn winner_below(
    world: &World<'_>,
    tree: &mut QuotaTree,
    node: NodeId,
    contenders: &[Contender<'_>],
    by_cq: &[Option<usize>],
) -> Option<usize> {
    if node.index() < world.cqs.len() {
        return by_cq[node.index()];
    }
    let prefer_non_borrowing = world
        .config
        .features
        .enabled(Feature::FairSharingPrioritizeNonBorrowing);
    let children: Vec<NodeId> = tree.children(node).to_vec();
    let mut best: Option<(usize, bool, Share)> = None;
    for child in children {
        let Some(candidate) = winner_below(world, tree, child, contenders, by_cq) else {
            continue;
        };
        let (borrowing, share) = standing(world, tree, &contenders[candidate], child);
        let better = match best {
            None => true,
            Some((b, b_borrowing, b_share)) => {
                let (x, y) = (&contenders[candidate], &contenders[b]);
                let order = if prefer_non_borrowing {
                    borrowing.cmp(&b_borrowing)
                } else {
                    Ordering::Equal
                };
                order
                    .then(share.total_cmp(&b_share))
                    .then(y.priority.cmp(&x.priority))
                    .then(x.creation.cmp(&y.creation))
                    == Ordering::Less
            }
        };
        if better {
            best = Some((candidate, borrowing, share));
        }
    }
    best.map(|(c, _, _)| c)
}

#[cfg(test)]
mod tests;
