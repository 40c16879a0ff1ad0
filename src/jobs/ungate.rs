//! The topology ungater's decision: which pods of a TAS-admitted Workload to release from the
//! `kueue.x-k8s.io/topology` scheduling gate now, and the nodeSelector (the assigned domain's
//! level labels) each one gets, as Kueue's topology ungater decides it.
//!
//! The state is read from the pods alone: a pod still carrying the gate is waiting, a pod without
//! it occupies the domain its nodeSelector names. So the decision is idempotent (applied, it
//! leaves nothing to ungate), survives a controller restart, and never fills a domain beyond its
//! count: a domain takes at most `count − pods already there` new pods. Terminated pods (phase
//! `Succeeded` or `Failed`) are ignored, so the pods that replace them take their slots; pods
//! being deleted still count until they are gone.
//!
//! Two modes, as in Kueue:
//! - **ranks**: when the pod set names a pod index label (`podIndexLabel`, e.g.
//!   `batch.kubernetes.io/job-completion-index`) and every pod has a valid, distinct rank whose
//!   domain matches the nodeSelector of every pod already ungated, a pod of rank `r` goes to the
//!   domain holding rank `r` in the assignment (domain 0 holds ranks `0..c0`, domain 1 the next
//!   `c1`, ...), so consecutive indexes share a domain;
//! - **greedy** otherwise: each domain, in assignment order, takes waiting pods until it is
//!   full. Waiting pods are taken by rank where they have one, then by name, so the outcome does
//!   not depend on the order pods were listed.
//!
//! While `status.unhealthyNodes` is not empty, a pod whose domain is such a node stays gated
//! until the node is replaced in the assignment.

mod pod_view;
mod ranks;

use std::collections::{BTreeMap, HashMap};

use crate::api::HasConditions;
use crate::api::Workload;
use crate::api::keys::{annotations, condition_types};
use crate::api::workload::PodSetTopologyRequest;
use crate::engine::topology::model::{DomainList, HOSTNAME_LABEL};
use crate::engine::topology::{DecodeError, decode};

pub use pod_view::PodView;
use ranks::{RankRange, pod_rank, read_ranks};

/// One pod to release: remove the topology gate and add `node_selector`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ungate {
    pub pod: String,
    pub pod_set: String,
    /// Level label → the domain's value, for every level of the assignment.
    pub node_selector: BTreeMap<String, String>,
}

/// Why a pod set's pods cannot be ungated; Kueue retries such a Workload.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UngateError {
    /// The assignment does not decode.
    #[error("pod set {pod_set:?}: {source}")]
    Assignment {
        pod_set: String,
        source: DecodeError,
    },
    /// The pods' index offset annotation is not an integer the ranks can be shifted by.
    #[error(
        "pod {pod:?}: annotation {}={value:?} is not an integer ranks can be shifted by",
        annotations::POD_INDEX_OFFSET
    )]
    Offset { pod: String, value: String },
}

/// The pods of `workload` to ungate now, by pod set in `podSetAssignments` order. Nothing while
/// the Workload is not `Admitted` with a topology assignment.
pub fn pods_to_ungate(workload: &Workload, pods: &[PodView]) -> Result<Vec<Ungate>, UngateError> {
    let Some(status) = workload.status.as_ref() else {
        return Ok(Vec::new());
    };
    let admitted = status.condition_is_true(condition_types::ADMITTED);
    let Some(admission) = status.admission.as_ref().filter(|_| admitted) else {
        return Ok(Vec::new());
    };
    let requests: HashMap<&str, &PodSetTopologyRequest> = workload
        .spec
        .pod_sets
        .iter()
        .filter_map(|ps| Some((ps.name.as_str(), ps.topology_request.as_deref()?)))
        .collect();
    let count_of = |name: &str, assigned: Option<i32>| {
        assigned
            .or_else(|| {
                workload
                    .spec
                    .pod_sets
                    .iter()
                    .find(|ps| ps.name == name)
                    .map(|ps| ps.count)
            })
            .unwrap_or(0)
    };
    let counts: Vec<(&str, i32, Option<&str>)> = admission
        .pod_set_assignments
        .iter()
        .map(|a| {
            let group = requests
                .get(a.name.as_str())
                .and_then(|r| r.pod_set_group_name.as_deref());
            (a.name.as_str(), count_of(&a.name, a.count), group)
        })
        .collect();
    let ranges = rank_ranges(&counts);
    let unhealthy: Vec<&str> = status
        .unhealthy_nodes
        .iter()
        .map(|n| n.name.as_str())
        .collect();

    let mut ungate = Vec::new();
    for assignment in &admission.pod_set_assignments {
        let Some(topology) = assignment.topology_assignment.as_ref() else {
            continue;
        };
        let count = count_of(&assignment.name, assignment.count);
        let domains = decode(topology, count).map_err(|source| UngateError::Assignment {
            pod_set: assignment.name.clone(),
            source,
        })?;
        let mut members: Vec<&PodView> = pods
            .iter()
            .filter(|p| !p.terminated && p.pod_set.as_deref() == Some(assignment.name.as_str()))
            .collect();
        members.sort_by(|a, b| a.name.cmp(&b.name));
        let mut range = ranges
            .get(assignment.name.as_str())
            .copied()
            .unwrap_or(RankRange {
                offset: 0,
                max: i64::from(count),
                size: i64::from(count),
            });
        // Every pod of a pod set carries the same offset; the first one's is read.
        if let Some(first) = members.first()
            && let Some(value) = first.index_offset.as_deref()
        {
            let bad = || UngateError::Offset {
                pod: first.name.clone(),
                value: value.to_owned(),
            };
            let offset: i64 = value.trim().parse().map_err(|_| bad())?;
            // The annotation is the user's: an offset that would overflow the ranks is refused.
            range.offset = range.offset.checked_add(offset).ok_or_else(bad)?;
            range.max = range.max.checked_add(offset).ok_or_else(bad)?;
        }
        let request = requests.get(assignment.name.as_str()).copied();
        for (pod, domain) in assign(&domains, &members, request, range) {
            let values = &domains.domains[domain].values;
            if on_unhealthy_node(&domains.levels, values, &unhealthy) {
                continue;
            }
            ungate.push(Ungate {
                pod: members[pod].name.clone(),
                pod_set: assignment.name.clone(),
                node_selector: domains
                    .levels
                    .iter()
                    .cloned()
                    .zip(values.iter().cloned())
                    .collect(),
            });
        }
    }
    Ok(ungate)
}

/// The rank range of each pod set. In a pod-set group (two pod sets sharing
/// `podSetGroupName`, e.g. a LeaderWorkerSet's leader and workers) the smaller pod set takes the
/// first ranks and the other's ranks follow it.
fn rank_ranges<'a>(counts: &[(&'a str, i32, Option<&str>)]) -> HashMap<&'a str, RankRange> {
    let mut ranges = HashMap::new();
    let mut grouped: BTreeMap<&str, Vec<(&'a str, i32)>> = BTreeMap::new();
    for &(name, count, group) in counts {
        let own = RankRange {
            offset: 0,
            max: i64::from(count),
            size: i64::from(count),
        };
        ranges.insert(name, own);
        if let Some(group) = group {
            grouped.entry(group).or_default().push((name, count));
        }
    }
    for members in grouped.values() {
        if let [a, b] = members.as_slice() {
            let (leader, workers) = if a.1 > b.1 { (b, a) } else { (a, b) };
            let lead = i64::from(leader.1);
            ranges.insert(
                workers.0,
                RankRange {
                    offset: lead,
                    max: i64::from(workers.1) + lead,
                    size: i64::from(workers.1),
                },
            );
        }
    }
    ranges
}

/// Each waiting pod that gets a domain now, as (index in `pods`, index in `domains`).
fn assign(
    domains: &DomainList,
    pods: &[&PodView],
    request: Option<&PodSetTopologyRequest>,
    range: RankRange,
) -> Vec<(usize, usize)> {
    let rank_table: Vec<usize> = domains
        .domains
        .iter()
        .enumerate()
        .flat_map(|(i, d)| std::iter::repeat_n(i, usize::try_from(d.count).unwrap_or(0)))
        .collect();
    if let Some(ranks) = request.and_then(|r| read_ranks(pods, r, range))
        && ranks_fit(domains, pods, &ranks, &rank_table)
    {
        return ranks
            .iter()
            .enumerate()
            .filter(|(pod, _)| pods[*pod].topology_gated)
            .filter_map(|(pod, rank)| Some((pod, *rank_table.get(*rank)?)))
            .collect();
    }
    let rank_of = |pod: &PodView| request.and_then(|r| pod_rank(pod, r, range));
    greedy(domains, pods, rank_of)
}

/// Whether ranks can decide: every rank has a domain and every ungated pod is where its rank
/// says.
fn ranks_fit(domains: &DomainList, pods: &[&PodView], ranks: &[usize], table: &[usize]) -> bool {
    ranks.iter().zip(pods).all(|(rank, pod)| {
        table.get(*rank).is_some_and(|&domain| {
            pod.topology_gated
                || selector_values(&domains.levels, pod) == domains.domains[domain].values
        })
    })
}

/// Fills each domain, in assignment order, up to its count less the ungated pods already there.
fn greedy(
    domains: &DomainList,
    pods: &[&PodView],
    rank_of: impl Fn(&PodView) -> Option<usize>,
) -> Vec<(usize, usize)> {
    let mut already: HashMap<Vec<String>, u64> = HashMap::new();
    let mut waiting = Vec::new();
    for (index, pod) in pods.iter().enumerate() {
        if pod.topology_gated {
            waiting.push((rank_of(pod), index));
        } else {
            *already
                .entry(selector_values(&domains.levels, pod))
                .or_default() += 1;
        }
    }
    // Pods with a rank first, by rank, then the others in name order (`pods` is sorted by name).
    waiting.sort_by_key(|&(rank, index)| (rank.is_none(), rank, index));
    let mut next = waiting.into_iter().map(|(_, index)| index);
    let mut chosen = Vec::new();
    for (domain, assignment) in domains.domains.iter().enumerate() {
        // Pods already in a domain listed twice fill its first entries first.
        let there = already.entry(assignment.values.clone()).or_default();
        let absorbed = (*there).min(u64::from(assignment.count));
        *there -= absorbed;
        for _ in absorbed..u64::from(assignment.count) {
            match next.next() {
                Some(pod) => chosen.push((pod, domain)),
                None => return chosen,
            }
        }
    }
    chosen
}

/// The values a pod's nodeSelector gives each level (empty where it has none).
fn selector_values(levels: &[String], pod: &PodView) -> Vec<String> {
    levels
        .iter()
        .map(|level| pod.node_selector.get(level).cloned().unwrap_or_default())
        .collect()
}

/// Whether the domain is a node listed unhealthy (only hostname-level assignments name nodes).
fn on_unhealthy_node(levels: &[String], values: &[String], unhealthy: &[&str]) -> bool {
    levels.last().is_some_and(|l| l == HOSTNAME_LABEL)
        && values
            .last()
            .is_some_and(|node| unhealthy.contains(&node.as_str()))
}

#[cfg(test)]
mod tests;
