//! The order decisions reach the API so that the admissions it shows never exceed quota: a write
//! that frees quota (a release, or a claim that moves a workload off the admission it holds)
//! lands before any claim that uses that quota is sent. Until then such claims are held; if the
//! freeing write fails, the claims decided with its quota are undone.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::assumed::Assumption;
use super::plan::{Effect, Planned};
use super::{AdmissionLoop, EngineStatus, fallback, is_finished};
use crate::api::Workload;
use crate::api::workload_status::Admission;
use crate::engine::WorkloadState;

fn admission_of(workload: &Workload) -> Option<&Admission> {
    workload.status.as_ref().and_then(|s| s.admission.as_ref())
}

impl AdmissionLoop {
    /// Whether a write that frees quota has not landed yet: a release, or a freeing claim in
    /// flight. (A freeing claim that is itself held frees nothing until it is sent.)
    pub(super) fn releases_outstanding(&self) -> bool {
        self.assumed.iter().any(|(key, a)| {
            a.frees && (a.effect == Effect::Release || self.in_flight.contains(key))
        })
    }

    /// Holds `planned` in memory until it is written.
    pub(super) fn assume(&mut self, key: &str, planned: &Planned) {
        let held = self.workloads.get(key).and_then(admission_of);
        let frees = match planned.effect {
            Effect::Release => true,
            Effect::Claim => {
                held.is_some_and(|held| planned.status.admission.as_ref() != Some(held))
            }
            Effect::Update => false,
        };
        self.assumed.insert(
            key.to_string(),
            Assumption {
                effect: planned.effect,
                status: planned.status.clone(),
                annotations: planned.annotations.clone(),
                frees,
            },
        );
    }

    /// A workload whose write is in flight and whose admission the engine has changed since:
    /// evicted, or admitted somewhere else. The write in flight may still land with the admission
    /// it carries (or leave the one read in place), so quota the engine now counts as free may
    /// stay held in the API until the engine's new decision is written: that counts as an
    /// outstanding release. The new decision is assumed, so the write's answer is seen with it.
    pub(super) fn reassume_in_flight(&mut self, key: &str, state: &WorkloadState, now: &Time) {
        let Some(read) = self.workloads.get(key) else {
            return;
        };
        if is_finished(read) {
            return;
        }
        let previous = self.assumed.get(key);
        if previous.is_some_and(|a| a.effect == Effect::Release) {
            // Released already: the write in flight frees the quota; a new admission waits for it.
            return;
        }
        let status = crate::status::workload::workload_status(
            read.status.as_ref(),
            state,
            now,
            read.metadata.generation,
        );
        let admitted = matches!(&state.status, EngineStatus::Admitted(_));
        let decided = if admitted {
            status.admission.as_ref()
        } else {
            None
        };
        let in_flight = previous.map_or(admission_of(read), |a| a.status.admission.as_ref());
        if decided == in_flight {
            return;
        }
        let read_holds_other = admission_of(read).is_some_and(|held| decided != Some(held));
        let frees =
            read_holds_other || previous.is_some_and(|a| a.frees || a.status.admission.is_some());
        self.assumed.insert(
            key.to_string(),
            Assumption {
                effect: if admitted {
                    Effect::Claim
                } else {
                    Effect::Release
                },
                status,
                annotations: None,
                frees,
            },
        );
    }

    /// Sends the claims planned in this flush, or holds them. Claims wait while a release is
    /// outstanding; claims that move a workload off its admission go first, and the others wait
    /// until those have landed.
    pub(super) fn send_claims(&mut self, claims: Vec<(String, Planned)>, dropped_release: bool) {
        let hold_all = dropped_release || self.releases_outstanding();
        let (moves, fresh): (Vec<_>, Vec<_>) = claims
            .into_iter()
            .partition(|(key, _)| self.assumed.get(key).is_some_and(|a| a.frees));
        let hold_fresh = hold_all || !moves.is_empty();
        for (key, planned) in moves {
            if hold_all {
                self.held.insert(key);
            } else {
                self.send(key, planned);
            }
        }
        for (key, planned) in fresh {
            if hold_fresh {
                self.held.insert(key);
            } else {
                self.send(key, planned);
            }
        }
        if dropped_release {
            self.release_failed = true;
            self.resolve_held();
        }
    }

    /// Once no release is outstanding, the held claims are written, or, when a release failed,
    /// undone (they were decided on quota that turned out not to be free).
    pub(super) fn resolve_held(&mut self) {
        if self.releases_outstanding() {
            return;
        }
        let failed = std::mem::take(&mut self.release_failed);
        for key in std::mem::take(&mut self.held) {
            if failed {
                self.assumed.remove(&key);
                if let Some(read) = self.workloads.get(&key).cloned() {
                    self.state.restore_workload(&read, fallback());
                }
            }
            self.dirty.insert(key);
        }
    }
}
