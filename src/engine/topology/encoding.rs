//! The compact `v1beta2` `topologyAssignment` (A.6.3): [`encode`] a rank-ordered domain list and
//! [`decode`] it back, validating every field.
//!
//! The encoder keeps the domains in the order given (placement emits them in depth-first topology
//! order, so consecutive ranks share racks); it never re-sorts, so decode(encode(x)) == x.

use std::collections::HashMap;

use thiserror::Error;

use super::model::{DomainAssignment, DomainList, HOSTNAME_LABEL};
use crate::api::topology_assignment::{
    TopologyAssignment, TopologyAssignmentSlice, TopologyAssignmentSliceLevelIndividualValues,
    TopologyAssignmentSliceLevelValues, TopologyAssignmentSlicePodCounts,
};
use crate::engine::features::{Feature, FeatureGates};

/// Most slices an assignment may hold.
pub const MAX_SLICES: usize = 1000;
/// Most domains one slice may hold.
pub const MAX_SLICE_DOMAINS: usize = 100_000;
/// Most levels an assignment may name.
pub const MAX_LEVELS: usize = 16;

/// Why a `topologyAssignment` cannot be decoded; names the slice and field.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    #[error("topologyAssignment.levels: must hold 1 to {MAX_LEVELS} keys, has {0}")]
    LevelCount(usize),
    #[error("topologyAssignment.slices: at most {MAX_SLICES} slices are allowed, has {0}")]
    SliceCount(usize),
    #[error("topologyAssignment.slices[{slice}].{field}: {reason}")]
    Slice {
        slice: usize,
        field: String,
        reason: String,
    },
    #[error(
        "topologyAssignment.slices[].podCounts: place {claimed} pods, the pod set's count is {count}"
    )]
    PodTotal { claimed: u64, count: i32 },
}

fn slice_error(slice: usize, field: impl Into<String>, reason: impl Into<String>) -> DecodeError {
    DecodeError::Slice {
        slice,
        field: field.into(),
        reason: reason.into(),
    }
}

/// Decodes and validates a compact assignment of a pod set admitted with `pod_count` pods into its
/// domain list. Every field is checked, and the pods the slices place are summed and compared with
/// `pod_count`, before any domain is expanded: every domain holds at least one pod, so the list
/// never grows beyond the pod set, whatever the document claims.
pub fn decode(assignment: &TopologyAssignment, pod_count: i32) -> Result<DomainList, DecodeError> {
    let levels = assignment.levels.len();
    if levels == 0 || levels > MAX_LEVELS {
        return Err(DecodeError::LevelCount(levels));
    }
    if assignment.slices.len() > MAX_SLICES {
        return Err(DecodeError::SliceCount(assignment.slices.len()));
    }
    let mut slices = Vec::with_capacity(assignment.slices.len());
    let mut claimed: u64 = 0;
    for (index, slice) in assignment.slices.iter().enumerate() {
        let count = usize::try_from(slice.domain_count)
            .ok()
            .filter(|c| (1..=MAX_SLICE_DOMAINS).contains(c))
            .ok_or_else(|| {
                slice_error(
                    index,
                    "domainCount",
                    format!(
                        "must be 1 to {MAX_SLICE_DOMAINS}, is {}",
                        slice.domain_count
                    ),
                )
            })?;
        if slice.values_per_level.len() != levels {
            return Err(slice_error(
                index,
                "valuesPerLevel",
                format!(
                    "has {} entries, levels has {levels}",
                    slice.values_per_level.len()
                ),
            ));
        }
        let columns = slice
            .values_per_level
            .iter()
            .enumerate()
            .map(|(j, v)| level_values(index, j, v, count))
            .collect::<Result<Vec<_>, _>>()?;
        let counts = pod_counts(index, &slice.pod_counts, count)?;
        claimed = claimed.saturating_add(counts.total(count));
        slices.push((count, columns, counts));
    }
    if u64::try_from(pod_count).ok() != Some(claimed) {
        return Err(DecodeError::PodTotal {
            claimed,
            count: pod_count,
        });
    }
    let mut domains = Vec::new();
    for (count, columns, counts) in slices {
        domains.extend((0..count).map(|i| DomainAssignment {
            values: columns.iter().map(|c| c.value(i)).collect(),
            count: counts.get(i),
        }));
    }
    Ok(DomainList {
        levels: assignment.levels.clone(),
        domains,
    })
}

enum Column<'a> {
    Universal(&'a str),
    Individual {
        prefix: &'a str,
        suffix: &'a str,
        roots: &'a [String],
    },
}

impl Column<'_> {
    fn value(&self, i: usize) -> String {
        match self {
            Column::Universal(v) => (*v).to_string(),
            Column::Individual {
                prefix,
                suffix,
                roots,
            } => {
                format!(
                    "{prefix}{}{suffix}",
                    roots.get(i).map_or("", String::as_str)
                )
            }
        }
    }
}

fn level_values(
    slice: usize,
    j: usize,
    v: &TopologyAssignmentSliceLevelValues,
    count: usize,
) -> Result<Column<'_>, DecodeError> {
    let field = |f: &str| format!("valuesPerLevel[{j}]{f}");
    match (&v.universal, &v.individual) {
        (Some(u), None) => Ok(Column::Universal(u)),
        (None, Some(ind)) => {
            if ind.roots.len() != count {
                return Err(slice_error(
                    slice,
                    field(".individual.roots"),
                    format!("has {} entries, domainCount is {count}", ind.roots.len()),
                ));
            }
            for (name, part) in [("prefix", &ind.prefix), ("suffix", &ind.suffix)] {
                if part.as_deref() == Some("") {
                    return Err(slice_error(
                        slice,
                        field(&format!(".individual.{name}")),
                        "must be absent or non-empty",
                    ));
                }
            }
            Ok(Column::Individual {
                prefix: ind.prefix.as_deref().unwrap_or(""),
                suffix: ind.suffix.as_deref().unwrap_or(""),
                roots: &ind.roots,
            })
        }
        _ => Err(slice_error(
            slice,
            field(""),
            "exactly one of universal and individual must be set",
        )),
    }
}

/// The pods of each domain of a slice, checked but not expanded.
enum PodCounts<'a> {
    Universal(u32),
    Individual(&'a [i32]),
}

impl PodCounts<'_> {
    fn get(&self, i: usize) -> u32 {
        match self {
            PodCounts::Universal(n) => *n,
            PodCounts::Individual(list) => list
                .get(i)
                .and_then(|n| u32::try_from(*n).ok())
                .unwrap_or(0),
        }
    }

    /// Pods over the slice's `domains` domains.
    fn total(&self, domains: usize) -> u64 {
        match self {
            PodCounts::Universal(n) => u64::from(*n).saturating_mul(domains as u64),
            PodCounts::Individual(list) => {
                list.iter().map(|n| u64::try_from(*n).unwrap_or(0)).sum()
            }
        }
    }
}

fn pod_counts(
    slice: usize,
    counts: &TopologyAssignmentSlicePodCounts,
    count: usize,
) -> Result<PodCounts<'_>, DecodeError> {
    let positive = |field: &str, n: i32| {
        u32::try_from(n)
            .ok()
            .filter(|n| *n >= 1)
            .ok_or_else(|| slice_error(slice, field, format!("must be at least 1, is {n}")))
    };
    match (&counts.universal, &counts.individual) {
        (Some(n), None) => Ok(PodCounts::Universal(positive("podCounts.universal", *n)?)),
        (None, Some(list)) => {
            if list.len() != count {
                return Err(slice_error(
                    slice,
                    "podCounts.individual",
                    format!("has {} entries, domainCount is {count}", list.len()),
                ));
            }
            for (i, n) in list.iter().enumerate() {
                positive(&format!("podCounts.individual[{i}]"), *n)?;
            }
            Ok(PodCounts::Individual(list))
        }
        _ => Err(slice_error(
            slice,
            "podCounts",
            "exactly one of universal and individual must be set",
        )),
    }
}

/// Encodes `list` as Kueue does (A.6.3): hostname-prefix runs under
/// `TASAssignmentsEncodingByHostnamePrefix` (keeping the smaller of that and the single-slice
/// form), otherwise one slice; slices never exceed [`MAX_SLICE_DOMAINS`] domains.
pub fn encode(list: &DomainList, gates: &FeatureGates) -> TopologyAssignment {
    let domains = &list.domains;
    let single = || chunks(domains, std::slice::from_ref(&(0..domains.len())));
    let hostname = list.levels.last().is_some_and(|l| l == HOSTNAME_LABEL);
    let slices = if gates.enabled(Feature::TASAssignmentsEncodingByHostnamePrefix)
        && hostname
        && domains.len() >= 2
    {
        let runs = prefix_runs(domains);
        let grouped = chunks(domains, &runs);
        if grouped.len() > 1 && domains.len() <= MAX_SLICE_DOMAINS {
            let plain = single();
            if json_len(&plain) <= json_len(&grouped) {
                plain
            } else {
                grouped
            }
        } else {
            grouped
        }
    } else {
        single()
    };
    TopologyAssignment {
        levels: list.levels.clone(),
        slices,
    }
}

fn json_len(slices: &[TopologyAssignmentSlice]) -> usize {
    serde_json::to_vec(slices).map_or(usize::MAX, |v| v.len())
}

fn chunks(
    domains: &[DomainAssignment],
    runs: &[std::ops::Range<usize>],
) -> Vec<TopologyAssignmentSlice> {
    runs.iter()
        .flat_map(|run| {
            let run = &domains[run.clone()];
            run.chunks(MAX_SLICE_DOMAINS)
                .map(compact)
                .collect::<Vec<_>>()
        })
        .collect()
}

fn slice_count(runs: &[std::ops::Range<usize>]) -> usize {
    runs.iter()
        .map(|r| r.len().div_ceil(MAX_SLICE_DOMAINS))
        .sum()
}

/// Runs of adjacent hostnames sharing a grouping key: the longest `-`-terminated prefix (of at
/// most `depth` segments) that at least two hostnames share. Starts at the deepest depth and backs
/// off until the runs make at most [`MAX_SLICES`] slices.
fn prefix_runs(domains: &[DomainAssignment]) -> Vec<std::ops::Range<usize>> {
    let hosts: Vec<&str> = domains
        .iter()
        .map(|d| d.values.last().map_or("", String::as_str))
        .collect();
    let mut shared: HashMap<&str, usize> = HashMap::new();
    for host in &hosts {
        for (i, _) in host.match_indices('-') {
            *shared.entry(&host[..=i]).or_insert(0) += 1;
        }
    }
    let max_depth = hosts
        .iter()
        .map(|h| h.matches('-').count())
        .max()
        .unwrap_or(0);
    let mut runs = Vec::new();
    for depth in (0..=max_depth).rev() {
        let keys: Vec<&str> = hosts
            .iter()
            .map(|host| {
                host.match_indices('-')
                    .take(depth)
                    .map(|(i, _)| &host[..=i])
                    .filter(|p| shared.get(p).is_some_and(|n| *n >= 2))
                    .last()
                    .unwrap_or("")
            })
            .collect();
        runs.clear();
        let mut start = 0;
        for i in 1..=keys.len() {
            if i == keys.len() || keys[i] != keys[start] {
                runs.push(start..i);
                start = i;
            }
        }
        if slice_count(&runs) <= MAX_SLICES {
            break;
        }
    }
    runs
}

/// One slice: each level universal when all equal, else individual with the common prefix and
/// suffix factored out (never overlapping); pod counts likewise.
fn compact(domains: &[DomainAssignment]) -> TopologyAssignmentSlice {
    let levels = domains.first().map_or(0, |d| d.values.len());
    let values_per_level = (0..levels)
        .map(|j| {
            let column: Vec<&str> = domains
                .iter()
                .map(|d| d.values.get(j).map_or("", String::as_str))
                .collect();
            compact_level(&column)
        })
        .collect();
    let counts: Vec<i32> = domains
        .iter()
        .map(|d| i32::try_from(d.count).unwrap_or(i32::MAX))
        .collect();
    let pod_counts = if counts.windows(2).all(|w| w[0] == w[1]) {
        TopologyAssignmentSlicePodCounts {
            universal: counts.first().copied(),
            individual: None,
        }
    } else {
        TopologyAssignmentSlicePodCounts {
            universal: None,
            individual: Some(counts),
        }
    };
    TopologyAssignmentSlice {
        domain_count: i32::try_from(domains.len()).unwrap_or(i32::MAX),
        values_per_level,
        pod_counts,
    }
}

fn compact_level(column: &[&str]) -> TopologyAssignmentSliceLevelValues {
    let first = column.first().copied().unwrap_or("");
    if column.iter().all(|v| *v == first) {
        return TopologyAssignmentSliceLevelValues {
            universal: Some(first.to_string()),
            individual: None,
        };
    }
    let shortest = column.iter().map(|v| v.len()).min().unwrap_or(0);
    let mut prefix = column
        .iter()
        .fold(first.len(), |n, v| n.min(common_prefix(first, v)));
    while !first.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let limit = shortest - prefix;
    let mut suffix = column
        .iter()
        .fold(limit, |n, v| n.min(common_suffix(first, v)));
    while !first.is_char_boundary(first.len() - suffix) {
        suffix -= 1;
    }
    let roots = column
        .iter()
        .map(|v| v.get(prefix..v.len() - suffix).unwrap_or("").to_string())
        .collect();
    let part = |s: &str| (!s.is_empty()).then(|| s.to_string());
    TopologyAssignmentSliceLevelValues {
        universal: None,
        individual: Some(TopologyAssignmentSliceLevelIndividualValues {
            prefix: part(&first[..prefix]),
            suffix: part(&first[first.len() - suffix..]),
            roots,
        }),
    }
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

fn common_suffix(a: &str, b: &str) -> usize {
    a.bytes()
        .rev()
        .zip(b.bytes().rev())
        .take_while(|(x, y)| x == y)
        .count()
}
