//! Hot swap over [`ClusterState`]: the admitted TAS workloads whose nodes failed get replacements
//! or are evicted, by the engine's failed-node rule, against the topology admission places into.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use k8s_openapi::api::core::v1::Toleration;

use super::cluster::ClusterState;
use crate::engine::features::FeatureGates;
use crate::engine::topology::model::Node;
use crate::engine::topology::node_health::{HotSwap, NodeHealthView, hot_swap};
use crate::engine::{EvictionReason, WorkloadKey, WorkloadStatus};

/// Nodes by hostname and each flavor's tolerations, as hot swap reads them.
struct Views {
    nodes_by_hostname: HashMap<String, Node>,
    flavor_tolerations: HashMap<String, Vec<Toleration>>,
}

impl ClusterState {
    fn views(&self) -> Views {
        Views {
            nodes_by_hostname: self.nodes_by_hostname(),
            flavor_tolerations: self
                .resource_flavors
                .iter()
                .map(|(name, (flavor, _))| (name.clone(), flavor.tolerations.clone()))
                .collect(),
        }
    }

    /// Replaces the failed nodes of every admitted TAS workload, or evicts it (`NodeFailures`) and
    /// queues it again. Returns what happened to each workload that had a failed node.
    pub fn replace_failed_nodes(&mut self, gates: &FeatureGates) -> BTreeMap<WorkloadKey, HotSwap> {
        let views = self.views();
        let admitted: Vec<WorkloadKey> = self
            .engine
            .states()
            .into_iter()
            .filter(|s| matches!(s.status, WorkloadStatus::Admitted(_)))
            .map(|s| s.workload)
            .collect();
        let mut outcomes = BTreeMap::new();
        for key in admitted {
            let Some(outcome) = self.hot_swap(&key, &views, None, gates) else {
                continue;
            };
            if let HotSwap::Evicted(why) = &outcome {
                self.engine
                    .evict_workload(&key, EvictionReason::NodeFailures, why.message());
            }
            outcomes.insert(key, outcome);
        }
        outcomes
    }

    /// Hot swap for one admitted workload whose `failed` nodes (by name) failure detection found:
    /// a replacement is recorded in the engine at once, so the next admission cycle sees its
    /// capacity taken; an eviction is left to the caller (fail-fast decides). `None` when none
    /// of its assigned nodes is among `failed`.
    pub fn replace_nodes_of(
        &mut self,
        key: &WorkloadKey,
        failed: &BTreeSet<String>,
        gates: &FeatureGates,
    ) -> Option<HotSwap> {
        let views = self.views();
        self.hot_swap(key, &views, Some(failed), gates)
    }

    fn hot_swap(
        &mut self,
        key: &WorkloadKey,
        views: &Views,
        failed: Option<&BTreeSet<String>>,
        gates: &FeatureGates,
    ) -> Option<HotSwap> {
        if !matches!(
            self.engine.state(key).map(|s| s.status),
            Some(WorkloadStatus::Admitted(_))
        ) {
            return None;
        }
        let workload = self.engine.workload(key)?;
        let view = NodeHealthView {
            nodes_by_hostname: &views.nodes_by_hostname,
            flavor_tolerations: &views.flavor_tolerations,
            gates,
            failed,
        };
        let outcome = hot_swap(self.topology_mut()?, &workload, &view)?;
        if let HotSwap::Replaced { admission, .. } = &outcome {
            let mut replaced = workload;
            replaced.admission = Some(admission.clone());
            if let Err(error) = self.engine.upsert_workload(replaced) {
                tracing::warn!(workload = %key, %error, "replacement not recorded");
            }
        }
        Some(outcome)
    }
}
