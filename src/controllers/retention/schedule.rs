//! When each finished Workload is due for deletion under `afterFinished`: its `Finished`
//! condition's transition time plus the retention, so every replica, and a controller restarted
//! at any moment, computes the same instant from what the API holds.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::ResourceExt;

use crate::api::Workload;
use crate::api::keys::condition_types;
use crate::controllers::watches::{Change, SharedWorkload};

/// The instant `workload` is due for deletion: `after` past the moment its `Finished` condition
/// turned true. `None` while it is not finished, or already being deleted.
pub fn deletion_due(workload: &Workload, after: Duration) -> Option<Timestamp> {
    if workload.metadata.deletion_timestamp.is_some() {
        return None;
    }
    let finished = workload
        .status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == condition_types::FINISHED && c.status == "True")?;
    let after = SignedDuration::try_from(after).unwrap_or(SignedDuration::MAX);
    Some(
        finished
            .last_transition_time
            .0
            .checked_add(after)
            .unwrap_or(Timestamp::MAX),
    )
}

fn key(workload: &Workload) -> String {
    format!(
        "{}/{}",
        workload.namespace().unwrap_or_default(),
        workload.name_any()
    )
}

/// The finished Workloads the watch shows, ordered by when each is due.
#[derive(Debug)]
pub struct Schedule {
    after: Duration,
    /// Each finished Workload as last read, with the instant it is due.
    finished: BTreeMap<String, (Timestamp, SharedWorkload)>,
    due: BTreeSet<(Timestamp, String)>,
    /// Deletions sent and not answered yet: not handed out again meanwhile.
    deleting: BTreeSet<String>,
}

impl Schedule {
    pub fn new(after: Duration) -> Self {
        Schedule {
            after,
            finished: BTreeMap::new(),
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
                self.finished.clear();
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
        if let Some(at) = deletion_due(&workload, self.after) {
            self.due.insert((at, key.clone()));
            self.finished.insert(key, (at, workload));
        }
    }

    fn remove(&mut self, key: &str) {
        if let Some((at, _)) = self.finished.remove(key) {
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
    pub fn take_due(&mut self, now: Timestamp, limit: usize) -> Vec<SharedWorkload> {
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
                let workload = self.finished.get(&key)?.1.clone();
                self.deleting.insert(key);
                Some(workload)
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
        if let Some((at, read)) = self.finished.remove(&key) {
            self.due.remove(&(at, key.clone()));
            let at = at.max(retry_at);
            self.due.insert((at, key.clone()));
            self.finished.insert(key, (at, read));
        }
    }
}

#[cfg(test)]
mod tests;
