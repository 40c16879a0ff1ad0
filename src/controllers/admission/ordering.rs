//! The order decisions reach the API so that the admissions it shows never exceed quota: a write
//! that frees quota (a release, or a claim that moves a workload off the admission it holds)
//! lands before any claim that uses that quota is sent. Until then such claims are held; if the
//! freeing write fails, the claims decided with its quota are undone.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::assumed::{Assumption, overlay};
use super::plan::{Effect, Planned};
use super::{AdmissionLoop, EngineStatus, fallback, is_finished};
use crate::api::Workload;
use crate::api::workload_status::Admission;
use crate::engine::WorkloadState;

fn admission_of(workload: &Workload) -> Option<&Admission> {
    workload.status.as_ref().and_then(|s| s.admission.as_ref())
}

fn flavors_of(admission: Option<&Admission>) -> BTreeSet<&str> {
    admission
        .into_iter()
        .flat_map(|a| a.pod_set_assignments.iter())
        .flat_map(|p| p.flavors.values())
        .map(String::as_str)
        .collect()
}

impl AdmissionLoop {
    /// Whether a write that frees quota has not landed yet: a release, or a freeing claim in
    /// flight or sent with an answer that leaves open whether it landed. (A freeing claim that
    /// is itself held frees nothing until it is sent; neither does one about to be sent, so that
    /// a move whose earlier write may have landed does not wait for itself.) A workload the API
    /// may show with one of several admissions counts too, until that is settled.
    fn releases_outstanding(&self, sending: impl Fn(&str) -> bool) -> bool {
        let written = |key: &str| self.in_flight.contains_key(key) || !sending(key);
        self.assumed.iter().any(|(key, a)| {
            a.frees
                && (a.effect == Effect::Release
                    || self.in_flight.contains_key(key)
                    || (self.unconfirmed.contains_key(key) && written(key)))
        }) || self
            .unconfirmed
            .keys()
            .any(|key| written(key) && self.uncertain(key))
    }

    /// Whether writing `planned` may free quota the API shows held: a release, or a claim of an
    /// admission other than one the API may show now.
    pub(super) fn frees(&self, key: &str, planned: &Planned) -> bool {
        match planned.effect {
            Effect::Release => true,
            Effect::Claim => self
                .admissions_may_show(key)
                .into_iter()
                .any(|held| planned.status.admission.as_ref() != Some(held)),
            Effect::Update => false,
        }
    }

    /// Holds `planned` in memory until it is written.
    pub(super) fn assume(&mut self, key: &str, planned: &Planned) {
        let frees = self.frees(key, planned);
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
    /// Returns whether that decision is a new claim.
    pub(super) fn reassume_in_flight(
        &mut self,
        key: &str,
        state: &WorkloadState,
        now: &Time,
    ) -> bool {
        let Some(read) = self.as_api_may_show(key) else {
            return false;
        };
        if is_finished(&read) {
            return false;
        }
        let previous = self.assumed.get(key);
        if previous.is_some_and(|a| a.effect == Effect::Release) {
            // Released already: the write in flight frees the quota; a new admission waits for it.
            return false;
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
        let in_flight = previous.map_or(admission_of(&read), |a| a.status.admission.as_ref());
        if decided == in_flight {
            return false;
        }
        let read_holds_other = admission_of(&read).is_some_and(|held| decided != Some(held));
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
        admitted
    }

    /// Sends the claims planned in this flush, or holds them. Claims wait while a release is
    /// outstanding; claims that move a workload off its admission go first, and the others wait
    /// until those have landed. `unsent` are claims decided in this flush that cannot be sent
    /// yet (their workload has a write in flight or a retry pending): decided on quota a
    /// release frees, they are undone with the others if that release fails.
    pub(super) fn send_claims(
        &mut self,
        claims: Vec<(String, Planned)>,
        unsent: Vec<String>,
        dropped_release: bool,
    ) {
        let hold_all = dropped_release
            || self.releases_outstanding(|key| claims.iter().any(|(sent, _)| sent == key));
        let (moves, fresh): (Vec<_>, Vec<_>) = claims
            .into_iter()
            .partition(|(key, _)| self.assumed.get(key).is_some_and(|a| a.frees));
        let hold_fresh = hold_all || !moves.is_empty();
        if hold_fresh {
            self.held.extend(unsent);
        }
        let independent = self.independent_moves(&moves);
        for (key, planned) in moves {
            if hold_all || !independent.contains(&key) {
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

    /// The moves that may go out together: those that claim no flavor another of `moves` leaves
    /// (were that one refused, both would hold it in the API). The others wait for these to
    /// land. Moves that all depend on each other cannot be ordered; the first goes alone.
    pub(super) fn independent_moves(&self, moves: &[(String, Planned)]) -> BTreeSet<String> {
        let left: Vec<(&str, BTreeSet<&str>)> = moves
            .iter()
            .map(|(key, _)| {
                let held = self.admissions_may_show(key);
                (
                    key.as_str(),
                    held.into_iter().flat_map(|a| flavors_of(Some(a))).collect(),
                )
            })
            .collect();
        let mut independent: BTreeSet<String> = moves
            .iter()
            .filter(|(key, planned)| {
                let claimed = flavors_of(planned.status.admission.as_ref());
                left.iter()
                    .filter(|(other, _)| *other != key.as_str())
                    .all(|(_, leaves)| leaves.is_disjoint(&claimed))
            })
            .map(|(key, _)| key.clone())
            .collect();
        if independent.is_empty()
            && let Some((first, _)) = moves.first()
        {
            tracing::warn!(
                workload = %first,
                moves = moves.len(),
                "moves between flavors depend on each other; the first is written alone"
            );
            independent.insert(first.clone());
        }
        independent
    }

    /// Once no release is outstanding, the held claims are written, or, when a release failed,
    /// undone (they were decided on quota that turned out not to be free).
    pub(super) fn resolve_held(&mut self) {
        if self.releases_outstanding(|key| self.held.contains(key)) {
            return;
        }
        let failed = std::mem::take(&mut self.release_failed);
        for key in std::mem::take(&mut self.held) {
            if failed {
                self.undo(&key);
            }
            self.dirty.insert(key);
        }
    }

    /// Puts the engine back to what the API will show for `key`: the Workload as read, or, while
    /// a write of it that claims or releases is in flight, as that write will leave it.
    fn undo(&mut self, key: &str) {
        let Some(read) = self.as_api_may_show(key) else {
            return;
        };
        match self.in_flight.get(key).cloned().flatten() {
            Some(carried) => {
                self.state
                    .restore_workload(&overlay(&read, &carried), fallback());
                self.assumed.insert(key.to_string(), carried);
            }
            None => {
                self.assumed.remove(key);
                self.state.restore_workload(&read, fallback());
            }
        }
    }
}
