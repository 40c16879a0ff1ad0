//! Quota held for waiting workloads, as Kueue reserves it for a preemptor without targets: a
//! workload that needs preemption but finds no victims, in a ClusterQueue that cannot always reclaim
//! its quota (`reclaimWithinCohort` is not `Any`), holds the capacity it is owed for the rest of the
//! cycle, so lower workloads of other queues cannot take it.
//!
//! A hold is usage added to the quota tree for the cycle only. It keeps out workloads that would fit
//! or preempt their way in elsewhere, but it never makes anyone preempt more: workloads are nominated
//! with every hold lifted, and an entry is turned away (without evicting anything) when it does not
//! fit beside the holds. A queue's own holds are lifted while its own workloads are processed, as
//! Kueue evaluates those in later cycles, when the hold is gone. Every hold is removed when the cycle
//! ends, so none reaches a later cycle or a workload's status.

use super::flavor::Assignment;
use super::model::ReclaimWithinCohort;
use super::quantity::Quantity;
use super::quota::{NodeId, QuotaTree};
use super::resources::{FlavorResource, FlavorResourceAmounts, Interner, amount_of};
use super::state::CqInfo;

/// The holds of one cycle: (ClusterQueue, amounts), each applied to the tree while it is listed.
#[derive(Debug, Default)]
pub struct Holds {
    held: Vec<(u32, FlavorResourceAmounts)>,
}

impl Holds {
    /// Lifts (`sign` -1) or puts back (`sign` 1) the holds of `cq`, or of every queue with `None`.
    pub fn apply(&self, tree: &mut QuotaTree, cq: Option<u32>, sign: i64) {
        for (holder, amounts) in &self.held {
            if cq.is_some_and(|c| c != *holder) {
                continue;
            }
            for (fr, amount) in amounts {
                tree.add_usage(NodeId(*holder), *fr, amount.saturating_mul(sign));
            }
        }
    }

    /// Whether any hold sits in the tree rooted at `root`.
    pub fn any_in(&self, tree: &QuotaTree, root: NodeId) -> bool {
        self.held.iter().any(|(c, _)| tree.root(NodeId(*c)) == root)
    }

    /// Records what `cq` holds for `assignment`: up to nominal quota, or up to nominal quota plus
    /// borrowing limit when the assignment borrows. Nothing for a queue that can always reclaim or
    /// has no cohort. Called while `cq`'s own holds are lifted: the new one is applied when they are
    /// put back.
    pub fn add(&mut self, tree: &QuotaTree, info: &CqInfo, cq: u32, assignment: &Assignment) {
        if !info.has_cohort || info.preemption.reclaim_within_cohort == ReclaimWithinCohort::Any {
            return;
        }
        let node = NodeId(cq);
        let already = |fr: FlavorResource| {
            self.held
                .iter()
                .filter(|(c, _)| *c == cq)
                .fold(Quantity::ZERO, |sum, (_, a)| sum + amount_of(a, fr))
        };
        let amounts: FlavorResourceAmounts = assignment
            .usage
            .iter()
            .filter_map(|(fr, request)| {
                let used = tree.usage(node, *fr) + already(*fr);
                let ceiling = if assignment.level == 0 {
                    Some(tree.nominal(node, *fr))
                } else {
                    tree.borrowing_limit(node, *fr)
                        .map(|limit| tree.nominal(node, *fr) + limit)
                };
                let amount = match ceiling {
                    Some(ceiling) => (*request).min(ceiling - used).clamp_non_negative(),
                    None => *request,
                };
                (!amount.is_zero()).then_some((*fr, amount))
            })
            .collect();
        if !amounts.is_empty() {
            self.held.push((cq, amounts));
        }
    }

    /// Why `usage` does not fit in `node` beside the holds (the tree as it stands).
    pub fn blocked_message(
        &self,
        tree: &QuotaTree,
        names: &Interner,
        cqs: &[CqInfo],
        node: NodeId,
        usage: &FlavorResourceAmounts,
    ) -> String {
        let short: Vec<String> = usage
            .iter()
            .filter_map(|(fr, amount)| {
                let more = *amount - tree.available_for_queue(node, *fr);
                let (flavor, resource) = names.pair_of(*fr);
                let resource = names.resource_name(resource);
                (more > Quantity::ZERO).then(|| {
                    format!(
                        "insufficient unused quota for {resource} in flavor {}, {} more needed",
                        names.flavor_name(flavor),
                        more.display_for(resource)
                    )
                })
            })
            .collect();
        let root = tree.root(node);
        let mut holders: Vec<&str> = self
            .held
            .iter()
            .filter(|(c, _)| tree.root(NodeId(*c)) == root)
            .map(|(c, _)| cqs[*c as usize].name.as_str())
            .collect();
        holders.sort_unstable();
        holders.dedup();
        format!(
            "{}; quota is held for workloads waiting in ClusterQueue {}",
            short.join(", "),
            holders.join(", ")
        )
    }

    /// Removes every hold from the tree.
    pub fn release(&mut self, tree: &mut QuotaTree) {
        self.apply(tree, None, -1);
        self.held.clear();
    }
}
