//! Planning each marked Workload's write after the engine's cycles and handing it to the writer
//! in the order the ledger allows: what is sent, assumed and held is recorded here.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use tokio::time::Instant;

use super::ledger::{Reads, overlay};
use super::plan::{Effect, Planned, plan};
use super::replacement::Replacing;
use super::requests::WriteRequest;
use super::waiting_reasons::{only_waiting_reason, queue_order};
use super::{AdmissionLoop, Decided, is_finished};
use crate::api::Workload;
use crate::clock::Reading;
use crate::engine::{WorkloadKey, WorkloadState, WorkloadStatus as EngineStatus};

impl AdmissionLoop {
    /// Marks `key` as possibly needing a write.
    pub(super) fn mark(&mut self, key: WorkloadKey) {
        self.ledger.mark(key);
    }

    /// Plans and starts the writes of every marked workload, and of those `decided` touched.
    pub(super) fn flush(&mut self, decided: Decided, now: &Reading) {
        for (key, placement) in decided.placements {
            self.ledger.placed(key, placement);
        }
        self.ledger.mark_all(decided.touched);
        // Claims held behind writes that have settled since (a newer version read) go now.
        if self.ledger.holds_any() {
            self.resolve_held();
        }
        let time = now.time();
        let mut claims = Vec::new();
        // Claims decided for workloads that cannot be written yet (a write in flight, a retry
        // not due): they wait like held claims when a release is outstanding.
        let mut unsent_claims = Vec::new();
        let mut others = Vec::new();
        let mut waiting = Vec::new();
        let mut dropped_release = false;
        for key in self.ledger.take_marked() {
            let Some(read) = self.ledger.as_api_may_show(&key, &self.workloads) else {
                continue;
            };
            let Some(state) = self.decided_state(&key) else {
                continue;
            };
            if self.ledger.in_flight(&key) {
                if self.reassume_in_flight(&key, &state, &time) {
                    unsent_claims.push(key.clone());
                }
                self.ledger.mark(key);
                continue;
            }
            let Some(planned) = self.planned(&key, &read, &state, &time) else {
                self.ledger.forget_assumption(&key);
                continue;
            };
            if self.ledger.retry_pending(&key) {
                // Written again once the retry is due; until then the decision holds in memory.
                // One that no longer claims or releases (evicted before its admission was
                // written) holds nothing: a stale claim would be laid over the next read.
                if planned.effect == Effect::Update {
                    self.ledger.forget_assumption(&key);
                } else {
                    self.ledger.assume(&key, &planned, &self.workloads);
                }
                if planned.effect == Effect::Claim {
                    unsent_claims.push(key);
                }
                continue;
            }
            if self.ledger.stale_at(&key, &read.metadata.resource_version) {
                // The decision rests on an object that has changed: undo it until the newer
                // version is read.
                if planned.effect != Effect::Update {
                    self.ledger.forget_assumption(&key);
                    self.restore(&read);
                }
                // The claims decided with this quota free must not be written either: the
                // workload still holds it in the API until its release lands.
                dropped_release |= self.ledger.frees(&key, &planned, &self.workloads);
                continue;
            }
            match planned.effect {
                Effect::Update => {
                    self.ledger.forget_assumption(&key);
                    if planned.annotations.is_none()
                        && only_waiting_reason(read.status.as_ref(), &planned.status)
                    {
                        // Planned again if this period's budget lets it through.
                        waiting.push(key);
                    } else {
                        others.push((key, planned));
                    }
                }
                Effect::Release => {
                    self.ledger.assume(&key, &planned, &self.workloads);
                    others.push((key, planned));
                }
                Effect::Claim => {
                    self.ledger.assume(&key, &planned, &self.workloads);
                    claims.push((key, planned));
                }
            }
        }
        for (key, planned) in others {
            self.send(key, planned);
        }
        self.send_waiting_reasons(waiting, &time, now.instant);
        let send =
            self.ledger
                .order_claims(claims, unsent_claims, dropped_release, &self.workloads);
        for (key, planned) in send {
            self.send(key, planned);
        }
        if self.ledger.undo_due() {
            self.resolve_held();
        }
    }

    /// The write `key` needs as read and decided now, if any.
    fn plan_write(&mut self, key: &WorkloadKey, now: &Time) -> Option<Planned> {
        let state = self.decided_state(key)?;
        let read = self.ledger.as_api_may_show(key, &self.workloads)?;
        self.planned(key, &read, &state, now)
    }

    fn planned(
        &self,
        key: &WorkloadKey,
        seen: &Workload,
        state: &WorkloadState,
        now: &Time,
    ) -> Option<Planned> {
        // Planned on the object as the API may show it, so that leaving an admission that may be
        // stored is a release. Keeping that admission needs no write there: it is written again,
        // planned on the object as read.
        let on_view = plan(seen, state, now);
        let keeps_unconfirmed = self.ledger.unconfirmed(key)
            && matches!(state.status, EngineStatus::Admitted(_))
            && on_view.as_ref().is_none_or(|p| p.effect != Effect::Claim);
        let mut planned = match self.workloads.read(key) {
            Some(as_read) if keeps_unconfirmed => plan(as_read, state, now),
            _ => on_view,
        }?;
        if self.ledger.is_replacing(key) {
            // The new assignment leaves the failed nodes behind.
            planned.status.unhealthy_nodes.clear();
        }
        Some(planned)
    }

    /// A workload whose write is in flight and whose admission the engine has changed since is
    /// assumed with the new decision (see [`super::ledger::Ledger::redecided_in_flight`]).
    /// Returns whether that decision is a new claim.
    fn reassume_in_flight(&mut self, key: &WorkloadKey, state: &WorkloadState, now: &Time) -> bool {
        let Some(shown) = self.ledger.as_api_may_show(key, &self.workloads) else {
            return false;
        };
        if is_finished(&shown) || self.ledger.releasing(key) {
            // Released already: the write in flight frees the quota; a new admission waits for it.
            return false;
        }
        let status = crate::status::workload::workload_status(
            shown.status.as_ref(),
            state,
            now,
            shown.metadata.generation,
        );
        let admitted = matches!(&state.status, EngineStatus::Admitted(_));
        self.ledger
            .redecided_in_flight(key, &shown, status, admitted)
    }

    /// Once no release is outstanding, the held claims are written, or, when a release failed,
    /// undone: the engine is put back to what the API will show.
    pub(super) fn resolve_held(&mut self) {
        for undo in self.ledger.resolve_held(&self.workloads) {
            let Some(read) = self.ledger.as_api_may_show(&undo.key, &self.workloads) else {
                continue;
            };
            match &undo.carried {
                Some(carried) => self.restore(&overlay(&read, carried)),
                None => self.restore(&read),
            }
        }
    }

    /// Hands `planned` to the writer, carrying the decision it claims or releases.
    pub(super) fn send(&mut self, key: WorkloadKey, planned: Planned) {
        let Some(read) = self.workloads.shared_read(&key) else {
            return;
        };
        self.waiting_reasons.forget(&key);
        self.ledger.sent(&key, planned.effect);
        let flavors: Vec<_> = planned
            .status
            .admission
            .iter()
            .flat_map(|a| {
                a.pod_set_assignments
                    .iter()
                    .flat_map(|p| p.flavors.values())
            })
            .collect();
        tracing::debug!(workload = %key, effect = ?planned.effect, ?flavors, version = ?read.metadata.resource_version, "status write sent");
        let request = WriteRequest::Workload {
            key,
            read,
            planned: Box::new(planned),
        };
        if self.requests.send(request).is_err() {
            tracing::error!("the writer stopped; decisions are no longer written");
        }
    }

    /// Asks for `spec.active: false` on `read`.
    pub(super) fn send_deactivation(&mut self, key: WorkloadKey, read: Arc<Workload>) {
        self.ledger.sent_other(&key);
        if self
            .requests
            .send(WriteRequest::Deactivate { key, read })
            .is_err()
        {
            tracing::error!("the writer stopped; decisions are no longer written");
        }
    }

    /// Assumes and sends an eviction the loop decided outside the cycles.
    pub(super) fn send_eviction(&mut self, key: WorkloadKey, planned: Planned) {
        self.ledger.assume(&key, &planned, &self.workloads);
        self.send(key, planned);
    }

    /// A replacement of `key`'s failed nodes decided: written like an admission.
    pub(super) fn replacement_decided(&mut self, key: WorkloadKey, replacing: Replacing) {
        self.ledger.replacing(key, replacing);
    }

    /// Sends the waiting reasons the period's budget allows, front of the queue first (higher
    /// priority, then older), and keeps the rest due. Their statuses are planned again only
    /// when sent, so a deep queue holds no planned status for each of its Workloads.
    fn send_waiting_reasons(&mut self, waiting: Vec<WorkloadKey>, now: &Time, at: Instant) {
        let mut waiting: Vec<_> = waiting
            .into_iter()
            .filter_map(|key| Some((queue_order(self.workloads.read(&key)?), key)))
            .collect();
        waiting.sort();
        let granted = self.waiting_reasons.take_room(waiting.len(), at);
        let later = waiting.split_off(granted);
        for (_, key) in waiting {
            if let Some(planned) = self.plan_write(&key, now) {
                self.send(key, planned);
            }
        }
        if !later.is_empty() {
            tracing::debug!(
                deferred = later.len(),
                "waiting reasons beyond this period's budget wait for the next"
            );
        }
        self.waiting_reasons.defer(later);
    }

    /// Makes the front of the deferred waiting reasons due again once a new period has room.
    pub(super) fn due_waiting_reasons(&mut self, at: Instant) {
        let due = self.waiting_reasons.take_due(at);
        self.ledger.mark_all(due);
    }
}
