//! Kueue's failed-node replacement, run by the admission loop on what the node-health loop
//! found: every failed node of an admitted TAS Workload is replaced at once inside the domain its
//! request requires, in the engine state admission places into, before the pass's admission
//! cycles run, so a replacement and an admission never claim the same capacity. The new
//! `topologyAssignment` is written like an admission (held while a release is outstanding, undone
//! if the write fails). No replacement: with `TASFailedNodeReplacementFailFast` the Workload is
//! evicted (`NodeFailures`) and queued again; without it, it stays admitted with its failed nodes
//! in `status.unhealthyNodes` and is tried again on every pass.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::plan::{Effect, Planned, plan};
use super::{AdmissionLoop, workload_key};
use crate::api::keys::{condition_types, evicted_reasons};
use crate::api::workload_status::UnhealthyNode;
use crate::api::{Workload, WorkloadStatus};
use crate::controllers::events::WorkloadEvent;
use crate::controllers::node_health::NodeFailures;
use crate::engine::EvictionReason;
use crate::engine::features::Feature;
use crate::engine::topology::model::DomainAssignment;
use crate::engine::topology::node_failure::FailedNode;
use crate::engine::topology::node_health::{HotSwap, NoReplacementCause, ReplacedPodSet};

/// Event reason of a replacement (kuota's; Kueue records none).
pub const NODES_REPLACED: &str = "FailedNodesReplaced";

/// A replacement being written: the failed nodes and what replaced them.
#[derive(Clone, Debug)]
pub struct Replacing {
    pub failed: Vec<FailedNode>,
    pub pod_sets: Vec<ReplacedPodSet>,
}

impl Replacing {
    /// When the earliest of the replaced nodes failed.
    fn failed_since(&self) -> Option<Timestamp> {
        self.failed.iter().map(|f| f.since).min()
    }

    /// The event recorded once the replacement is written.
    fn event(&self, now: &Time) -> WorkloadEvent {
        let names: Vec<&str> = self.failed.iter().map(|f| f.name.as_str()).collect();
        let hosts = |domains: &[DomainAssignment]| {
            domains
                .iter()
                .map(|d| format!("{} ({})", d.values.join("/"), d.count))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let moves: Vec<String> = self
            .pod_sets
            .iter()
            .map(|p| {
                format!(
                    "pod set {}: {} -> {}",
                    p.pod_set,
                    hosts(&p.removed),
                    hosts(&p.added)
                )
            })
            .collect();
        let took = self
            .failed_since()
            .map_or(0.0, |since| seconds_between(since, now.0));
        WorkloadEvent {
            warning: false,
            reason: NODES_REPLACED.to_string(),
            note: format!(
                "Replaced unhealthy node(s) {} {took:.1}s after the failure; {}",
                names.join(", "),
                moves.join("; ")
            ),
        }
    }
}

fn seconds_between(from: Timestamp, to: Timestamp) -> f64 {
    (to.as_millisecond() - from.as_millisecond()).max(0) as f64 / 1000.0
}

fn unhealthy(failed: &[FailedNode]) -> Vec<UnhealthyNode> {
    failed
        .iter()
        .map(|f| UnhealthyNode {
            name: f.name.clone(),
        })
        .collect()
}

impl AdmissionLoop {
    /// Takes what the node-health loop found about one Workload.
    pub(super) fn node_failures(&mut self, report: NodeFailures) {
        if report.failed.is_empty() {
            self.failed_nodes.remove(&report.workload);
            self.recovered.insert(report.workload);
        } else {
            self.recovered.remove(&report.workload);
            self.failed_nodes.insert(report.workload, report.failed);
        }
    }

    /// Replaces or evicts, at `now`, each Workload with failed nodes that has no write pending;
    /// clears `status.unhealthyNodes` of those whose nodes recovered.
    pub(super) fn replace_failed_nodes(&mut self, now: &Time) {
        self.clear_recovered();
        let candidates: Vec<String> = self
            .failed_nodes
            .keys()
            .filter(|key| {
                !self.in_flight.contains_key(*key)
                    && !self.assumed.contains_key(*key)
                    && !self.held.contains(*key)
                    && !self.stale.contains_key(*key)
                    && !self.retries.contains_key(*key)
            })
            .cloned()
            .collect();
        for key in candidates {
            let (Some(read), Some(failed)) = (
                self.workloads.get(&key).cloned(),
                self.failed_nodes.get(&key).cloned(),
            ) else {
                self.failed_nodes.remove(&key);
                continue;
            };
            let names: BTreeSet<String> = failed.iter().map(|f| f.name.clone()).collect();
            let wk = workload_key(&key);
            let gates = self.state.engine().features().clone();
            match self.state.replace_nodes_of(&wk, &names, &gates) {
                None => {
                    // Not admitted, or the failed nodes are no longer in its assignment.
                    self.failed_nodes.remove(&key);
                }
                Some(HotSwap::Replaced { pod_sets, .. }) => {
                    tracing::info!(workload = %key, nodes = ?names, "failed nodes replaced");
                    self.replacing
                        .insert(key.clone(), Replacing { failed, pod_sets });
                    self.dirty.insert(key);
                }
                Some(HotSwap::Evicted(why)) => {
                    let fail_fast = gates.enabled(Feature::TASFailedNodeReplacementFailFast);
                    if !fail_fast && matches!(why.cause, NoReplacementCause::NoFit(_)) {
                        tracing::debug!(workload = %key, detail = why.detail(), "no replacement yet; tried again");
                        self.wait_for_replacement(&key, &read, &failed);
                        continue;
                    }
                    tracing::info!(workload = %key, detail = why.detail(), "no replacement for failed nodes; evicted");
                    self.evict_for_node_failures(&key, &read, why.message(), now);
                }
            }
        }
    }

    /// A Workload still waiting for a replacement whose nodes are healthy again no longer lists
    /// them in `status.unhealthyNodes`.
    fn clear_recovered(&mut self) {
        let due: Vec<String> = self
            .recovered
            .iter()
            .filter(|key| !self.in_flight.contains_key(*key) && !self.assumed.contains_key(*key))
            .cloned()
            .collect();
        for key in due {
            self.recovered.remove(&key);
            let Some(read) = self.workloads.get(&key) else {
                continue;
            };
            let mut status = read.status.clone().unwrap_or_default();
            if status.unhealthy_nodes.is_empty() {
                continue;
            }
            status.unhealthy_nodes.clear();
            let planned = Planned {
                effect: Effect::Update,
                status,
                annotations: None,
            };
            self.send(key, planned);
        }
    }

    /// Without fail-fast, a Workload without a replacement keeps its admission and shows its
    /// failed nodes in `status.unhealthyNodes` (so the ungater keeps its pods off them).
    fn wait_for_replacement(&mut self, key: &str, read: &Workload, failed: &[FailedNode]) {
        let mut status = read.status.clone().unwrap_or_default();
        let wanted = unhealthy(failed);
        if status.unhealthy_nodes == wanted {
            return;
        }
        status.unhealthy_nodes = wanted.into();
        self.send(
            key.to_string(),
            Planned {
                effect: Effect::Update,
                status,
                annotations: None,
            },
        );
    }

    fn evict_for_node_failures(&mut self, key: &str, read: &Workload, message: String, now: &Time) {
        let wk = workload_key(key);
        let engine = self.state.engine();
        if !engine.evict_workload(&wk, EvictionReason::NodeFailures, message) {
            return;
        }
        let Some(state) = engine.state(&wk) else {
            return;
        };
        let Some(mut planned) = plan(read, &state, now) else {
            return;
        };
        if planned.effect != Effect::Release {
            return;
        }
        planned.status.unhealthy_nodes.clear();
        self.failed_nodes.remove(key);
        self.assume(key, &planned);
        self.send(key.to_string(), planned);
    }

    /// A replacement's write landed: its event and how long it took from the failure.
    pub(super) fn replacement_written(
        &self,
        replacing: &Replacing,
        before: &Workload,
        stored: &Workload,
        now: &Time,
    ) {
        self.events.record(before, vec![replacing.event(now)]);
        if let Some(since) = replacing.failed_since() {
            self.metrics
                .node_replaced(stored, seconds_between(since, now.0));
        }
    }

    /// Counts a written eviction for node failures under the ClusterQueue it left.
    pub(super) fn node_failure_eviction_written(&self, before: &Workload, after: &WorkloadStatus) {
        let evicted = |status: Option<&WorkloadStatus>| {
            status.is_some_and(|s| {
                s.conditions.iter().any(|c| {
                    c.type_ == condition_types::EVICTED
                        && c.status == "True"
                        && c.reason == evicted_reasons::NODE_FAILURES
                })
            })
        };
        if !evicted(Some(after)) || evicted(before.status.as_ref()) {
            return;
        }
        if let Some(admission) = before.status.as_ref().and_then(|s| s.admission.as_ref()) {
            self.metrics
                .node_replacement_failed(&admission.cluster_queue);
        }
    }
}
