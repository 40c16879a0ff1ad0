//! When each Workload that ended is due under `objectRetentionPolicies.workloads`, and what is
//! deleted then: a finished Workload `afterFinished` past its `Finished` condition's transition,
//! or the Job of a Workload Kueue deactivated `afterDeactivatedByKueue` past its eviction. Both
//! instants come from what the API holds, so every replica, and a controller restarted at any
//! moment, computes the same ones.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::ResourceExt;

use crate::api::condition_lookup::HasConditions;
use crate::api::keys::condition_types;
use crate::api::{Condition, ObjectKey, Workload};
use crate::config::WorkloadRetention;
use crate::controllers::watches::{Change, SharedWorkload};

/// Kueue's eviction reasons for a Workload it deactivated itself begin so
/// (`DeactivatedDueToRequeuingLimitExceeded`, ...), as its `IsEvictedDueToDeactivationByKueue`
/// reads them. A Workload a user deactivated is evicted with `Deactivated` alone, and its Job is
/// never deleted.
const DEACTIVATED_BY_KUEUE_REASON_PREFIX: &str = "DeactivatedDueTo";

/// What ends when a retention period does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expired {
    /// The finished Workload itself.
    Workload,
    /// The batch/v1 Job (in the Workload's namespace) that owns a deactivated Workload; the
    /// Workload goes with it.
    Job { name: String, uid: String },
}

fn past(condition: &Condition, after: Duration) -> Timestamp {
    let after = SignedDuration::try_from(after).unwrap_or(SignedDuration::MAX);
    condition
        .last_transition_time
        .0
        .checked_add(after)
        .unwrap_or(Timestamp::MAX)
}

/// When `workload`'s retention ends and what is deleted then; `None` while it has not ended,
/// when no period applies, or when it is already being deleted. A finished Workload is kept by
/// `afterFinished` only; an inactive one evicted as deactivated by Kueue has its controlling Job
/// deleted `afterDeactivatedByKueue` after the eviction.
pub fn deletion_due(
    workload: &Workload,
    policy: WorkloadRetention,
) -> Option<(Timestamp, Expired)> {
    if workload.metadata.deletion_timestamp.is_some() {
        return None;
    }
    if let Some(finished) = workload.true_condition(condition_types::FINISHED) {
        let after = policy.after_finished?;
        return Some((past(finished, after), Expired::Workload));
    }
    let after = policy.after_deactivated_by_kueue?;
    if workload.spec.active != Some(false) {
        return None;
    }
    let evicted = workload
        .true_condition(condition_types::EVICTED)
        .filter(|c| c.reason.starts_with(DEACTIVATED_BY_KUEUE_REASON_PREFIX))?;
    let job = workload
        .owner_references()
        .iter()
        .find(|o| o.controller == Some(true) && o.api_version == "batch/v1" && o.kind == "Job")?;
    Some((
        past(evicted, after),
        Expired::Job {
            name: job.name.clone(),
            uid: job.uid.clone(),
        },
    ))
}

/// The Workloads the watch shows whose retention runs, ordered by when each is due.
#[derive(Debug)]
pub struct Schedule {
    policy: WorkloadRetention,
    /// Each such Workload as last read, with the instant it is due and what is deleted then.
    ended: BTreeMap<ObjectKey, (Timestamp, Expired, SharedWorkload)>,
    due: BTreeSet<(Timestamp, ObjectKey)>,
}

impl Schedule {
    pub fn new(policy: WorkloadRetention) -> Self {
        Schedule {
            policy,
            ended: BTreeMap::new(),
            due: BTreeSet::new(),
        }
    }

    /// Takes a change of the Workload watch.
    pub fn take(&mut self, change: Change<SharedWorkload>) {
        match change {
            Change::Apply(workload) => self.put(*workload),
            Change::Delete(workload) => self.remove(&ObjectKey::of(&**workload)),
            Change::Reset(workloads) => {
                self.ended.clear();
                self.due.clear();
                for workload in workloads {
                    self.put(workload);
                }
            }
        }
    }

    fn put(&mut self, workload: SharedWorkload) {
        let key = ObjectKey::of(&*workload);
        self.remove(&key);
        if let Some((at, expired)) = deletion_due(&workload, self.policy) {
            self.due.insert((at, key.clone()));
            self.ended.insert(key, (at, expired, workload));
        }
    }

    fn remove(&mut self, key: &ObjectKey) {
        if let Some((at, _, _)) = self.ended.remove(key) {
            self.due.remove(&(at, key.clone()));
        }
    }

    /// Every Workload whose retention runs.
    pub fn keys(&self) -> Vec<ObjectKey> {
        self.ended.keys().cloned().collect()
    }

    /// The Workloads due at `now`, earliest first.
    pub fn due_keys(&self, now: Timestamp) -> Vec<ObjectKey> {
        self.due
            .iter()
            .take_while(|(at, _)| *at <= now)
            .map(|(_, key)| key.clone())
            .collect()
    }

    /// The first instant after `now` a Workload falls due.
    pub fn next_after(&self, now: Timestamp) -> Option<Timestamp> {
        self.due.iter().map(|(at, _)| *at).find(|at| *at > now)
    }

    /// The Workload `key` as read, with what to delete, when it is due at `now`.
    pub fn due(&self, key: &ObjectKey, now: Timestamp) -> Option<(SharedWorkload, Expired)> {
        let (at, expired, workload) = self.ended.get(key)?;
        (*at <= now).then(|| (workload.clone(), expired.clone()))
    }

    /// The deletion of `key` was answered: done (deleted, or gone already) when `retry_at` is
    /// `None`; otherwise tried again from `retry_at` on, or as soon as the watch brings a newer
    /// version that is due.
    pub fn answered(&mut self, key: &ObjectKey, retry_at: Option<Timestamp>) {
        let Some(retry_at) = retry_at else {
            self.remove(key);
            return;
        };
        if let Some((at, expired, read)) = self.ended.remove(key) {
            self.due.remove(&(at, key.clone()));
            let at = at.max(retry_at);
            self.due.insert((at, key.clone()));
            self.ended.insert(key.clone(), (at, expired, read));
        }
    }
}

#[cfg(test)]
mod tests;
