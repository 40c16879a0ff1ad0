//! Kueue's `waitForPodsReady.blockAdmission`: while an admitted Workload's pods are not all
//! ready, nothing else is admitted, so two gangs never wait on each other's half-started pods.

use std::collections::BTreeSet;

use crate::api::keys::condition_types;
use crate::api::{HasConditions, Workload};
use crate::engine::WorkloadKey;

/// Whether `workload` holds an admission whose pods are not all ready yet.
pub fn admitted_not_ready(workload: &Workload) -> bool {
    let Some(status) = workload.status.as_ref() else {
        return false;
    };
    let finished = status.condition_is_true(condition_types::FINISHED);
    let ready = status.condition_is_true(condition_types::PODS_READY);
    status.admission.is_some() && !finished && !ready
}

/// The admitted Workloads whose pods are not ready, kept as Workloads are read.
#[derive(Debug, Default)]
pub struct Unready {
    /// `blockAdmission` is on.
    block: bool,
    keys: BTreeSet<WorkloadKey>,
}

impl Unready {
    pub fn new(block: bool) -> Self {
        Unready {
            block,
            keys: BTreeSet::new(),
        }
    }

    /// Records `workload` as read under `key`.
    pub fn seen(&mut self, key: &WorkloadKey, workload: &Workload) {
        if admitted_not_ready(workload) {
            self.keys.insert(key.clone());
        } else {
            self.keys.remove(key);
        }
    }

    pub fn gone(&mut self, key: &WorkloadKey) {
        self.keys.remove(key);
    }

    /// The admitted Workloads whose pods are not all ready, whose PodsReady timer runs.
    pub fn keys(&self) -> impl Iterator<Item = &WorkloadKey> {
        self.keys.iter()
    }

    /// Whether admission waits: `blockAdmission` is on and some admitted Workload is not ready.
    pub fn blocks(&self) -> bool {
        self.block && !self.keys.is_empty()
    }
}

#[cfg(test)]
mod tests;
