//! Choosing domains at the placement level and spreading a domain's share over its children
//! (C.7.3 phases 2a and 2b), with Kueue's orders: BestFit takes the most units first (ties:
//! fewest pods, then value order) and swaps the last one for the tightest that holds the rest;
//! least free capacity takes the fewest units first and fills them in turn.
//!
//! Where kuota differs (see the topology module's documentation for the tests):
//! - Among the domains that fit a required or preferred request, kuota picks the one whose pods
//!   end up in the fewest domains at every lower level (e.g. the rack where they fit on 2 hosts
//!   rather than 8), and only then the best fit. Kueue compares the candidates' capacity at the
//!   placement level only.
//! - Below the slice level, children are taken largest first too; Kueue takes them smallest
//!   first there.

use super::super::capacity::Capacity;
use super::super::request::{Algorithm, ResolvedRequest};
use super::super::tree::FlavorTree;

/// A domain at `level` (`None` = the whole topology) with a share in units of that level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    pub level: Option<usize>,
    pub slot: u32,
    pub units: u64,
}

/// Pods placed on one lowest-level domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeafPods {
    pub slot: u32,
    pub pods: u64,
}

/// Placement context for one request on one tree.
pub struct Placer<'a> {
    pub tree: &'a FlavorTree,
    pub cap: &'a Capacity,
    pub resolved: &'a ResolvedRequest,
}

impl Placer<'_> {
    fn unit(&self, level: usize) -> u64 {
        u64::from(self.resolved.unit.get(level).copied().unwrap_or(1).max(1))
    }

    fn leaf_level(&self) -> usize {
        self.tree.depth() - 1
    }

    /// Units held by the domain at (`level`, `slot`); the whole tree for `None`.
    pub fn units(&self, level: Option<usize>, slot: u32) -> u64 {
        match level {
            None => self.cap.root_units,
            Some(l) => self.cap.units_at(l, slot),
        }
    }

    /// The most units any child of (`level`, `slot`) holds.
    fn widest_child(&self, level: usize, slot: u32) -> u64 {
        self.tree
            .children(Some(level), slot)
            .iter()
            .map(|&c| self.cap.units_at(level + 1, c))
            .max()
            .unwrap_or(0)
    }

    /// Children of a domain with the units they hold, in value order.
    fn children(&self, level: Option<usize>, slot: u32) -> Vec<(u32, u64, u64)> {
        let child_level = level.map_or(0, |l| l + 1);
        self.tree
            .children(level, slot)
            .iter()
            .map(|&c| {
                (
                    c,
                    self.cap.units_at(child_level, c),
                    self.cap.pods_at(child_level, c),
                )
            })
            .collect()
    }

    /// The deepest level whose unit is the outermost slice (the lowest level without slices).
    pub fn slice_level(&self) -> usize {
        let outer = self.unit(0);
        (0..=self.leaf_level())
            .rev()
            .find(|l| self.unit(*l) == outer)
            .unwrap_or(0)
    }

    /// Spreads `share` over its children, down to the lowest level; leaves come out in
    /// depth-first (lexicographic) order.
    pub fn descend(&self, share: Share, out: &mut Vec<LeafPods>) {
        self.descend_all(vec![share], out);
    }

    /// Spreads `shares` (domains of one level, in value order) down to the lowest level. Down to
    /// the outermost slice level the children of every share are pooled and filled together, as
    /// Kueue's BestFit descent does: the fewest children that hold the total is never more than
    /// splitting each share on its own. Below it, each slice stays inside its own domain.
    pub fn descend_all(&self, shares: Vec<Share>, out: &mut Vec<LeafPods>) {
        let leaf = self.leaf_level();
        let mut frontier = shares;
        while frontier.first().is_some_and(|s| s.level != Some(leaf)) {
            frontier = self.next_level(&frontier);
        }
        out.extend(frontier.into_iter().map(|s| LeafPods {
            slot: s.slot,
            pods: s.units * self.unit(leaf),
        }));
    }

    /// The shares one level below `frontier` (all at one level, in value order).
    fn next_level(&self, frontier: &[Share]) -> Vec<Share> {
        let Some(first) = frontier.first() else {
            return Vec::new();
        };
        let child_level = first.level.map_or(0, |l| l + 1);
        let child_units = |s: &Share| {
            let parent_unit = s.level.map_or(self.unit(0), |l| self.unit(l));
            s.units * (parent_unit / self.unit(child_level)).max(1)
        };
        let spread = |parents: &[Share], out: &mut Vec<Share>| {
            let need = parents.iter().map(child_units).sum();
            let children: Vec<(u32, u64, u64)> = parents
                .iter()
                .flat_map(|p| self.children(p.level, p.slot))
                .collect();
            let mut picks = self.pick(&children, need);
            picks.sort_unstable_by_key(|(index, _)| *index);
            out.extend(picks.into_iter().map(|(index, units)| Share {
                level: Some(child_level),
                slot: children[index].0,
                units,
            }));
        };
        let mut next = Vec::new();
        if child_level <= self.slice_level() {
            spread(frontier, &mut next);
        } else {
            for share in frontier {
                spread(std::slice::from_ref(share), &mut next);
            }
        }
        next
    }

    /// Which children take how many units: `(index into children, units)`.
    fn pick(&self, children: &[(u32, u64, u64)], need: u64) -> Vec<(usize, u64)> {
        // Sort keys side by side (no indirection while sorting): BestFit takes the largest
        // first, least free capacity the smallest; ties: fewer pods, then value order.
        let best_fit = self.resolved.algorithm == Algorithm::BestFit;
        let mut keyed: Vec<(u64, u64, usize)> = children
            .iter()
            .enumerate()
            .filter(|(_, c)| c.1 > 0)
            .map(|(i, c)| (if best_fit { u64::MAX - c.1 } else { c.1 }, c.2, i))
            .collect();
        keyed.sort_unstable();
        let order: Vec<usize> = keyed.into_iter().map(|k| k.2).collect();
        let mut picks = Vec::new();
        let mut remaining = need;
        let mut used = vec![false; children.len()];
        for (rank, &i) in order.iter().enumerate() {
            if remaining == 0 {
                break;
            }
            if children[i].1 >= remaining && self.resolved.algorithm == Algorithm::BestFit {
                // Best fit for the remainder: the smallest unused child that still holds it.
                let best = order[rank..]
                    .iter()
                    .copied()
                    .filter(|j| !used[*j] && children[*j].1 >= remaining)
                    .min_by(|a, b| {
                        children[*a]
                            .1
                            .cmp(&children[*b].1)
                            .then(children[*a].2.cmp(&children[*b].2))
                            .then(a.cmp(b))
                    })
                    .unwrap_or(i);
                picks.push((best, remaining));
                break;
            }
            let take = children[i].1.min(remaining);
            used[i] = true;
            picks.push((i, take));
            remaining -= take;
        }
        picks
    }

    /// How many domains a share would use at each level below it: the locality cost that ranks
    /// candidates (fewer at the next level first, then the level after, ...).
    pub fn cost(&self, share: Share) -> Vec<usize> {
        let leaf = self.leaf_level();
        let mut counts = Vec::new();
        let mut frontier = vec![share];
        while frontier.first().is_some_and(|s| s.level != Some(leaf)) {
            frontier = self.next_level(&frontier);
            counts.push(frontier.len());
        }
        counts
    }

    /// Domains at `level` in value order, with their units.
    pub fn candidates(&self, level: usize) -> Vec<(u32, u64)> {
        self.tree
            .level_order(level)
            .into_iter()
            .map(|s| (s, self.cap.units_at(level, s)))
            .collect()
    }

    /// The best single domain at `level` holding `need` units, if any.
    pub fn best_single(&self, level: usize, need: u64) -> Option<Share> {
        let fitting: Vec<(usize, u32, u64)> = self
            .candidates(level)
            .into_iter()
            .enumerate()
            .filter(|(_, (_, units))| *units >= need)
            .map(|(pos, (slot, units))| (pos, slot, units))
            .collect();
        let share = |slot| Share {
            level: Some(level),
            slot,
            units: need,
        };
        match self.resolved.algorithm {
            // Least capacity, then fewest pods, then value order (Kueue's tie-breaks).
            Algorithm::LeastFree => fitting
                .iter()
                .min_by_key(|f| (f.2, self.cap.pods_at(level, f.1), f.0))
                .map(|f| share(f.1)),
            Algorithm::BestFit => {
                // Tie-break order first (least capacity, fewest pods, value order); then the
                // first candidate with the lowest locality cost wins. A cost of one domain per
                // level cannot be beaten, so the search stops there, and a candidate whose
                // next level needs more children than the best cost so far is skipped unseen.
                let child_need = need
                    * (self.unit(level) / self.unit((level + 1).min(self.leaf_level()))).max(1);
                let lower_bound = |widest: u64| {
                    if widest == 0 {
                        usize::MAX
                    } else {
                        child_need.div_ceil(widest) as usize
                    }
                };
                let mut fitting: Vec<(u64, u64, usize, u32, u64)> = fitting
                    .into_iter()
                    .map(|(pos, slot, units)| {
                        (
                            units,
                            self.cap.pods_at(level, slot),
                            pos,
                            slot,
                            self.widest_child(level, slot),
                        )
                    })
                    .collect();
                fitting.sort_unstable();
                let global_bound = lower_bound(fitting.iter().map(|f| f.4).max().unwrap_or(0));
                let mut best: Option<(Vec<usize>, u32)> = None;
                for &(_, _, _, slot, widest) in &fitting {
                    if let Some((best_cost, _)) = &best
                        && best_cost.first().is_some_and(|b| lower_bound(widest) > *b)
                    {
                        continue;
                    }
                    let cost = self.cost(share(slot));
                    let unbeatable = cost.iter().all(|c| *c <= 1) || cost == [global_bound];
                    if best.as_ref().is_none_or(|(b, _)| cost < *b) {
                        best = Some((cost, slot));
                    }
                    if unbeatable {
                        break;
                    }
                }
                best.map(|(_, slot)| share(slot))
            }
        }
    }

    /// Several domains at `level` that together hold `need` units (used when no single domain
    /// does and the request may spread): BestFit takes the largest first with a best-fit last one,
    /// LeastFree the least free first.
    pub fn spread(&self, level: usize, need: u64) -> Vec<Share> {
        let candidates = self.candidates(level);
        let as_children: Vec<(u32, u64, u64)> = candidates
            .iter()
            .map(|&(slot, units)| (slot, units, self.cap.pods_at(level, slot)))
            .collect();
        let mut picks = self.pick(&as_children, need);
        picks.sort_unstable_by_key(|(index, _)| *index);
        picks
            .into_iter()
            .map(|(index, units)| Share {
                level: Some(level),
                slot: as_children[index].0,
                units,
            })
            .collect()
    }
}
