//! When a node assigned to an admitted TAS workload has failed, as Kueue's TAS node controller
//! counts it, with the time passed in: the node is gone or has no `Ready` condition; `Ready` is not
//! `True`; or (gate `TASReplaceNodeOnNodeTaints`) the node is Ready but carries a NoSchedule or
//! NoExecute taint the workload's pods do not tolerate, or tolerate only for `tolerationSeconds`.
//!
//! With `TASReplaceNodeOnPodTermination` (on by default, as in Kueue) a node that is not Ready, or
//! carries such a taint, fails only once the workload has no pod left progressing there: a node
//! that merely stopped reporting may still run the pods, and a replacement started beside them
//! would run the same pod twice. Without it, a node fails once `Ready` has not been `True` for
//! `NodeFailureDelay` (30 s), and an untolerated taint fails it at once; the deprecated gate
//! `TASReplaceNodeDueToNotReadyOverFixedTime` adds that 30 s timer back beside the wait for pods.
//!
//! The taints the node lifecycle controller adds because `Ready` is not True
//! (`node.kubernetes.io/not-ready`, `.../unreachable`) are judged through `Ready`, not as taints.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Taint, Toleration};
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::model::HOSTNAME_LABEL;
use super::{DecodeError, decode};
use crate::api::keys::condition_types;
use crate::api::{HasConditions, Workload};
use crate::engine::features::{Feature, FeatureGates};
use crate::engine::node_match::tolerates;

/// Kueue's `NodeFailureDelay`: how long `Ready` stays not True before the node counts as failed.
pub const NODE_FAILURE_DELAY: Duration = Duration::from_secs(30);

/// Taints that only repeat what the `Ready` condition says.
const READINESS_TAINTS: [&str; 2] = [
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
];
/// The taint the node lifecycle controller puts on a node with `spec.unschedulable`.
const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

/// A node's `Ready` condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadyCondition {
    pub ready: bool,
    /// Its `lastTransitionTime`.
    pub since: Timestamp,
}

/// What failure detection reads from a node.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeFacts {
    pub name: String,
    /// `None`: the node has no `Ready` condition.
    pub ready: Option<ReadyCondition>,
    pub taints: Vec<Taint>,
    pub unschedulable: bool,
    /// When this version of the node was first seen: the failure time of a taint that does not
    /// record when it was added.
    pub seen_at: Timestamp,
}

/// A node as the assignment's hostname finds it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NodeLookup<'a> {
    Present(&'a NodeFacts),
    /// Deleted at `since` (as far as the watch saw), named `name`.
    Gone {
        name: &'a str,
        since: Timestamp,
    },
    /// Never seen: counted as deleted now.
    Unknown,
}

/// Whether a workload still has pods progressing on a node: bound there, not being deleted, and
/// neither `Succeeded` nor `Failed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodsOnNode {
    Progressing,
    /// None progressing, or none there at all.
    Stopped,
}

/// One node's health for one workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeHealth {
    Healthy,
    /// Not Ready, or tainted, but the workload's pods there still progress: it fails when they
    /// stop (a pod change, not a time, brings that).
    WaitingForPods,
    /// Not Ready; it fails at this time unless it recovers first.
    FailsAt(Timestamp),
    Failed {
        since: Timestamp,
    },
}

/// How a workload's pods stand with a taint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum TaintStanding {
    Permanent,
    /// Only by tolerations with `tolerationSeconds`: the pods are evicted in time.
    Temporary,
    Untolerated,
}

/// Whether `node` has failed at `now` for a workload whose pods have `tolerations` and stand on it
/// as `pods` says.
pub fn node_health(
    node: NodeLookup<'_>,
    tolerations: &[Toleration],
    pods: PodsOnNode,
    gates: &FeatureGates,
    now: Timestamp,
) -> NodeHealth {
    let node = match node {
        NodeLookup::Present(node) => node,
        NodeLookup::Gone { since, .. } => return NodeHealth::Failed { since },
        NodeLookup::Unknown => return NodeHealth::Failed { since: now },
    };
    let Some(ready) = &node.ready else {
        return NodeHealth::Failed {
            since: node.seen_at,
        };
    };
    let wait_for_pods = gates.enabled(Feature::TASReplaceNodeOnPodTermination);
    if !ready.ready {
        if wait_for_pods && pods == PodsOnNode::Stopped {
            return NodeHealth::Failed { since: ready.since };
        }
        if wait_for_pods && !gates.enabled(Feature::TASReplaceNodeDueToNotReadyOverFixedTime) {
            return NodeHealth::WaitingForPods;
        }
        let delay = SignedDuration::try_from(NODE_FAILURE_DELAY).unwrap_or(SignedDuration::MAX);
        let deadline = ready.since.checked_add(delay).unwrap_or(Timestamp::MAX);
        return if now >= deadline {
            NodeHealth::Failed { since: deadline }
        } else {
            NodeHealth::FailsAt(deadline)
        };
    }
    if !gates.enabled(Feature::TASReplaceNodeOnNodeTaints) {
        return NodeHealth::Healthy;
    }
    let mut taints: Vec<Taint> = node
        .taints
        .iter()
        .filter(|t| !READINESS_TAINTS.contains(&t.key.as_str()))
        .filter(|t| matches!(t.effect.as_str(), "NoSchedule" | "NoExecute"))
        .cloned()
        .collect();
    if node.unschedulable {
        taints.push(Taint {
            key: UNSCHEDULABLE_TAINT.into(),
            effect: "NoSchedule".into(),
            ..Taint::default()
        });
    }
    let Some((worst, taint)) = taints
        .iter()
        .map(|taint| (standing(taint, tolerations), taint))
        .filter(|(how, _)| *how != TaintStanding::Permanent)
        .max_by_key(|(how, _)| *how)
    else {
        return NodeHealth::Healthy;
    };
    let since = taint
        .time_added
        .as_ref()
        .map_or(node.seen_at, |added| added.0);
    let waits = worst == TaintStanding::Temporary || wait_for_pods;
    if waits && pods == PodsOnNode::Progressing {
        NodeHealth::WaitingForPods
    } else {
        NodeHealth::Failed { since }
    }
}

/// How `tolerations` stand with `taint`.
fn standing(taint: &Taint, tolerations: &[Toleration]) -> TaintStanding {
    if !tolerations.iter().any(|t| tolerates(t, taint)) {
        TaintStanding::Untolerated
    } else if !tolerations
        .iter()
        .any(|t| t.toleration_seconds.is_none() && tolerates(t, taint))
    {
        TaintStanding::Temporary
    } else {
        TaintStanding::Permanent
    }
}

/// The hosts of one pod set's hostname-level assignment, and the tolerations of its pods.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AssignedPodSet {
    pub name: String,
    pub hosts: Vec<String>,
    pub tolerations: Vec<Toleration>,
}

/// A failed node of a workload, by node name, and since when it has failed.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FailedNode {
    pub name: String,
    pub since: Timestamp,
}

/// What failure detection found for one workload.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkloadNodes {
    /// Every failed node, by name, once.
    pub failed: Vec<FailedNode>,
    /// The earliest time a node not failed yet would fail if it stays as it is.
    pub recheck_at: Option<Timestamp>,
}

/// The failed nodes among those assigned to `pod_sets` at `now`; `lookup` finds a node by the
/// hostname an assignment names, `pods` tells how the workload's pods stand on a node, by node
/// name. Nothing fails with `TASFailedNodeReplacement` off.
pub fn workload_nodes<'a>(
    pod_sets: &[AssignedPodSet],
    lookup: impl Fn(&str) -> NodeLookup<'a>,
    pods: impl Fn(&str) -> PodsOnNode,
    gates: &FeatureGates,
    now: Timestamp,
) -> WorkloadNodes {
    let mut out = WorkloadNodes::default();
    if !gates.enabled(Feature::TASFailedNodeReplacement) {
        return out;
    }
    let mut failed: BTreeMap<String, Timestamp> = BTreeMap::new();
    for pod_set in pod_sets {
        for host in &pod_set.hosts {
            let node = lookup(host);
            let standing = match node {
                NodeLookup::Present(n) => pods(&n.name),
                NodeLookup::Gone { .. } | NodeLookup::Unknown => PodsOnNode::Stopped,
            };
            match node_health(node, &pod_set.tolerations, standing, gates, now) {
                NodeHealth::Healthy | NodeHealth::WaitingForPods => {}
                NodeHealth::FailsAt(at) => {
                    out.recheck_at = Some(out.recheck_at.map_or(at, |r| r.min(at)));
                }
                NodeHealth::Failed { since } => {
                    let name = match node {
                        NodeLookup::Present(n) => n.name.clone(),
                        NodeLookup::Gone { name, .. } => name.to_string(),
                        NodeLookup::Unknown => host.clone(),
                    };
                    let entry = failed.entry(name).or_insert(since);
                    *entry = (*entry).min(since);
                }
            }
        }
    }
    out.failed = failed
        .into_iter()
        .map(|(name, since)| FailedNode { name, since })
        .collect();
    out
}

/// The pod sets of an admitted, unfinished Workload whose assignment names hosts (the
/// topology's lowest level is `kubernetes.io/hostname`), with their pods' tolerations: the pod
/// template's and those of the flavor each was given. Empty for any other Workload.
pub fn assigned_pod_sets(
    workload: &Workload,
    flavor_tolerations: &BTreeMap<String, Vec<Toleration>>,
) -> Result<Vec<AssignedPodSet>, DecodeError> {
    let Some(status) = workload.status.as_ref() else {
        return Ok(Vec::new());
    };
    let condition = |type_: &str| status.condition_is_true(type_);
    let Some(admission) = status.admission.as_ref() else {
        return Ok(Vec::new());
    };
    if !condition(condition_types::ADMITTED)
        || condition(condition_types::FINISHED)
        || condition(condition_types::EVICTED)
    {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for assignment in &admission.pod_set_assignments {
        let Some(encoded) = &assignment.topology_assignment else {
            continue;
        };
        if encoded.levels != [HOSTNAME_LABEL] {
            continue;
        }
        let list = decode(encoded, assignment.count.unwrap_or_default())?;
        let mut tolerations = workload
            .spec
            .pod_sets
            .iter()
            .find(|p| p.name == assignment.name)
            .and_then(|p| p.template.spec.as_ref())
            .and_then(|s| s.tolerations.clone())
            .unwrap_or_default();
        for flavor in assignment.flavors.values() {
            if let Some(extra) = flavor_tolerations.get(flavor) {
                tolerations.extend(extra.iter().cloned());
            }
        }
        out.push(AssignedPodSet {
            name: assignment.name.clone(),
            hosts: list
                .domains
                .iter()
                .filter_map(|d| d.values.last().cloned())
                .collect(),
            tolerations,
        });
    }
    Ok(out)
}
