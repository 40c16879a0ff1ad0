//! Kueue's `waitForPodsReady` timeout, as its workload controller applies it: an admitted
//! Workload whose pods are not all ready in time is evicted with `PodsReadyTimeout`, its quota
//! released, and requeued only after the backoff its `requeueState` records. The Workload leaves
//! the engine at once (as one read back with that `requeueState` would), so no cycle of the same
//! pass admits it again before the write lands; a failed write brings it back as it was read.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::AdmissionLoop;
use super::ledger::Reads;
use super::plan::{Effect, plan};
use crate::api::workload_status::WorkloadEviction;
use crate::api::{WorkloadStatus, keys::evicted_reasons};
use crate::engine::{EvictionReason, WorkloadKey};
use crate::jobs::{PodsReadyTimeout, pods_ready_timeout};
use crate::status::deactivation::is_deactivation_target;

impl AdmissionLoop {
    /// Evicts the admitted Workloads whose PodsReady timer ran out at `now`.
    pub(super) fn pods_ready_timeouts(&mut self, now: &Time) {
        let Some(config) = self.watched.wait_for_pods_ready.clone() else {
            return;
        };
        let candidates: Vec<WorkloadKey> = self
            .watched
            .unready
            .keys()
            .filter(|key| {
                !self.ledger.in_flight(key)
                    && self.ledger.assumed(key).is_none()
                    && !self.ledger.stale(key)
                    && !self.ledger.retry_pending(key)
            })
            .cloned()
            .collect();
        for key in candidates {
            let Some(read) = self.workloads.read(&key).cloned() else {
                continue;
            };
            match pods_ready_timeout(&read, &config, now) {
                PodsReadyTimeout::NotTiming | PodsReadyTimeout::RunsOutAt(_) => {}
                PodsReadyTimeout::Deactivate { message } => {
                    // Marked already: `spec.active: false` is on its way.
                    if !is_deactivation_target(&read) {
                        self.requeuing_limit_exceeded(key, &read, message, now);
                    }
                }
                PodsReadyTimeout::Evict {
                    message,
                    underlying_cause,
                    requeue_state,
                } => {
                    let evicted = self.evict(&key, EvictionReason::PodsReadyTimeout, message);
                    let Some(state) = evicted else {
                        continue;
                    };
                    let Some(mut planned) = plan(&read, &state, now) else {
                        continue;
                    };
                    if planned.effect != Effect::Release {
                        continue;
                    }
                    tracing::info!(workload = %key, underlying_cause, "pods not ready in time; evicted");
                    let until = requeue_state.requeue_at.clone();
                    planned.status.requeue_state = Some(Box::new(requeue_state));
                    name_underlying_cause(&mut planned.status, underlying_cause);
                    self.send_eviction(key.clone(), planned);
                    self.keep_out(&key, until);
                }
            }
        }
    }
}

/// Kueue counts a PodsReady eviction under its underlying cause (`WaitForStart` or
/// `WaitForRecovery`) in `schedulingStats.evictions`.
fn name_underlying_cause(status: &mut WorkloadStatus, cause: &str) {
    let Some(stats) = status.scheduling_stats.as_mut() else {
        return;
    };
    let reason = evicted_reasons::PODS_READY_TIMEOUT;
    if let Some(uncaused) = stats
        .evictions
        .iter_mut()
        .find(|e| e.reason == reason && e.underlying_cause.is_empty())
    {
        uncaused.count -= 1;
    }
    stats.evictions.retain(|e| e.count > 0);
    match stats
        .evictions
        .iter_mut()
        .find(|e| e.reason == reason && e.underlying_cause == cause)
    {
        Some(counted) => counted.count = counted.count.saturating_add(1),
        None => stats.evictions.push(WorkloadEviction {
            reason: reason.to_owned(),
            underlying_cause: cause.to_owned(),
            count: 1,
        }),
    }
}
