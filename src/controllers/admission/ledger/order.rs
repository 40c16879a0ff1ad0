//! The order decisions reach the API so that the admissions it shows never exceed quota: a write
//! that frees quota (a release, or a claim that moves a workload off the admission it holds)
//! lands before any claim that uses that quota is sent. Until then such claims are held; if the
//! freeing write fails, the claims decided with its quota are undone.

use std::collections::BTreeSet;

use super::{Assumption, Ledger, Reads, Undo};
use crate::api::workload_status::Admission;
use crate::api::{Workload, WorkloadStatus};
use crate::controllers::admission::plan::{Effect, Planned};
use crate::engine::WorkloadKey;

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

impl Ledger {
    /// Whether a write that frees quota has not landed yet: a release, or a freeing claim in
    /// flight or sent with an answer that leaves open whether it landed. (A freeing claim that
    /// is itself held frees nothing until it is sent; neither does one about to be sent, so that
    /// a move whose earlier write may have landed does not wait for itself.) A workload the API
    /// may show with one of several admissions counts too, until that is settled.
    fn releases_outstanding(
        &self,
        reads: &impl Reads,
        sending: impl Fn(&WorkloadKey) -> bool,
    ) -> bool {
        let written = |key: &WorkloadKey| self.in_flight.contains_key(key) || !sending(key);
        self.assumed.iter().any(|(key, a)| {
            a.frees
                && (a.effect == Effect::Release
                    || self.in_flight.contains_key(key)
                    || (self.unconfirmed.contains_key(key) && written(key)))
        }) || self
            .unconfirmed
            .keys()
            .any(|key| written(key) && self.uncertain(key, reads))
    }

    /// Whether writing `planned` may free quota the API shows held: a release, or a claim of an
    /// admission other than one the API may show now.
    pub fn frees(&self, key: &WorkloadKey, planned: &Planned, reads: &impl Reads) -> bool {
        match planned.effect {
            Effect::Release => true,
            Effect::Claim => self
                .admissions_may_show(key, reads)
                .into_iter()
                .any(|held| planned.status.admission.as_ref() != Some(held)),
            Effect::Update => false,
        }
    }

    /// The engine has changed the admission of `key`, whose write is in flight, since that write
    /// was sent: evicted it (`admitted` false), or admitted it elsewhere, to `status`; `shown` is
    /// the Workload as the API may show it. The write in flight may still land with the admission
    /// it carries (or leave the one read in place), so quota the engine now counts as free may
    /// stay held in the API until the new decision is written: that counts as an outstanding
    /// release. The new decision is assumed, so the write's answer is seen with it. Returns
    /// whether that decision is a new claim.
    pub fn redecided_in_flight(
        &mut self,
        key: &WorkloadKey,
        shown: &Workload,
        status: WorkloadStatus,
        admitted: bool,
    ) -> bool {
        let previous = self.assumed.get(key);
        let decided = if admitted {
            status.admission.as_ref()
        } else {
            None
        };
        let in_flight = previous.map_or(admission_of(shown), |a| a.status.admission.as_ref());
        if decided == in_flight {
            return false;
        }
        let read_holds_other = admission_of(shown).is_some_and(|held| decided != Some(held));
        let frees =
            read_holds_other || previous.is_some_and(|a| a.frees || a.status.admission.is_some());
        self.assumed.insert(
            key.clone(),
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

    /// Whether the decision assumed for `key` is a release: its write in flight frees the quota,
    /// and a new admission waits for it.
    pub fn releasing(&self, key: &WorkloadKey) -> bool {
        self.assumed
            .get(key)
            .is_some_and(|a| a.effect == Effect::Release)
    }

    /// Of the claims planned in one flush (already assumed), those that may be sent now; the
    /// others are held. Claims wait while a release is outstanding; claims that move a workload
    /// off its admission go first, and the others wait until those have landed. `unsent` are
    /// claims decided in this flush that cannot be sent yet (their workload has a write in
    /// flight or a retry pending): decided on quota a release frees, they are undone with the
    /// others if that release fails. `dropped_release`: a release of this flush was not written
    /// (its workload is stale), so every claim is held and undone; so are they while an earlier
    /// failed release's claims are still to be undone.
    pub fn order_claims(
        &mut self,
        claims: Vec<(WorkloadKey, Planned)>,
        unsent: Vec<WorkloadKey>,
        dropped_release: bool,
        reads: &impl Reads,
    ) -> Vec<(WorkloadKey, Planned)> {
        // A release failed and the claims held behind it wait to be undone: claims decided
        // meanwhile may rest on the quota it would have freed, so they wait with them.
        let hold_all = dropped_release
            || self.release_failed
            || self.releases_outstanding(reads, |key| claims.iter().any(|(sent, _)| sent == key));
        let (moves, fresh): (Vec<_>, Vec<_>) = claims
            .into_iter()
            .partition(|(key, _)| self.assumed.get(key).is_some_and(|a| a.frees));
        let hold_fresh = hold_all || !moves.is_empty();
        if hold_fresh {
            self.held.extend(unsent);
        }
        let independent = self.independent_moves(&moves, reads);
        let mut send = Vec::new();
        for (key, planned) in moves {
            if hold_all || !independent.contains(&key) {
                self.held.insert(key);
            } else {
                send.push((key, planned));
            }
        }
        for (key, planned) in fresh {
            if hold_fresh {
                self.held.insert(key);
            } else {
                send.push((key, planned));
            }
        }
        if dropped_release {
            self.release_failed = true;
        }
        send
    }

    /// The moves that may go out together: those that claim no flavor another of `moves` leaves
    /// (were that one refused, both would hold it in the API). The others wait for these to
    /// land. Moves that all depend on each other cannot be ordered; the first goes alone.
    pub fn independent_moves(
        &self,
        moves: &[(WorkloadKey, Planned)],
        reads: &impl Reads,
    ) -> BTreeSet<WorkloadKey> {
        let left: Vec<(&WorkloadKey, BTreeSet<&str>)> = moves
            .iter()
            .map(|(key, _)| {
                let held = self.admissions_may_show(key, reads);
                (
                    key,
                    held.into_iter().flat_map(|a| flavors_of(Some(a))).collect(),
                )
            })
            .collect();
        let mut independent: BTreeSet<WorkloadKey> = moves
            .iter()
            .filter(|(key, planned)| {
                let claimed = flavors_of(planned.status.admission.as_ref());
                left.iter()
                    .filter(|(other, _)| *other != key)
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

    /// Whether a release failed and the claims held behind it are still to be undone.
    pub fn undo_due(&self) -> bool {
        self.release_failed
    }

    /// Once no release is outstanding, the held claims are marked to be written, or, when a
    /// release failed, undone (they were decided on quota that turned out not to be free).
    /// Returns the undone ones, whose engine state the caller puts back.
    pub fn resolve_held(&mut self, reads: &impl Reads) -> Vec<Undo> {
        if self.held.is_empty() && !self.release_failed {
            return Vec::new();
        }
        if self.releases_outstanding(reads, |key| self.held.contains(key)) {
            return Vec::new();
        }
        let failed = std::mem::take(&mut self.release_failed);
        let mut undone = Vec::new();
        for key in std::mem::take(&mut self.held) {
            if failed && reads.read(&key).is_some() {
                // Back to what the API will show: as read, or, while a write of it that claims
                // or releases is in flight, as that write will leave it.
                let carried = self.in_flight.get(&key).cloned().flatten();
                match &carried {
                    Some(carried) => {
                        self.assumed.insert(key.clone(), carried.clone());
                    }
                    None => {
                        self.assumed.remove(&key);
                    }
                }
                undone.push(Undo {
                    key: key.clone(),
                    carried,
                });
            }
            self.marked.insert(key);
        }
        undone
    }
}
