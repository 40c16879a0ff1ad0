//! Balanced placement for preferred requests (gate `TASBalancedPlacement`, off by default as in
//! Kueue), following Kueue's algorithm:
//!
//! 1. For every parent of the preferred level (the whole topology at the top level), a greedy
//!    fill of its grandchildren (its children when the preferred level is the slice level) says
//!    how many domains the pod set needs there; the *threshold* is the most slices every one of
//!    them can take: `min(slices / domains, slices of the last one filled)`.
//! 2. Children holding fewer slices than the threshold are pruned; the parent with the highest
//!    threshold wins, then the one needing the fewest domains at the preferred level.
//! 3. Among the winner's domains, the fewest that hold the pod set are chosen, with the least
//!    capacity left over; when the preferred level is above the slice level, domains whose
//!    children are more even (higher entropy) go first, and the same choice is made again
//!    among their children.
//! 4. Every chosen domain takes the threshold, and the remainder goes to the fullest first:
//!    12 pods on two domains of 10 become 6 + 6, not 10 + 2.
//!
//! Returns `None` to fall back to best fit (no threshold above zero, or the preferred level is
//! a slice level with levels below it, where Kueue's pruning leaves nothing).

use std::collections::BTreeMap;

use super::select::{Placer, Share};

/// A domain as balancing sees it: capacity in units and pods, and its position in value order.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    slot: u32,
    units: u64,
    pods: u64,
    pos: usize,
}

/// A domain of the preferred level with its children, pruned to a threshold.
#[derive(Clone, Debug)]
struct Pruned {
    domain: Candidate,
    children: Vec<Candidate>,
}

/// Shares at the level they were balanced on for `need` units at `level`, or `None`.
pub fn balanced_shares(placer: &Placer<'_>, level: usize, need: u64) -> Option<Vec<Share>> {
    let leaf = placer.tree.depth().checked_sub(1)?;
    let slice_level = placer.slice_level();
    if need == 0 || (level >= slice_level && level != leaf) {
        return None;
    }
    let view = View::new(placer);
    let groups: Vec<Vec<u32>> = if level == 0 {
        vec![placer.tree.roots.clone()]
    } else {
        placer
            .tree
            .level_order(level - 1)
            .into_iter()
            .map(|parent| placer.tree.children(Some(level - 1), parent).to_vec())
            .collect()
    };
    let mut best: Option<(u64, usize, Vec<Pruned>)> = None;
    for siblings in groups {
        let domains: Vec<Pruned> = siblings
            .iter()
            .map(|&slot| Pruned {
                domain: view.candidate(level, slot),
                children: if level < leaf {
                    placer
                        .tree
                        .children(Some(level), slot)
                        .iter()
                        .map(|&c| view.candidate(level + 1, c))
                        .collect()
                } else {
                    Vec::new()
                },
            })
            .collect();
        let lower: Vec<Candidate> = if level < slice_level {
            domains.iter().flat_map(|d| d.children.clone()).collect()
        } else {
            domains.iter().map(|d| d.domain).collect()
        };
        let Some((used, last)) = greedy(&lower, need) else {
            continue;
        };
        let threshold = (need / used as u64).min(last.units);
        if best.as_ref().is_some_and(|(t, _, _)| threshold < *t) {
            continue;
        }
        let pruned: Vec<Pruned> = domains
            .into_iter()
            .map(|d| prune(d, threshold, level < leaf))
            .collect();
        let tops: Vec<Candidate> = pruned.iter().map(|d| d.domain).collect();
        let Some((count, _)) = greedy(&tops, need) else {
            continue;
        };
        let better = best
            .as_ref()
            .is_none_or(|(t, c, _)| threshold > *t || count < *c);
        if better {
            best = Some((threshold, count, pruned));
        }
    }
    let (threshold, _, pruned) = best.filter(|(t, _, _)| *t > 0)?;
    let unit = u64::from(
        placer
            .resolved
            .unit
            .get(slice_level)
            .copied()
            .unwrap_or(1)
            .max(1),
    );
    let (fit_level, domains) = if level < slice_level {
        let tops: Vec<Candidate> = pruned.iter().map(|d| d.domain).collect();
        let entropy: Vec<f64> = pruned
            .iter()
            .map(|d| children_entropy(&d.children))
            .collect();
        let chosen = optimal_set(&tops, need, unit, Some(&entropy))?;
        let children: Vec<Candidate> = chosen
            .iter()
            .flat_map(|i| pruned[*i].children.clone())
            .collect();
        (level + 1, children)
    } else {
        (level, pruned.iter().map(|d| d.domain).collect())
    };
    spread_evenly(&domains, need, unit, threshold).map(|shares| {
        shares
            .into_iter()
            .map(|(slot, units)| Share {
                level: Some(fit_level),
                slot,
                units,
            })
            .collect()
    })
}

/// Capacities and value-order positions of the domains of one placement.
struct View<'a> {
    placer: &'a Placer<'a>,
    /// `[level][slot]` position in value order.
    pos: Vec<Vec<usize>>,
}

impl<'a> View<'a> {
    fn new(placer: &'a Placer<'a>) -> Self {
        let pos = (0..placer.tree.depth())
            .map(|level| {
                let mut at = vec![usize::MAX; placer.tree.arena[level].len()];
                for (i, slot) in placer.tree.level_order(level).into_iter().enumerate() {
                    at[slot as usize] = i;
                }
                at
            })
            .collect();
        View { placer, pos }
    }

    fn candidate(&self, level: usize, slot: u32) -> Candidate {
        Candidate {
            slot,
            units: self.placer.cap.units_at(level, slot),
            pods: self.placer.cap.pods_at(level, slot),
            pos: self.pos[level][slot as usize],
        }
    }
}

/// BestFit order: most units, then fewest pods, then value order.
fn best_fit_order(domains: &[Candidate]) -> Vec<Candidate> {
    let mut sorted = domains.to_vec();
    sorted.sort_by(|a, b| {
        b.units
            .cmp(&a.units)
            .then(a.pods.cmp(&b.pods))
            .then(a.pos.cmp(&b.pos))
    });
    sorted
}

/// How many domains a BestFit greedy fill of `need` units uses, and the last one filled.
fn greedy(domains: &[Candidate], need: u64) -> Option<(usize, Candidate)> {
    let mut remaining = need;
    let mut used = 0;
    for domain in best_fit_order(domains) {
        if remaining == 0 || domain.units == 0 {
            break;
        }
        used += 1;
        remaining = remaining.saturating_sub(domain.units);
        if remaining == 0 {
            return Some((used, domain));
        }
    }
    None
}

/// Drops the children below `threshold` and then the domain itself if it falls below it.
fn prune(mut domain: Pruned, threshold: u64, has_children: bool) -> Pruned {
    if has_children {
        for child in &mut domain.children {
            if child.units < threshold {
                (child.units, child.pods) = (0, 0);
            }
        }
        domain.domain.units = domain.children.iter().map(|c| c.units).sum();
        domain.domain.pods = domain.children.iter().map(|c| c.pods).sum();
    }
    if domain.domain.units < threshold {
        (domain.domain.units, domain.domain.pods) = (0, 0);
        for child in &mut domain.children {
            (child.units, child.pods) = (0, 0);
        }
    }
    domain
}

/// Shannon entropy of the children's pod capacities: higher when they are more even.
fn children_entropy(children: &[Candidate]) -> f64 {
    let total: u64 = children.iter().map(|c| c.pods).sum();
    if total == 0 {
        return 0.0;
    }
    children
        .iter()
        .filter(|c| c.pods > 0)
        .map(|c| {
            let p = c.pods as f64 / total as f64;
            -p * p.log2()
        })
        .sum()
}

/// Indexes of the fewest `domains` (as many as a greedy fill needs) that hold `need` units of
/// `unit` pods, with the least pod capacity left over; the first such set found in the order of
/// `entropy` (most units, then most even children, then value order) or of value order.
fn optimal_set(
    domains: &[Candidate],
    need: u64,
    unit: u64,
    entropy: Option<&[f64]>,
) -> Option<Vec<usize>> {
    let (size, _) = greedy(domains, need)?;
    let mut order: Vec<usize> = (0..domains.len()).collect();
    match entropy {
        Some(entropy) => order.sort_by(|a, b| {
            domains[*b]
                .units
                .cmp(&domains[*a].units)
                .then(entropy[*b].total_cmp(&entropy[*a]))
                .then(domains[*a].pos.cmp(&domains[*b].pos))
        }),
        None => order.sort_by_key(|i| domains[*i].pos),
    }
    // by_size[k]: pods still to place → the first set of k domains leaving that many.
    let start = i128::from(need) * i128::from(unit);
    let mut by_size: Vec<BTreeMap<i128, Vec<usize>>> = vec![BTreeMap::new(); size + 1];
    by_size[0].insert(start, Vec::new());
    for &index in &order {
        let domain = domains[index];
        if domain.units == 0 {
            continue;
        }
        for k in (1..=size).rev() {
            let (before, after) = by_size.split_at_mut(k);
            for (left, set) in &before[k - 1] {
                if *left <= 0 {
                    continue;
                }
                let rest = left - i128::from(domain.pods);
                after[0].entry(rest).or_insert_with(|| {
                    let mut set = set.clone();
                    set.push(index);
                    set
                });
            }
        }
    }
    by_size[size]
        .range(..=0)
        .next_back()
        .map(|(_, set)| set.clone())
}

/// `(slot, units)` for the optimal set of `domains`: each takes `threshold`, and the remainder
/// goes to the fullest first. `None` when the set cannot take the pod set that way.
fn spread_evenly(
    domains: &[Candidate],
    need: u64,
    unit: u64,
    threshold: u64,
) -> Option<Vec<(u32, u64)>> {
    let chosen = optimal_set(domains, need, unit, None)?;
    let count = chosen.len() as u64;
    if need < count * threshold {
        return None;
    }
    let picked: Vec<Candidate> = chosen.iter().map(|i| domains[*i]).collect();
    let mut extra = need - count * threshold;
    let mut shares = Vec::with_capacity(picked.len());
    for domain in best_fit_order(&picked) {
        let take = domain.units.saturating_sub(threshold).min(extra);
        extra -= take;
        shares.push((domain.pos, domain.slot, threshold + take));
    }
    if extra > 0 {
        return None;
    }
    shares.sort_unstable();
    Some(
        shares
            .into_iter()
            .map(|(_, slot, units)| (slot, units))
            .collect(),
    )
}
