//! Balanced placement for preferred requests (gate `TASBalancedPlacement`, off by default as in
//! Kueue), following Kueue's algorithm:
//!
//! 1. For every parent of the preferred level (the whole topology at the top level), a greedy
//!    fill of its grandchildren (its children when the preferred level is the lowest one) says
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
//! A pod-set group's leader counts as Kueue counts it: the first domain filled is one that can
//! host the leader (with the worker slices left beside it), and a domain keeps its leader room
//! only while those slices reach the threshold; leader room is never reserved on every node.
//!
//! `None` falls back to best fit: no threshold above zero, a chosen set that cannot take the
//! threshold everywhere, or a preferred slice level with levels below it (where Kueue's pruning
//! leaves nothing).

use std::collections::BTreeMap;

use super::select::{Placer, Share};

/// What a pod-set group's leader costs the workers in every domain (`u64::MAX` where no node
/// takes it): `[level][slot]` worker units and worker pods.
pub struct LeaderCost<'a> {
    pub units: &'a [Vec<u64>],
    pub pods: &'a [Vec<u64>],
}

/// A domain as balancing sees it: capacity in units and pods, the same beside the leader, and
/// its position in value order.
#[derive(Clone, Copy, Debug, Default)]
struct Candidate {
    slot: u32,
    units: u64,
    pods: u64,
    leader: bool,
    units_with_leader: u64,
    pods_with_leader: u64,
    pos: usize,
}

impl Candidate {
    fn clear(&mut self) {
        *self = Candidate {
            slot: self.slot,
            pos: self.pos,
            ..Candidate::default()
        };
    }

    fn clear_leader(&mut self) {
        self.leader = false;
        self.units_with_leader = 0;
        self.pods_with_leader = 0;
    }
}

/// A domain of the preferred level with its children, pruned to a threshold.
#[derive(Clone, Debug)]
struct Pruned {
    domain: Candidate,
    children: Vec<Candidate>,
}

/// Shares of `need` units balanced for a request preferring `level`, or `None`.
pub fn balanced_shares(placer: &Placer<'_>, level: usize, need: u64) -> Option<Vec<Share>> {
    let (shares, _) = balance(placer, level, need, None)?;
    Some(shares)
}

/// Shares of a pod-set group's workers and the index of the share whose domain hosts the
/// leader, or `None`.
pub fn balanced_group_shares(
    placer: &Placer<'_>,
    level: usize,
    need: u64,
    leader: &LeaderCost<'_>,
) -> Option<(Vec<Share>, usize)> {
    let (shares, host) = balance(placer, level, need, Some(leader))?;
    Some((shares, host?))
}

fn balance(
    placer: &Placer<'_>,
    level: usize,
    need: u64,
    leader: Option<&LeaderCost<'_>>,
) -> Option<(Vec<Share>, Option<usize>)> {
    let leaf = placer.tree.depth().checked_sub(1)?;
    let slice_level = placer.slice_level();
    if need == 0 || (level >= slice_level && level != leaf) {
        return None;
    }
    let with_leader = leader.is_some();
    let view = View::new(placer, leader);
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
    let best_threshold =
        |best: &Option<(u64, usize, Vec<Pruned>)>| best.as_ref().map_or(0, |b| b.0);
    for siblings in groups {
        // A parent whose widest domains cannot beat the best so far is skipped unseen: every
        // domain gives at most its own units, so the threshold is at most `need / used` with
        // `used >= need / widest` below, and the domains used at `level` at least
        // `need / widest` there.
        if let Some((t, c, _)) = &best {
            let widest = |level: usize, slots: &mut dyn Iterator<Item = u32>| {
                slots
                    .map(|s| placer.cap.units_at(level, s))
                    .max()
                    .unwrap_or(0)
            };
            let widest_here = widest(level, &mut siblings.iter().copied());
            let widest_lower = if level < slice_level {
                let children = siblings
                    .iter()
                    .flat_map(|s| placer.tree.children(Some(level), *s).iter().copied());
                widest(level + 1, &mut children.into_iter())
            } else {
                widest_here
            };
            if widest_lower == 0 || widest_here == 0 {
                continue;
            }
            let bound = need / need.div_ceil(widest_lower);
            if bound < *t || (bound == *t && need.div_ceil(widest_here) as usize >= *c) {
                continue;
            }
        }
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
        let Some(fill) = greedy(&lower, need, with_leader) else {
            continue;
        };
        let mut threshold = need / fill.used as u64;
        if let Some(first) = fill.leader_domain {
            threshold = threshold.min(first.units_with_leader);
        }
        if let Some(last) = fill.last {
            threshold = threshold.min(last.units);
        }
        let reserving = match fill.last {
            Some(last) if with_leader => threshold.min(last.units_with_leader),
            _ => threshold,
        };
        if best.is_some() && threshold < best_threshold(&best) {
            continue;
        }
        let prune_all = |threshold: u64| -> Vec<Pruned> {
            domains
                .iter()
                .map(|d| prune(d.clone(), threshold, level < leaf, with_leader))
                .collect()
        };
        let tops =
            |pruned: &[Pruned]| -> Vec<Candidate> { pruned.iter().map(|d| d.domain).collect() };
        let mut pruned = prune_all(threshold);
        let mut fits = greedy(&tops(&pruned), need, with_leader);
        if fits.is_none() && reserving < threshold {
            // Retry with a threshold that leaves the leader room beside the last domain.
            if reserving == 0 || reserving < best_threshold(&best) {
                continue;
            }
            threshold = reserving;
            pruned = prune_all(threshold);
            fits = greedy(&tops(&pruned), need, with_leader);
        }
        let Some(fits) = fits else {
            continue;
        };
        let better = best
            .as_ref()
            .is_none_or(|(t, c, _)| threshold > *t || (threshold == *t && fits.used < *c));
        if better {
            best = Some((threshold, fits.used, pruned));
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
        let chosen = optimal_set(&tops, need, unit, with_leader, Some(&entropy))?;
        let children: Vec<Candidate> = chosen
            .iter()
            .flat_map(|i| pruned[*i].children.clone())
            .collect();
        (level + 1, children)
    } else {
        (level, pruned.iter().map(|d| d.domain).collect())
    };
    let (spread, host) = spread_evenly(&domains, need, unit, threshold, with_leader)?;
    let shares = spread
        .into_iter()
        .map(|(slot, units)| Share {
            level: Some(fit_level),
            slot,
            units,
        })
        .collect();
    Some((shares, host))
}

/// Capacities and value-order positions of the domains of one placement.
struct View<'a> {
    placer: &'a Placer<'a>,
    leader: Option<&'a LeaderCost<'a>>,
    /// `[level][slot]` position in value order.
    pos: Vec<Vec<usize>>,
}

impl<'a> View<'a> {
    fn new(placer: &'a Placer<'a>, leader: Option<&'a LeaderCost<'a>>) -> Self {
        let pos = (0..placer.tree.depth())
            .map(|level| {
                let mut at = vec![usize::MAX; placer.tree.arena[level].len()];
                for (i, slot) in placer.tree.level_order(level).into_iter().enumerate() {
                    at[slot as usize] = i;
                }
                at
            })
            .collect();
        View {
            placer,
            leader,
            pos,
        }
    }

    fn candidate(&self, level: usize, slot: u32) -> Candidate {
        let units = self.placer.cap.units_at(level, slot);
        let pods = self.placer.cap.pods_at(level, slot);
        let lost = |costs: &[Vec<u64>]| {
            costs
                .get(level)
                .and_then(|c| c.get(slot as usize))
                .copied()
                .unwrap_or(u64::MAX)
        };
        let (leader, units_with_leader, pods_with_leader) = match self.leader {
            None => (false, units, pods),
            Some(cost) if lost(cost.units) != u64::MAX => (
                true,
                units.saturating_sub(lost(cost.units)),
                pods.saturating_sub(lost(cost.pods)),
            ),
            // Kueue: a node that cannot take the leader keeps its own capacity, a parent none.
            Some(_) if level + 1 == self.placer.tree.depth() => (false, units, pods),
            Some(_) => (false, 0, 0),
        };
        Candidate {
            slot,
            units,
            pods,
            leader,
            units_with_leader,
            pods_with_leader,
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

/// BestFit order for hosting the leader: leader room first, then most units beside it, then
/// fewest pods beside it, then value order.
fn leader_order(domains: &[Candidate]) -> Vec<Candidate> {
    let mut sorted = domains.to_vec();
    sorted.sort_by(|a, b| {
        b.leader
            .cmp(&a.leader)
            .then(b.units_with_leader.cmp(&a.units_with_leader))
            .then(a.pods_with_leader.cmp(&b.pods_with_leader))
            .then(a.pos.cmp(&b.pos))
    });
    sorted
}

/// A greedy BestFit fill: domains used, the leader's domain and the last domain filled after it.
struct Fill {
    used: usize,
    leader_domain: Option<Candidate>,
    last: Option<Candidate>,
}

fn greedy(domains: &[Candidate], need: u64, with_leader: bool) -> Option<Fill> {
    let mut remaining = need;
    let mut fill = Fill {
        used: 0,
        leader_domain: None,
        last: None,
    };
    let mut rest = domains.to_vec();
    if with_leader {
        let sorted = leader_order(domains);
        let first = sorted.first().filter(|d| d.leader)?;
        fill.used = 1;
        fill.leader_domain = Some(*first);
        remaining = remaining.saturating_sub(first.units_with_leader);
        rest = sorted[1..].to_vec();
    }
    for domain in best_fit_order(&rest) {
        if remaining == 0 || domain.units == 0 {
            break;
        }
        fill.used += 1;
        fill.last = Some(domain);
        remaining = remaining.saturating_sub(domain.units);
    }
    (remaining == 0).then_some(fill)
}

/// Drops the children below `threshold` (and the leader room of those whose slices beside the
/// leader fall below it), then the domain itself the same way.
fn prune(mut domain: Pruned, threshold: u64, has_children: bool, with_leader: bool) -> Pruned {
    if has_children {
        for child in &mut domain.children {
            if child.units < threshold {
                child.clear();
            } else if with_leader && child.leader && child.units_with_leader < threshold {
                child.clear_leader();
            }
        }
        let d = &mut domain.domain;
        d.units = domain.children.iter().map(|c| c.units).sum();
        d.pods = domain.children.iter().map(|c| c.pods).sum();
        let hosts = domain.children.iter().filter(|c| c.leader || !with_leader);
        let lost_units = hosts.clone().map(|c| c.units - c.units_with_leader).min();
        let lost_pods = hosts.clone().map(|c| c.pods - c.pods_with_leader).min();
        d.leader = domain.children.iter().any(|c| c.leader);
        (d.units_with_leader, d.pods_with_leader) = match (lost_units, lost_pods) {
            (Some(u), Some(p)) => (d.units - u, d.pods - p),
            _ => (0, 0),
        };
    }
    if domain.domain.units < threshold {
        domain.domain.clear();
        domain.children.iter_mut().for_each(Candidate::clear);
    } else if with_leader && domain.domain.leader && domain.domain.units_with_leader < threshold {
        domain.domain.clear_leader();
        domain.children.iter_mut().for_each(Candidate::clear_leader);
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
/// `unit` pods (and the leader), with the least pod capacity left over; the first such set
/// found in the order of `entropy` (leader room, most units, most even children, value order)
/// or of value order.
fn optimal_set(
    domains: &[Candidate],
    need: u64,
    unit: u64,
    with_leader: bool,
    entropy: Option<&[f64]>,
) -> Option<Vec<usize>> {
    let size = greedy(domains, need, with_leader)?.used;
    let mut order: Vec<usize> = (0..domains.len()).collect();
    match entropy {
        Some(entropy) => order.sort_by(|a, b| {
            let (da, db) = (&domains[*a], &domains[*b]);
            db.leader
                .cmp(&da.leader)
                .then(db.units_with_leader.cmp(&da.units_with_leader))
                .then(entropy[*b].total_cmp(&entropy[*a]))
                .then(da.pos.cmp(&db.pos))
        }),
        None => order.sort_by_key(|i| domains[*i].pos),
    }
    // by_size[k]: (leaders, pods) still to place → the first set of k domains leaving them.
    type Left = (i64, i128);
    let start: Left = (i64::from(with_leader), i128::from(need) * i128::from(unit));
    let mut by_size: Vec<BTreeMap<Left, Vec<usize>>> = vec![BTreeMap::new(); size + 1];
    by_size[0].insert(start, Vec::new());
    for &index in &order {
        let domain = domains[index];
        for k in (1..=size).rev() {
            let (before, after) = by_size.split_at_mut(k);
            for (&(leaders, pods), set) in &before[k - 1] {
                if leaders <= 0 && pods <= 0 {
                    continue;
                }
                let with = |set: &Vec<usize>| {
                    let mut set = set.clone();
                    set.push(index);
                    set
                };
                if leaders > 0 && domain.leader {
                    let left = (leaders - 1, pods - i128::from(domain.pods_with_leader));
                    after[0].entry(left).or_insert_with(|| with(set));
                }
                if domain.units > 0 {
                    let left = (leaders, pods - i128::from(domain.pods));
                    after[0].entry(left).or_insert_with(|| with(set));
                }
            }
        }
    }
    by_size[size]
        .range((0, i128::MIN)..=(0, 0))
        .next_back()
        .map(|(_, set)| set.clone())
}

/// Shares `(slot, units)` in value order, and the index of the one hosting the leader.
type Spread = (Vec<(u32, u64)>, Option<usize>);

/// The optimal set of `domains`, each taking `threshold`, the leader's domain first, and the
/// remainder to the fullest first. `None` when the set cannot take the pod set that way.
fn spread_evenly(
    domains: &[Candidate],
    need: u64,
    unit: u64,
    threshold: u64,
    with_leader: bool,
) -> Option<Spread> {
    let chosen = optimal_set(domains, need, unit, with_leader, None)?;
    let count = chosen.len() as u64;
    if need < count * threshold {
        return None;
    }
    let picked: Vec<Candidate> = chosen.iter().map(|i| domains[*i]).collect();
    let mut extra = i128::from(need - count * threshold);
    let mut leaders_left = with_leader;
    let mut shares = Vec::with_capacity(picked.len());
    for domain in leader_order(&picked) {
        let room = |units: u64| (i128::from(units) - i128::from(threshold)).min(extra);
        let hosts = leaders_left;
        let take = if hosts {
            leaders_left = false;
            room(domain.units_with_leader)
        } else if extra > 0 {
            room(domain.units)
        } else {
            0
        };
        extra -= take;
        let units = u64::try_from(i128::from(threshold) + take).ok()?;
        shares.push((domain.pos, domain.slot, units, hosts));
    }
    if extra > 0 || leaders_left {
        return None;
    }
    shares.sort_unstable_by_key(|s| s.0);
    let host = shares.iter().position(|s| s.3);
    Some((
        shares
            .into_iter()
            .map(|(_, slot, units, _)| (slot, units))
            .collect(),
        host,
    ))
}
