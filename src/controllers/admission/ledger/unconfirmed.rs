//! Admissions whose write failed in a way that may still have stored it: a timeout, a lost
//! connection, a server that failed after reading the request (an API server killed mid-write
//! does all three). Until a version of the Workload other than the one the write was fenced on
//! is read, the API may show that admission. Meanwhile the Workload is seen, decided and planned
//! as if it did: its quota stays taken, and should the engine evict it or move it, that is
//! written as a release, which claims on its quota wait for. Were it seen as read instead, a
//! failed retry or a preemption decided meanwhile would hand its quota to another workload while
//! the API may still hold it. Should the retry fail the same way with another admission,
//! either may be stored: the quota of all but the one the engine counts is an outstanding
//! release. Leaving an admission that may be stored is written as an eviction although it may
//! not have landed: only a write fenced on the same version settles it.

use std::sync::Arc;

use super::assumption::Unconfirmed;
use super::{Assumption, Ledger, Reads, overlay};
use crate::api::workload_status::Admission;
use crate::controllers::admission::plan::{Effect, Planned};
use crate::controllers::watches::SharedWorkload;
use crate::engine::WorkloadKey;

impl Ledger {
    /// Records that `planned`, written at `fenced_on`, may be stored. Nothing is recorded once
    /// another version is read: the write was fenced on `fenced_on`, so that version shows
    /// whether it landed.
    pub(super) fn may_be_stored(
        &mut self,
        key: &WorkloadKey,
        fenced_on: Option<String>,
        planned: &Planned,
        reads: &impl Reads,
    ) {
        let read_since = reads
            .read(key)
            .is_none_or(|read| read.metadata.resource_version != fenced_on);
        if planned.effect != Effect::Claim || read_since {
            return;
        }
        let claim = Assumption {
            effect: Effect::Claim,
            status: planned.status.clone(),
            annotations: planned.annotations.clone(),
            frees: false,
        };
        match self.unconfirmed.get_mut(key) {
            Some(known) if *known.fenced_on() == fenced_on => known.add(claim),
            _ => {
                self.unconfirmed
                    .insert(key.clone(), Unconfirmed::new(fenced_on, claim));
            }
        }
    }

    /// Whether an admission of `key` may be stored that no version read shows yet.
    pub fn unconfirmed(&self, key: &WorkloadKey) -> bool {
        self.unconfirmed.contains_key(key)
    }

    /// `key` as the API may show it: as read, with the latest admission that may be stored laid
    /// over it.
    pub fn as_api_may_show(&self, key: &WorkloadKey, reads: &impl Reads) -> Option<SharedWorkload> {
        Some(self.may_show(key, reads.shared_read(key)?))
    }

    /// `read`, the Workload `key` as read, as the API may show it.
    pub fn may_show(&self, key: &WorkloadKey, read: SharedWorkload) -> SharedWorkload {
        match self.unconfirmed.get(key).and_then(|u| u.claims().last()) {
            Some(claim) => Arc::new(overlay(&read, claim)),
            None => read,
        }
    }

    /// Every admission the API may show for `key`: the one read, and those that may be stored.
    pub fn admissions_may_show<'a>(
        &'a self,
        key: &WorkloadKey,
        reads: &'a impl Reads,
    ) -> Vec<&'a Admission> {
        let read = reads
            .read(key)
            .and_then(|w| w.status.as_ref()?.admission.as_ref());
        let stored = self
            .unconfirmed
            .get(key)
            .into_iter()
            .flat_map(|u| u.claims())
            .filter_map(|c| c.status.admission.as_ref());
        read.into_iter().chain(stored).collect()
    }

    /// Whether the API may show one of several admissions for `key`: the engine counts one, so
    /// the others' quota is held in the API but free in memory until that is settled.
    pub(super) fn uncertain(&self, key: &WorkloadKey, reads: &impl Reads) -> bool {
        let admissions = self.admissions_may_show(key, reads);
        admissions
            .iter()
            .enumerate()
            .any(|(i, a)| admissions[..i].iter().any(|b| b != a))
    }
}
