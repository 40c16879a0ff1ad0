//! When each Workload that ended is due under `objectRetentionPolicies.workloads`, and what is
//! deleted then: a finished Workload `afterFinished` past its `Finished` condition's transition,
//! or the Job of a Workload Kueue deactivated `afterDeactivatedByKueue` past its eviction. Both
//! instants come from what the API holds, so every replica, and a controller restarted at any
//! moment, computes the same ones.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::ResourceExt;

use crate::api::keys::condition_types;
use crate::api::{Condition, Workload};
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

fn true_condition<'a>(workload: &'a Workload, type_: &str) -> Option<&'a Condition> {
    workload
        .status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == type_ && c.status == "True")
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
    if let Some(finished) = true_condition(workload, condition_types::FINISHED) {
        let after = policy.after_finished?;
        return Some((past(finished, after), Expired::Workload));
    }
    let after = policy.after_deactivated_by_kueue?;
    if workload.spec.active != Some(false) {
        return None;
    }
    let evicted = true_condition(workload, condition_types::EVICTED)
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

fn key(workload: &Workload) -> String {
    format!(
        "{}/{}",
        workload.namespace().unwrap_or_default(),
        workload.name_any()
    )
}

/// The Workloads the watch shows whose retention runs, ordered by when each is due.
#[derive(Debug)]
pub struct Schedule {
    policy: WorkloadRetention,
    /// Each such Workload as last read, with the instant it is due and what is deleted then.
    ended: BTreeMap<String, (Timestamp, Expired, SharedWorkload)>,
    due: BTreeSet<(Timestamp, String)>,
    /// Deletions sent and not answered yet: not handed out again meanwhile.
    deleting: BTreeSet<String>,
}

impl Schedule {
    pub fn new(policy: WorkloadRetention) -> Self {
        Schedule {
            policy,
            ended: BTreeMap::new(),
            due: BTreeSet::new(),
            deleting: BTreeSet::new(),
        }
    }

    /// Takes a change of the Workload watch.
    pub fn take(&mut self, change: Change<SharedWorkload>) {
        match change {
            Change::Apply(workload) => self.put(*workload),
            Change::Delete(workload) => self.remove(&key(&workload)),
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
        let key = key(&workload);
        self.remove(&key);
        if let Some((at, expired)) = deletion_due(&workload, self.policy) {
            self.due.insert((at, key.clone()));
            self.ended.insert(key, (at, expired, workload));
        }
    }

    fn remove(&mut self, key: &str) {
        if let Some((at, _, _)) = self.ended.remove(key) {
            self.due.remove(&(at, key.to_owned()));
        }
    }

    /// The earliest instant a Workload not being deleted is due.
    pub fn next(&self) -> Option<Timestamp> {
        self.due
            .iter()
            .find(|(_, key)| !self.deleting.contains(key))
            .map(|(at, _)| *at)
    }

    /// At most `limit` of the Workloads due at `now` and not being deleted, earliest first, each
    /// marked as being deleted.
    pub fn take_due(&mut self, now: Timestamp, limit: usize) -> Vec<(SharedWorkload, Expired)> {
        let due: Vec<String> = self
            .due
            .iter()
            .take_while(|(at, _)| *at <= now)
            .filter(|(_, key)| !self.deleting.contains(key))
            .take(limit)
            .map(|(_, key)| key.clone())
            .collect();
        due.into_iter()
            .filter_map(|key| {
                let (_, expired, workload) = self.ended.get(&key)?.clone();
                self.deleting.insert(key);
                Some((workload, expired))
            })
            .collect()
    }

    /// The deletion of `workload` was answered: done (deleted, or gone already) when `retry_at`
    /// is `None`; otherwise tried again from `retry_at` on, or as soon as the watch brings a
    /// newer version that is due.
    pub fn answered(&mut self, workload: &Workload, retry_at: Option<Timestamp>) {
        let key = key(workload);
        self.deleting.remove(&key);
        let Some(retry_at) = retry_at else {
            self.remove(&key);
            return;
        };
        if let Some((at, expired, read)) = self.ended.remove(&key) {
            self.due.remove(&(at, key.clone()));
            let at = at.max(retry_at);
            self.due.insert((at, key.clone()));
            self.ended.insert(key, (at, expired, read));
        }
    }
}

#[cfg(test)]
mod tests;
