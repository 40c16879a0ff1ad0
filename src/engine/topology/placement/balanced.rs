//! Balanced placement for preferred requests (gate `TASBalancedPlacement`, off by default as in
//! Kueue): when no single domain at the preferred level holds the pod set, use as few domains as
//! possible under one parent and give them equal shares, so 12 pods on two domains of 10 become
//! 6 + 6, not 10 + 2.
//!
//! The parent is chosen by (fewest domains, largest smallest share, least capacity, value order).
//! Returns `None` to fall back to best fit.

use super::select::{Placer, Share};

/// (domains used, largest smallest share, parent capacity, parent position): smaller is better.
type Score = (usize, std::cmp::Reverse<u64>, u64, usize);

/// Shares at `level` for `need` units, or `None` when balancing does not apply.
pub fn balanced_shares(placer: &Placer<'_>, level: usize, need: u64) -> Option<Vec<Share>> {
    if need == 0
        || placer
            .candidates(level)
            .iter()
            .any(|(_, units)| *units >= need)
    {
        return None;
    }
    let parents: Vec<(Option<usize>, u32)> = if level == 0 {
        vec![(None, 0)]
    } else {
        placer
            .candidates(level - 1)
            .into_iter()
            .filter(|(_, units)| *units >= need)
            .map(|(slot, _)| (Some(level - 1), slot))
            .collect()
    };
    let mut best: Option<(Score, Vec<Share>)> = None;
    for (pos, (parent_level, parent)) in parents.into_iter().enumerate() {
        let Some(shares) = even_shares(placer, parent_level, parent, level, need) else {
            continue;
        };
        let smallest = shares.iter().map(|s| s.units).min().unwrap_or(0);
        let key = (
            shares.len(),
            std::cmp::Reverse(smallest),
            placer.units(parent_level, parent),
            pos,
        );
        if best.as_ref().is_none_or(|(k, _)| key < *k) {
            best = Some((key, shares));
        }
    }
    best.map(|(_, shares)| shares)
}

/// The fewest children of a parent that hold `need`, with shares as equal as their capacities allow.
fn even_shares(
    placer: &Placer<'_>,
    parent_level: Option<usize>,
    parent: u32,
    level: usize,
    need: u64,
) -> Option<Vec<Share>> {
    let mut children: Vec<(usize, u32, u64)> = placer
        .tree
        .children(parent_level, parent)
        .iter()
        .enumerate()
        .map(|(pos, &slot)| (pos, slot, placer.cap.units_at(level, slot)))
        .filter(|c| c.2 > 0)
        .collect();
    children.sort_unstable_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    let mut total = 0;
    let k = children.iter().position(|c| {
        total += c.2;
        total >= need
    })? + 1;
    let mut chosen = children[..k].to_vec();
    // Water-filling, smallest first: each takes its capacity or an equal part of what is left.
    chosen.sort_by(|a, b| a.2.cmp(&b.2).then(a.0.cmp(&b.0)));
    let mut remaining = need;
    let mut shares = Vec::with_capacity(k);
    for (i, &(pos, slot, units)) in chosen.iter().enumerate() {
        let left = (k - i) as u64;
        let take = if i + 1 == k {
            units.min(remaining)
        } else {
            units.min(remaining / left)
        };
        remaining -= take;
        shares.push((
            pos,
            Share {
                level: Some(level),
                slot,
                units: take,
            },
        ));
    }
    if remaining != 0 {
        return None;
    }
    shares.sort_by_key(|(pos, _)| *pos);
    Some(
        shares
            .into_iter()
            .map(|(_, s)| s)
            .filter(|s| s.units > 0)
            .collect(),
    )
}
