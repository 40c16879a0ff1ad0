//! A pod's rank within its pod set, read from its index labels as Kueue's rank-based ordering
//! reads it.

use std::collections::HashSet;

use super::pod_view::PodView;
use crate::api::workload::PodSetTopologyRequest;

/// Where a pod set's ranks sit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct RankRange {
    /// Subtracted from a pod's index to give its rank.
    pub offset: i64,
    /// Index label values must be below this.
    pub max: i64,
    /// Pods in the pod set; ranks are below this.
    pub size: i64,
}

/// The rank of `pod`, when its labels give a valid one.
pub(super) fn pod_rank(
    pod: &PodView,
    request: &PodSetTopologyRequest,
    range: RankRange,
) -> Option<usize> {
    let index = read_below(pod, request.pod_index_label.as_deref()?, range.max)?;
    let rank = match request.sub_group_index_label.as_deref() {
        None => index - range.offset,
        Some(sub_group_label) => {
            let sub_groups = i64::from(request.sub_group_count.filter(|n| *n > 0)?);
            let group_size = range.size / sub_groups;
            let group = read_below(pod, sub_group_label, sub_groups)?;
            if index >= group_size {
                return None;
            }
            index + group * group_size - range.offset
        }
    };
    if rank < 0 || rank >= range.size {
        return None;
    }
    usize::try_from(rank).ok()
}

/// The rank of every pod, in order, when every pod has a valid rank and no two share one.
pub(super) fn read_ranks(
    pods: &[&PodView],
    request: &PodSetTopologyRequest,
    range: RankRange,
) -> Option<Vec<usize>> {
    let mut seen = HashSet::new();
    pods.iter()
        .map(|pod| pod_rank(pod, request, range).filter(|rank| seen.insert(*rank)))
        .collect()
}

/// An unsigned decimal label value below `bound` (Go's `strconv.ParseUint`: digits only).
fn read_below(pod: &PodView, label: &str, bound: i64) -> Option<i64> {
    let value = pod.labels.get(label)?;
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse::<i64>().ok().filter(|v| *v < bound)
}
