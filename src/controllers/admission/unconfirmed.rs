//! Admissions whose write failed in a way that may still have stored it: a timeout, a lost
//! connection, a server that failed after reading the request (an API server killed mid-write
//! does all three). Until a version of the Workload other than the one the write was fenced on
//! is read, the API may show that admission. Meanwhile the Workload is seen, decided and planned
//! as if it did: its quota stays taken, and should the engine evict it or move it, that is
//! written as a release, which claims on its quota wait for. Were it seen as read instead, a
//! failed retry or a preemption decided meanwhile would hand its quota to another workload while
//! the API may still hold it.

use std::sync::Arc;

use super::AdmissionLoop;
use super::assumed::{Assumption, overlay};
use super::plan::{Effect, Planned};
use crate::api::Workload;
use crate::controllers::watches::SharedWorkload;

/// An admission that may be stored, and the resource version its write was fenced on.
#[derive(Clone, Debug)]
pub(super) struct Unconfirmed {
    fenced_on: Option<String>,
    claim: Assumption,
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
        self.unconfirmed
            .insert(key.to_string(), Unconfirmed { fenced_on, claim });
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

    /// `key` as the API may show it: as read, with an admission that may be stored laid over it.
    pub(super) fn as_api_may_show(&self, key: &str) -> Option<SharedWorkload> {
        let read = self.workloads.shared(key)?;
        Some(match self.unconfirmed.get(key) {
            Some(unconfirmed) => Arc::new(overlay(&read, &unconfirmed.claim)),
            None => read,
        })
    }
}
