//! The write ledger: every decision about a Workload that the admission loop has made and the API
//! does not show settled yet, and the order those decisions may be written in. Kueue's scheduler
//! does the same with its cache (`assume`, write asynchronously, `forget` on failure); here the
//! writes of one pass go out concurrently, so the ledger also orders them.
//!
//! It keeps one invariant: **what the API shows as admitted never exceeds quota, even across
//! failed, conflicting or unconfirmed writes.** The rules that keep it:
//! - A decision that claims or releases quota is *assumed* (held in memory, laid over the
//!   Workload as read) from the moment it is made until its write is answered; a write that
//!   fails undoes it, so the workload waits again and its quota is free.
//! - A write that frees quota (a release, or a claim that moves a workload off the admission it
//!   holds) lands before any claim that uses that quota is sent: claims are *held* while such a
//!   release is outstanding, and undone if it fails (they were decided on quota that is not free).
//! - A claim whose write may have landed without an answer saying so (a timeout, a lost
//!   connection) is *unconfirmed*: until a newer version is read, the workload is seen with that
//!   admission, and leaving it is a release that claims wait for.
//! - A write refused for a conflict leaves the workload *stale* at the version read: nothing is
//!   written for it until a newer one is read. One that failed for a transient reason is *retried*
//!   once its time comes; meanwhile what was decided holds in memory.
//!
//! The ledger also keeps the work list (Workloads whose status may need a write), and the
//! replacements and placements that travel with a claim until it lands.

mod assumption;
mod order;
mod unconfirmed;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use tokio::time::Instant;

use self::assumption::Unconfirmed;
pub use self::assumption::{Assumption, is_older, overlay};
use super::plan::{Effect, Planned};
use super::replacement::Replacing;
use crate::api::Workload;
use crate::backoff::Backoff;
use crate::controllers::watches::SharedWorkload;
use crate::engine::WorkloadKey;
use crate::engine::topology::PlacementQuality;

/// The wait before a failed Workload write is tried again: 1 s doubling to 60 s, plus up to a
/// fifth, as the other tasks retry their objects.
pub const RETRY_BACKOFF: Backoff = Backoff {
    first: Duration::from_secs(1),
    cap: Duration::from_secs(60),
    jitter: 0.2,
};

/// The Workloads as last read, by key: what the ledger lays its decisions over.
pub trait Reads {
    fn shared_read(&self, key: &WorkloadKey) -> Option<SharedWorkload>;
    fn read(&self, key: &WorkloadKey) -> Option<&Workload>;
}

/// How a Workload's engine state is to be put back after a decision is undone: as the API may
/// show it, with the decision of a write still in flight laid over it if there is one.
#[derive(Debug)]
pub struct Undo {
    pub key: WorkloadKey,
    pub carried: Option<Assumption>,
}

/// What travels with a claim until it lands.
#[derive(Debug, Default)]
pub struct Landed {
    pub placement: Vec<(String, PlacementQuality)>,
    pub replaced: Option<Replacing>,
}

/// How a Workload status write was answered.
#[derive(Debug)]
pub enum Answer {
    /// Stored.
    Stored,
    /// Failed in a way that may have stored it, fenced on this resource version.
    MayHaveLanded { fenced_on: Option<String> },
    /// Not stored: a transient failure is retried at `retry_at`; any other leaves the Workload
    /// stale at `fenced_on`.
    Refused {
        transient: bool,
        fenced_on: Option<String>,
        retry_at: Instant,
    },
}

/// The decisions not yet settled in the API, and the Workloads that may need a write.
#[derive(Debug, Default)]
pub struct Ledger {
    /// Workloads whose status may need a write.
    marked: BTreeSet<WorkloadKey>,
    /// Decisions that claim or release quota and are not written yet.
    assumed: BTreeMap<WorkloadKey, Assumption>,
    /// Claims waiting until no release is outstanding (or undone if one fails).
    held: BTreeSet<WorkloadKey>,
    /// A release failed while claims were held: they were decided on quota that is not free.
    release_failed: bool,
    /// Writes sent and not answered, each with the decision it carries (none for a write that
    /// claims or releases nothing).
    in_flight: BTreeMap<WorkloadKey, Option<Assumption>>,
    /// Workloads whose last write conflicted at this resource version.
    stale: BTreeMap<WorkloadKey, Option<String>>,
    /// Workloads whose last write failed for a transient reason, and when to try again.
    retries: BTreeMap<WorkloadKey, Instant>,
    /// Consecutive failed writes of each Workload, for its retry backoff.
    failures: BTreeMap<WorkloadKey, u32>,
    /// Admissions whose write failed but may have been stored.
    unconfirmed: BTreeMap<WorkloadKey, Unconfirmed>,
    /// Replacements of failed nodes decided and not written yet.
    replacing: BTreeMap<WorkloadKey, Replacing>,
    /// How compact each unwritten TAS admission's placement is, for its event and metric.
    placements: BTreeMap<WorkloadKey, Vec<(String, PlacementQuality)>>,
}

impl Ledger {
    /// Marks `key` as possibly needing a write.
    pub fn mark(&mut self, key: WorkloadKey) {
        self.marked.insert(key);
    }

    pub fn mark_all(&mut self, keys: impl IntoIterator<Item = WorkloadKey>) {
        self.marked.extend(keys);
    }

    /// The Workloads marked since the last call.
    pub fn take_marked(&mut self) -> BTreeSet<WorkloadKey> {
        std::mem::take(&mut self.marked)
    }

    #[cfg(test)]
    pub fn marked(&self) -> usize {
        self.marked.len()
    }

    pub fn assumed(&self, key: &WorkloadKey) -> Option<&Assumption> {
        self.assumed.get(key)
    }

    pub fn in_flight(&self, key: &WorkloadKey) -> bool {
        self.in_flight.contains_key(key)
    }

    /// Whether any claim is held.
    pub fn holds_any(&self) -> bool {
        !self.held.is_empty()
    }

    pub fn held(&self, key: &WorkloadKey) -> bool {
        self.held.contains(key)
    }

    pub fn retry_pending(&self, key: &WorkloadKey) -> bool {
        self.retries.contains_key(key)
    }

    /// Whether the last write of `key` conflicted, at any version.
    pub fn stale(&self, key: &WorkloadKey) -> bool {
        self.stale.contains_key(key)
    }

    /// Whether the last write of `key` conflicted at `version`, the one read now.
    pub fn stale_at(&self, key: &WorkloadKey, version: &Option<String>) -> bool {
        self.stale.get(key).is_some_and(|rv| rv == version)
    }

    /// Whether nothing is pending for `key`: no decision assumed or held, no write in flight, no
    /// retry, no conflict.
    pub fn settled(&self, key: &WorkloadKey) -> bool {
        !self.in_flight(key)
            && !self.assumed.contains_key(key)
            && !self.held(key)
            && !self.stale(key)
            && !self.retry_pending(key)
    }

    /// Holds `planned` in memory until it is written.
    pub fn assume(&mut self, key: &WorkloadKey, planned: &Planned, reads: &impl Reads) {
        let frees = self.frees(key, planned, reads);
        self.assumed.insert(
            key.clone(),
            Assumption {
                effect: planned.effect,
                status: planned.status.clone(),
                annotations: planned.annotations.clone(),
                frees,
            },
        );
    }

    /// Forgets the decision assumed for `key` (the engine's state is the API's again).
    pub fn forget_assumption(&mut self, key: &WorkloadKey) {
        self.assumed.remove(key);
    }

    /// A write of `key` carrying `effect` handed to the writer: the decision it carries is in
    /// flight until its answer.
    pub fn sent(&mut self, key: &WorkloadKey, effect: Effect) {
        let carried = match effect {
            Effect::Update => None,
            Effect::Claim | Effect::Release => self.assumed.get(key).cloned(),
        };
        self.in_flight.insert(key.clone(), carried);
    }

    /// A write of `key` that carries no decision (the `spec.active: false` write) handed over.
    pub fn sent_other(&mut self, key: &WorkloadKey) {
        self.in_flight.insert(key.clone(), None);
    }

    /// The answer of a write of `key` came back: nothing of it is in flight any more.
    pub fn answer_arrived(&mut self, key: &WorkloadKey) {
        self.in_flight.remove(key);
    }

    /// Takes the answer to the status write `planned` of `key` (after
    /// [`Ledger::answer_arrived`]). Returns what travelled with a stored claim.
    pub fn answered(
        &mut self,
        key: &WorkloadKey,
        planned: &Planned,
        answer: Answer,
        reads: &impl Reads,
        retry_at: Instant,
    ) -> Landed {
        match answer {
            Answer::Stored => {
                let placement = if planned.effect == Effect::Claim {
                    self.placements.remove(key).unwrap_or_default()
                } else {
                    Vec::new()
                };
                let replaced = self.replacing.remove(key);
                if self
                    .assumed
                    .get(key)
                    .is_some_and(|a| a.status == planned.status)
                {
                    self.assumed.remove(key);
                }
                Landed {
                    placement,
                    replaced,
                }
            }
            Answer::MayHaveLanded { fenced_on } => {
                // As if still in flight: what was decided since stays decided and is written at
                // the retry.
                self.may_be_stored(key, fenced_on, planned, reads);
                self.retries.insert(key.clone(), retry_at);
                Landed::default()
            }
            Answer::Refused {
                transient,
                fenced_on,
                retry_at,
            } => {
                self.replacing.remove(key);
                let dropped = self.assumed.remove(key);
                if planned.effect == Effect::Release || dropped.is_some_and(|a| a.frees) {
                    self.release_failed = true;
                }
                if transient {
                    self.retries.insert(key.clone(), retry_at);
                } else if reads
                    .read(key)
                    .is_none_or(|w| w.metadata.resource_version == fenced_on)
                {
                    // Waits for a newer version; one read before this answer came settles it
                    // already, and no later read may come.
                    self.stale.insert(key.clone(), fenced_on);
                }
                Landed::default()
            }
        }
    }

    /// A write of `key` landed: its retries start over.
    pub fn write_landed(&mut self, key: &WorkloadKey) {
        self.failures.remove(key);
    }

    /// A write of `key` failed once more: the wait before it is tried again, doubling per
    /// consecutive failure and stretched by `unit` (a random draw in `[0, 1)`), so Workloads
    /// whose writes failed together are not all tried again together.
    pub fn retry_wait(&mut self, key: &WorkloadKey, unit: f64) -> Duration {
        let failures = self.failures.entry(key.clone()).or_default();
        *failures = failures.saturating_add(1);
        RETRY_BACKOFF.wait(*failures, unit)
    }

    /// A write of `key` failed for a transient reason: it is tried again at `at`.
    pub fn retry_at(&mut self, key: WorkloadKey, at: Instant) {
        self.retries.insert(key, at);
    }

    /// A write of `key` conflicted at `version`: nothing is written until a newer one is read.
    pub fn conflicted(&mut self, key: WorkloadKey, version: Option<String>) {
        self.stale.insert(key, version);
    }

    /// Marks the Workloads whose retry is due at `now`.
    pub fn retries_due(&mut self, now: Instant) {
        let due: Vec<WorkloadKey> = self
            .retries
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(key, _)| key.clone())
            .collect();
        for key in due {
            self.retries.remove(&key);
            self.marked.insert(key);
        }
    }

    /// When the next retry is due.
    pub fn next_retry(&self) -> Option<Instant> {
        self.retries.values().min().copied()
    }

    /// A version of `key` was read: a conflict at another version and an admission that may have
    /// been stored at another version are settled by it.
    pub fn seen(&mut self, key: &WorkloadKey, read: &Workload) {
        let version = &read.metadata.resource_version;
        if self
            .unconfirmed
            .get(key)
            .is_some_and(|u| u.fenced_on() != version)
        {
            self.unconfirmed.remove(key);
        }
        if self.stale.get(key).is_some_and(|rv| rv != version) {
            self.stale.remove(key);
        }
    }

    /// `key` was deleted: its quota is free for real, whatever was decided about it.
    pub fn forget(&mut self, key: &WorkloadKey) {
        self.marked.remove(key);
        self.assumed.remove(key);
        self.held.remove(key);
        self.stale.remove(key);
        self.unconfirmed.remove(key);
        self.placements.remove(key);
        self.replacing.remove(key);
        self.failures.remove(key);
    }

    /// How compact the placement of `key`'s admission being written is.
    pub fn placed(&mut self, key: WorkloadKey, quality: Vec<(String, PlacementQuality)>) {
        self.placements.insert(key, quality);
    }

    /// A replacement of `key`'s failed nodes decided, to be written like an admission.
    pub fn replacing(&mut self, key: WorkloadKey, replacing: Replacing) {
        self.replacing.insert(key.clone(), replacing);
        self.marked.insert(key);
    }

    pub fn is_replacing(&self, key: &WorkloadKey) -> bool {
        self.replacing.contains_key(key)
    }
}

#[cfg(test)]
mod tests;
