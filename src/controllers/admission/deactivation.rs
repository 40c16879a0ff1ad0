//! Kueue's deactivation of a Workload that a controller gave up on: the PodsReady timer past
//! `backoffLimitCount`, or an admission check that said Rejected, marks it
//! `DeactivationTarget=True` (a status write); a Workload so marked
//! and still active gets `spec.active: false` (a spec write); the engine then evicts it as
//! deactivated, which releases its quota, and its status names the target's reason.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::AdmissionLoop;
use super::ledger::Reads;
use super::plan::{Effect, Planned};
use crate::api::Workload;
use crate::api::keys::deactivation_reasons;
use crate::engine::WorkloadKey;
use crate::status::deactivation::deactivation_target;

impl AdmissionLoop {
    /// Marks `read` for deactivation: its requeues reached `backoffLimitCount`.
    pub(super) fn requeuing_limit_exceeded(
        &mut self,
        key: WorkloadKey,
        read: &Workload,
        message: &str,
        now: &Time,
    ) {
        tracing::info!(workload = %key, message, "requeuing limit reached; the Workload is deactivated");
        let reason = deactivation_reasons::REQUEUING_LIMIT_EXCEEDED;
        self.mark_for_deactivation(key, read, reason, message, now);
    }

    /// Marks `read` for deactivation for `reason`.
    pub(super) fn mark_for_deactivation(
        &mut self,
        key: WorkloadKey,
        read: &Workload,
        reason: &str,
        message: &str,
        now: &Time,
    ) {
        let status = deactivation_target(
            &read.status.clone().unwrap_or_default(),
            reason,
            message,
            now,
            read.metadata.generation,
        );
        let planned = Planned {
            effect: Effect::Update,
            status,
            annotations: None,
        };
        self.send(key, planned);
    }

    /// Asks for `spec.active: false` on every Workload marked for deactivation that has no write
    /// in flight, no retry pending and no conflict at the version read.
    pub(super) fn deactivations(&mut self) {
        let due: Vec<WorkloadKey> = self
            .watched
            .deactivating
            .iter()
            .filter(|key| !self.ledger.in_flight(key) && !self.ledger.retry_pending(key))
            .cloned()
            .collect();
        for key in due {
            let Some(read) = self.workloads.shared_read(&key) else {
                continue;
            };
            if self.ledger.stale_at(&key, &read.metadata.resource_version) {
                continue;
            }
            self.send_deactivation(key, read);
        }
    }
}
