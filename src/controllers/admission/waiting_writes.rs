//! A new Workload's waiting reason is written only once it has waited a while. Kueue writes
//! `QuotaReserved=False` when it tries a Workload as the head of its queue and fails, so a
//! Workload admitted soon after it was created never shows one; kuota evaluates every waiting
//! Workload at once, and without this would spend a status write on nearly every Workload that
//! waits even a moment.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use tokio::time::Instant;

use super::plan::{Effect, Planned};
use crate::api::keys::condition_types;
use crate::api::{Workload, WorkloadStatus};

/// Whether `planned` only sets the waiting reason of a Workload that holds no admission and
/// gets none: its `QuotaReserved=False` condition is all that changes.
pub fn waiting_only(read: &Workload, planned: &Planned) -> bool {
    let without_reason = |status: &WorkloadStatus| {
        let mut status = status.clone();
        status
            .conditions
            .retain(|c| c.type_ != condition_types::QUOTA_RESERVED);
        status
    };
    let old = read.status.clone().unwrap_or_default();
    planned.effect == Effect::Update
        && planned.annotations.is_none()
        && old.admission.is_none()
        && planned.status.admission.is_none()
        && planned
            .status
            .conditions
            .iter()
            .any(|c| c.type_ == condition_types::QUOTA_RESERVED && c.status == "False")
        && without_reason(&old) == without_reason(&planned.status)
}

/// New Workloads whose waiting reason is held back, and until when.
pub struct WaitingWrites {
    delay: Duration,
    /// Workloads seen for the first time less than `delay` ago: when their delay ends.
    not_before: BTreeMap<String, Instant>,
    /// Those of them whose waiting reason was held back.
    deferred: BTreeSet<String>,
}

impl WaitingWrites {
    pub fn new(delay: Duration) -> Self {
        WaitingWrites {
            delay,
            not_before: BTreeMap::new(),
            deferred: BTreeSet::new(),
        }
    }

    /// A Workload seen for the first time at `now`.
    pub fn first_seen(&mut self, key: &str, now: Instant) {
        self.not_before.insert(key.to_string(), now + self.delay);
    }

    /// Whether the waiting reason of `key` is held back at `now`; if so, it is asked for again
    /// by [`WaitingWrites::due`] once the delay ends.
    pub fn defer(&mut self, key: &str, now: Instant) -> bool {
        let held = self.not_before.get(key).is_some_and(|at| now < *at);
        if held {
            self.deferred.insert(key.to_string());
        }
        held
    }

    /// The Workloads whose delay has ended at `now` and whose waiting reason was held back;
    /// Workloads past their delay are forgotten.
    pub fn due(&mut self, now: Instant) -> Vec<String> {
        let mut due = Vec::new();
        let deferred = &mut self.deferred;
        self.not_before.retain(|key, at| {
            if now < *at {
                return true;
            }
            if deferred.remove(key) {
                due.push(key.clone());
            }
            false
        });
        due
    }

    pub fn forget(&mut self, key: &str) {
        self.not_before.remove(key);
        self.deferred.remove(key);
    }

    /// Moves every delay `by` into the past, as if that much time had gone by.
    #[cfg(test)]
    pub fn age(&mut self, by: Duration) {
        for at in self.not_before.values_mut() {
            *at = at.checked_sub(by).unwrap_or(*at);
        }
    }
}

#[cfg(test)]
mod tests;
