//! Kueue's second scheduling pass: a reservation whose topology-aware pod sets waited for their
//! ProvisioningRequest check is placed once every check says Ready, before the pass's admission
//! cycles, so the nodes provisioned for it are taken by it and not by a Workload admitted in
//! between. The new assignment is written as a claim, like any change of admission.

use std::collections::BTreeSet;

use super::AdmissionLoop;
use crate::engine::WorkloadKey;
use crate::engine::delayed_topology::DelayedPlacement;

impl AdmissionLoop {
    /// Places every reservation awaiting its delayed topology; returns those placed.
    pub(super) fn place_delayed(&mut self) -> BTreeSet<WorkloadKey> {
        let candidates: Vec<WorkloadKey> = self
            .watched
            .awaiting_placement
            .iter()
            .filter(|key| self.ledger.settled(key))
            .cloned()
            .collect();
        let mut placed = BTreeSet::new();
        for key in candidates {
            match self.state.engine().place_delayed(&key) {
                DelayedPlacement::Placed => {
                    tracing::info!(workload = %key, "delayed topology request placed");
                    placed.insert(key);
                }
                DelayedPlacement::NotYet { message } => {
                    tracing::debug!(workload = %key, message, "delayed topology request not placed yet");
                }
                DelayedPlacement::NothingPending => {}
            }
        }
        placed
    }
}
