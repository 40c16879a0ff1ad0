//! Hot swap over [`ClusterState`]: the admitted TAS workloads whose nodes failed get replacements
//! or are evicted, by the engine's failed-node rule, against the topology admission places into.

use std::collections::{BTreeMap, HashMap};

use super::cluster::ClusterState;
use crate::engine::features::FeatureGates;
use crate::engine::topology::node_health::{HotSwap, NodeHealthView, hot_swap};
use crate::engine::{EvictionReason, WorkloadKey, WorkloadStatus};

impl ClusterState {
    /// Replaces the failed nodes of every admitted TAS workload, or evicts it (`NodeFailures`) and
    /// queues it again. Returns what happened to each workload that had a failed node.
    pub fn replace_failed_nodes(&mut self, gates: &FeatureGates) -> BTreeMap<WorkloadKey, HotSwap> {
        let nodes_by_hostname = self.nodes_by_hostname();
        let flavor_tolerations: HashMap<String, Vec<_>> = self
            .resource_flavors
            .iter()
            .map(|(name, (flavor, _))| (name.clone(), flavor.tolerations.clone()))
            .collect();
        let view = NodeHealthView {
            nodes_by_hostname: &nodes_by_hostname,
            flavor_tolerations: &flavor_tolerations,
            gates,
        };
        let admitted: Vec<WorkloadKey> = self
            .engine
            .states()
            .into_iter()
            .filter(|s| matches!(s.status, WorkloadStatus::Admitted(_)))
            .map(|s| s.workload)
            .collect();
        let mut outcomes = BTreeMap::new();
        for key in admitted {
            let Some(workload) = self.engine.workload(&key) else {
                continue;
            };
            let Some(topology) = self.topology_mut() else {
                break;
            };
            let Some(outcome) = hot_swap(topology, &workload, &view) else {
                continue;
            };
            match &outcome {
                HotSwap::Replaced { admission, .. } => {
                    let mut replaced = workload.clone();
                    replaced.admission = Some(admission.clone());
                    if let Err(error) = self.engine.upsert_workload(replaced) {
                        tracing::warn!(workload = %key, %error, "replacement not recorded");
                    }
                }
                HotSwap::Evicted(why) => {
                    self.engine
                        .evict_workload(&key, EvictionReason::NodeFailures, why.message());
                }
            }
            outcomes.insert(key, outcome);
        }
        outcomes
    }
}
