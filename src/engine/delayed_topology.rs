//! Kueue's second scheduling pass for a delayed topology request: a reservation whose
//! topology-aware pod sets waited for their ProvisioningRequest check is placed once the check
//! says Ready, on the nodes that exist then (the ones provisioned for it among them), against the
//! usage admission sees. The caller runs it before any admission cycle, so no other Workload can
//! take that capacity first.

use super::decision::WorkloadKey;
use super::model::{DelayedTopologyRequestState, PodSetAssignment};
use super::scheduler::Engine;
use super::topology_placer::{TopologyQuery, TopologyVerdict};

/// What became of a reservation's delayed topology requests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DelayedPlacement {
    /// It holds no reservation with a pending request.
    NothingPending,
    /// Every pending pod set was placed; its admission now carries the assignments.
    Placed,
    /// Some pod set does not fit yet; nothing was placed.
    NotYet { message: String },
}

impl Engine {
    /// Places every pod set of `key`'s reservation whose topology request is pending, all or
    /// none.
    pub fn place_delayed(&mut self, key: &WorkloadKey) -> DelayedPlacement {
        let Some(index) = self.compiled.slot_of(key) else {
            return DelayedPlacement::NothingPending;
        };
        let slot = &self.compiled.workloads[index as usize];
        let Some(holding) = slot.holding.as_deref() else {
            return DelayedPlacement::NothingPending;
        };
        let pending = PodSetAssignment::awaits_placement;
        if !holding.admission.pod_set_assignments.iter().any(pending) {
            return DelayedPlacement::NothingPending;
        }
        let Some(cq) = holding.cq.and_then(|cq| self.compiled.cqs.get(cq as usize)) else {
            return DelayedPlacement::NotYet {
                message: format!("ClusterQueue {} not found", holding.admission.cluster_queue),
            };
        };
        let mut admission = holding.admission.clone();
        for assignment in admission
            .pod_set_assignments
            .iter_mut()
            .filter(|a| a.awaits_placement())
        {
            let Some((pod_set_index, pod_set)) = slot
                .model
                .pod_sets
                .iter()
                .enumerate()
                .find(|(_, p)| p.name == assignment.name)
            else {
                return DelayedPlacement::NotYet {
                    message: format!("pod set {} not found", assignment.name),
                };
            };
            // The topology-aware flavor of the pod set, as Kueue's `onlyTASFlavor` picks it.
            let mut flavors = assignment
                .flavors
                .values()
                .filter_map(|name| self.compiled.names.find_flavor(name))
                .filter_map(|id| self.compiled.flavors.get(id.0 as usize)?.as_ref());
            let Some(flavor) = flavors.find(|f| f.topology_name.is_some()) else {
                return DelayedPlacement::NotYet {
                    message: format!("pod set {} has no topology-aware flavor", assignment.name),
                };
            };
            let query = TopologyQuery {
                workload: &slot.model,
                pod_set_index,
                pod_set,
                count: assignment.count,
                flavor,
                cluster_queue: &cq.name,
                tas_only_cluster_queue: cq.tas_only,
                released: &[],
            };
            match self.placer.place(&query) {
                TopologyVerdict::Fits(placement) => {
                    assignment.topology_assignment = placement.map(|p| p.assignment);
                    assignment.delayed_topology = Some(DelayedTopologyRequestState::Ready);
                }
                TopologyVerdict::NotNow { message } | TopologyVerdict::Never { message } => {
                    return DelayedPlacement::NotYet { message };
                }
            }
        }
        let old = holding.admission.clone();
        self.placer.release(key, &old);
        self.placer.reserve(key, &admission);
        if let Some(holding) = self.compiled.workloads[index as usize]
            .holding
            .as_deref_mut()
        {
            holding.admission = admission;
        }
        DelayedPlacement::Placed
    }
}

#[cfg(test)]
mod tests;
