//! Kueue's workload controller acting on what admission checks said: a check in `Rejected` marks
//! the Workload for deactivation (reason `AdmissionCheck`); a check in `Retry` evicts it with
//! reason `AdmissionCheck`, releasing its quota and setting its checks back to Pending, and keeps
//! it out of its queue until the latest retry time its checks asked for. The Workload leaves the
//! engine at once, as one read back with that backoff would; a failed write brings it back.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::AdmissionLoop;
use super::ledger::Reads;
use super::plan::{Effect, Planned, plan};
use crate::api::keys::deactivation_reasons;
use crate::api::workload_status::RequeueState;
use crate::engine::{EvictionReason, WorkloadKey};
use crate::status::admission_checks::{CheckOutcome, outcome, reset_on_eviction};
use crate::status::deactivation::is_deactivation_target;

impl AdmissionLoop {
    /// Deactivates or evicts the Workloads an admission check failed.
    pub(super) fn check_outcomes(&mut self, now: &Time) {
        let candidates: Vec<WorkloadKey> = self
            .watched
            .failed_checks
            .iter()
            .filter(|key| self.ledger.settled(key))
            .cloned()
            .collect();
        for key in candidates {
            let Some(read) = self.workloads.read(&key).cloned() else {
                continue;
            };
            match read.status.as_ref().and_then(outcome) {
                None => {}
                // Marked already: `spec.active: false` is on its way.
                Some(CheckOutcome::Reject { .. }) if is_deactivation_target(&read) => {}
                Some(CheckOutcome::Reject { message }) => {
                    tracing::info!(workload = %key, message, "an admission check rejected the Workload; it is deactivated");
                    let reason = deactivation_reasons::ADMISSION_CHECK;
                    self.mark_for_deactivation(key, &read, reason, &message, now);
                }
                Some(CheckOutcome::Retry { message, until }) => {
                    tracing::info!(workload = %key, message, "an admission check asked for a retry; the Workload is evicted");
                    self.retry(
                        key,
                        &read,
                        message,
                        until.unwrap_or_else(|| now.clone()),
                        now,
                    );
                }
            }
        }
    }

    /// Evicts `key` for its checks' Retry and keeps it out until `until`. A Workload that holds
    /// no quota only has its checks set back to Pending.
    fn retry(
        &mut self,
        key: WorkloadKey,
        read: &crate::api::Workload,
        message: String,
        until: Time,
        now: &Time,
    ) {
        let Some(state) = self.evict(&key, EvictionReason::AdmissionCheck, message) else {
            let mut status = read.status.clone().unwrap_or_default();
            reset_on_eviction(&mut status.admission_checks, now);
            let planned = Planned {
                effect: Effect::Update,
                status,
                annotations: None,
            };
            self.send(key, planned);
            return;
        };
        let Some(mut planned) = plan(read, &state, now) else {
            return;
        };
        if planned.effect != Effect::Release {
            return;
        }
        let count = read
            .status
            .as_ref()
            .and_then(|s| s.requeue_state.as_ref())
            .and_then(|r| r.count);
        planned.status.requeue_state = Some(Box::new(RequeueState {
            count,
            requeue_at: Some(until.clone()),
        }));
        self.send_eviction(key.clone(), planned);
        self.keep_out(&key, Some(until));
    }
}
