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

use super::AdmissionLoop;
use super::assumed::{Assumption, overlay};
use super::plan::{Effect, Planned};
use crate::api::Workload;
use crate::api::workload_status::Admission;
use crate::controllers::watches::SharedWorkload;

/// Admissions that may be stored, the latest last, and the resource version their writes were
/// fenced on: at most one of them landed.
#[derive(Clone, Debug)]
pub(super) struct Unconfirmed {
    fenced_on: Option<String>,
    claims: Vec<Assumption>,
}

impl AdmissionLoop {
    /// Records that `planned`, written at `fenced_on`, may be stored. Nothing is recorded once
    /// another version is read: the write was fenced on `fenced_on`, so that version shows
    /// whether it landed.
    pub(super) fn may_be_stored(
        &mut self,
        key: &str,
        fenced_on: Option<String>,
        planned: &Planned,
    ) {
        let read_since = self
            .workloads
            .get(key)
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
            Some(known) if known.fenced_on == fenced_on => {
                known
                    .claims
                    .retain(|c| c.status.admission != claim.status.admission);
                known.claims.push(claim);
            }
            _ => {
                let claims = vec![claim];
                self.unconfirmed
                    .insert(key.to_string(), Unconfirmed { fenced_on, claims });
            }
        }
    }

    /// Forgets the admission that may be stored once `read`, a version other than the one its
    /// write was fenced on, shows whether it was.
    pub(super) fn confirm(&mut self, key: &str, read: &Workload) {
        if self
            .unconfirmed
            .get(key)
            .is_some_and(|u| u.fenced_on != read.metadata.resource_version)
        {
            self.unconfirmed.remove(key);
        }
    }

    /// `key` as the API may show it: as read, with the latest admission that may be stored laid
    /// over it.
    pub(super) fn as_api_may_show(&self, key: &str) -> Option<SharedWorkload> {
        Some(self.may_show(key, self.workloads.shared(key)?))
    }

    /// `read`, the Workload `key` as read, as the API may show it.
    pub(super) fn may_show(&self, key: &str, read: SharedWorkload) -> SharedWorkload {
        match self.unconfirmed.get(key).and_then(|u| u.claims.last()) {
            Some(claim) => Arc::new(overlay(&read, claim)),
            None => read,
        }
    }

    /// Every admission the API may show for `key`: the one read, and those that may be stored.
    pub(super) fn admissions_may_show(&self, key: &str) -> Vec<&Admission> {
        let read = self
            .workloads
            .get(key)
            .and_then(|w| w.status.as_ref()?.admission.as_ref());
        let stored = self
            .unconfirmed
            .get(key)
            .into_iter()
            .flat_map(|u| &u.claims)
            .filter_map(|c| c.status.admission.as_ref());
        read.into_iter().chain(stored).collect()
    }

    /// Whether the API may show one of several admissions for `key`: the engine counts one, so
    /// the others' quota is held in the API but free in memory until that is settled.
    pub(super) fn uncertain(&self, key: &str) -> bool {
        let admissions = self.admissions_may_show(key);
        admissions
            .iter()
            .enumerate()
            .any(|(i, a)| admissions[..i].iter().any(|b| b != a))
    }
}
