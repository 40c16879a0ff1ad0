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

use super::AdmissionLoop;
use super::ledger::Reads;
use super::plan::{Effect, Planned, plan};
use super::replacement::{Replacing, seconds_between};
use crate::api::keys::{condition_types, evicted_reasons};
use crate::api::workload_status::UnhealthyNode;
use crate::api::{HasConditions, Workload, WorkloadStatus};
use crate::controllers::node_health::NodeFailures;
use crate::engine::topology::node_failure::FailedNode;
use crate::engine::topology::node_health::{HotSwap, NoReplacementCause};
use crate::engine::{EvictionReason, WorkloadKey};

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
    pub fn node_failures(&mut self, report: NodeFailures) {
        let NodeFailures {
            workload: key,
            failed,
        } = report;
        if failed.is_empty() {
            self.watched.failed_nodes.remove(&key);
            self.watched.recovered.insert(key);
        } else {
            self.watched.recovered.remove(&key);
            self.watched.failed_nodes.insert(key, failed);
        }
    }

    /// Replaces or evicts, at `now`, each Workload with failed nodes that has no write pending;
    /// clears `status.unhealthyNodes` of those whose nodes recovered.
    pub(super) fn replace_failed_nodes(&mut self, now: &Time) {
        self.clear_recovered();
        let candidates: Vec<WorkloadKey> = self
            .watched
            .failed_nodes
            .keys()
            .filter(|key| self.ledger.settled(key))
            .cloned()
            .collect();
        for key in candidates {
            let (Some(read), Some(failed)) = (
                self.workloads.read(&key).cloned(),
                self.watched.failed_nodes.get(&key).cloned(),
            ) else {
                self.watched.failed_nodes.remove(&key);
                continue;
            };
            let names: BTreeSet<String> = failed.iter().map(|f| f.name.clone()).collect();
            let (swap, fail_fast) = self.replace_nodes(&key, &names);
            match swap {
                None => {
                    // Not admitted, or the failed nodes are no longer in its assignment.
                    self.watched.failed_nodes.remove(&key);
                }
                Some(HotSwap::Replaced { pod_sets, .. }) => {
                    tracing::info!(workload = %key, nodes = ?names, "failed nodes replaced");
                    self.replacement_decided(key, Replacing { failed, pod_sets });
                }
                Some(HotSwap::Evicted(why)) => {
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
        let due: Vec<WorkloadKey> = self
            .watched
            .recovered
            .iter()
            .filter(|key| !self.ledger.in_flight(key) && self.ledger.assumed(key).is_none())
            .cloned()
            .collect();
        for key in due {
            self.watched.recovered.remove(&key);
            let Some(read) = self.workloads.read(&key) else {
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
    fn wait_for_replacement(&mut self, key: &WorkloadKey, read: &Workload, failed: &[FailedNode]) {
        let mut status = read.status.clone().unwrap_or_default();
        let wanted = unhealthy(failed);
        if status.unhealthy_nodes == wanted {
            return;
        }
        status.unhealthy_nodes = wanted.into();
        self.send(
            key.clone(),
            Planned {
                effect: Effect::Update,
                status,
                annotations: None,
            },
        );
    }

    fn evict_for_node_failures(
        &mut self,
        key: &WorkloadKey,
        read: &Workload,
        message: String,
        now: &Time,
    ) {
        let Some(state) = self.evict(key, EvictionReason::NodeFailures, message) else {
            return;
        };
        let Some(mut planned) = plan(read, &state, now) else {
            return;
        };
        if planned.effect != Effect::Release {
            return;
        }
        planned.status.unhealthy_nodes.clear();
        self.watched.failed_nodes.remove(key);
        self.send_eviction(key.clone(), planned);
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
            status
                .true_condition(condition_types::EVICTED)
                .is_some_and(|c| c.reason == evicted_reasons::NODE_FAILURES)
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
