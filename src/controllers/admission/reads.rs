//! Workloads read from the API (watch events and write answers) taken into the engine, as the
//! API may show them with what the ledger has assumed laid over; and the requeue backoffs that
//! keep a Workload out of the engine until they run out.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::ledger::{Reads, is_older, overlay};
use super::plan::{Effect, Planned};
use super::{AdmissionLoop, fallback};
use crate::api::{ObjectKey, Workload};
use crate::clock::Reading;
use crate::controllers::watches::read_workloads::ReadWorkloads;
use crate::controllers::watches::{Change, SharedWorkload};
use crate::engine::WorkloadKey;
use crate::status::requeue::{backoff_finished, waiting_until};

impl Reads for ReadWorkloads {
    fn shared_read(&self, key: &WorkloadKey) -> Option<SharedWorkload> {
        ReadWorkloads::shared(self, key)
    }

    fn read(&self, key: &WorkloadKey) -> Option<&Workload> {
        self.get(key)
    }
}

impl AdmissionLoop {
    pub(super) fn workload_change(&mut self, change: Change<SharedWorkload>, now: &Reading) {
        match change {
            Change::Apply(workload) => self.seen(*workload, now),
            Change::Delete(workload) => self.gone(&ObjectKey::of(&**workload)),
            Change::Reset(list) => {
                let listed: BTreeSet<WorkloadKey> =
                    list.iter().map(|w| ObjectKey::of(&**w)).collect();
                let missing: Vec<WorkloadKey> =
                    self.read_keys().filter(|k| !listed.contains(k)).collect();
                for key in missing {
                    self.gone(&key);
                }
                for workload in list {
                    self.seen(workload, now);
                }
            }
        }
    }

    /// The key of every Workload read, taken from the object itself.
    fn read_keys(&self) -> impl Iterator<Item = WorkloadKey> + '_ {
        self.workloads.keys()
    }

    /// A Workload read from the API (a watch event or a write's answer).
    pub(super) fn seen(&mut self, workload: SharedWorkload, now: &Reading) {
        let key = ObjectKey::of(&*workload);
        if let Some(known) = self.workloads.read(&key)
            && is_older(
                workload.metadata.resource_version.as_deref(),
                known.metadata.resource_version.as_deref(),
            )
        {
            return;
        }
        self.watched.seen(&key, &workload);
        self.settled_by(&key, &workload);
        if let Some(previous) = self.workloads.read(&key) {
            self.metrics.watched(
                previous,
                &workload,
                &now.time(),
                self.state.engine().structure(),
                &self.reports.objects.local_queues,
            );
        }
        // An eviction being written that starts a backoff keeps the Workload out already.
        let assumed_backoff = self
            .ledger
            .assumed(&key)
            .filter(|a| a.status.requeue_state.is_some())
            .map(|a| {
                let mut view = (*workload).clone();
                view.status = Some(a.status.clone());
                view
            });
        if let Some(until) = waiting_until(assumed_backoff.as_ref().unwrap_or(&*workload)).cloned()
        {
            self.state.delete_workload(&key);
            self.workloads.insert(workload);
            self.backoff.insert(key, until);
            return;
        }
        self.backoff.remove(&key);
        self.watched.unready.seen(&key, &workload);
        let seen = self.ledger.may_show(&key, workload.clone());
        match self.ledger.assumed(&key) {
            Some(assumption) => self
                .state
                .apply_workload(&overlay(&seen, assumption), fallback()),
            None => self.state.apply_workload(&seen, fallback()),
        }
        self.workloads.insert(workload);
        self.mark(key);
    }

    /// A Workload deleted: its quota is free for real, whatever was decided about it.
    pub(super) fn gone(&mut self, key: &WorkloadKey) {
        if self.workloads.remove(key).is_none() {
            return;
        }
        self.backoff.remove(key);
        self.watched.gone(key);
        self.waiting_reasons.forget(key);
        self.state.delete_workload(key);
        self.forget_decisions(key);
    }

    /// Every Workload read is looked at again.
    pub(super) fn look_at_every_workload(&mut self) {
        let keys: Vec<WorkloadKey> = self.read_keys().collect();
        for key in keys {
            self.mark(key);
        }
    }

    /// Puts the engine's state of `key` back to `view`, what the API will show.
    pub(super) fn restore(&mut self, view: &Workload) {
        self.state.restore_workload(view, fallback());
    }

    /// Keeps `key`, being evicted with a requeue backoff until `until`, out of the engine at
    /// once, as reading it back with that backoff would.
    pub(super) fn keep_out(&mut self, key: &WorkloadKey, until: Option<Time>) {
        self.state.delete_workload(key);
        if let Some(until) = until {
            self.backoff.insert(key.clone(), until);
        }
    }

    /// A failed write's decision is undone: `key` is taken as the API may show it, waiting out
    /// its backoff if that shows one.
    pub(super) fn back_to_read(&mut self, key: &WorkloadKey) {
        let Some(read) = self.ledger.as_api_may_show(key, &self.workloads) else {
            return;
        };
        match waiting_until(&read).cloned() {
            Some(until) => {
                self.backoff.insert(key.clone(), until);
            }
            None => {
                // A backoff the failed write would have started does not apply.
                self.backoff.remove(key);
                self.state.restore_workload(&read, fallback());
            }
        }
    }

    /// Ends the backoffs that ran out at `now` by marking those workloads requeued; the write's
    /// answer brings them into the engine.
    pub(super) fn end_backoffs(&mut self, now: &Time) {
        let due: Vec<WorkloadKey> = self
            .backoff
            .iter()
            .filter(|(key, until)| **until <= *now && !self.ledger.in_flight(key))
            .map(|(key, _)| key.clone())
            .collect();
        for key in due {
            self.backoff.remove(&key);
            let Some(read) = self.workloads.read(&key) else {
                continue;
            };
            let status = backoff_finished(
                &read.status.clone().unwrap_or_default(),
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
    }
}
