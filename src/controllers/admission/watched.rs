//! What the admission loop follows about Workloads as it reads them, for Kueue's timers and
//! failed-node handling: whose pods are not ready, which await deactivation, when each runs out
//! of execution time, which have failed or recovered nodes, and which an admission check failed.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::jiff::Timestamp;

use super::pods_ready::Unready;
use crate::api::Workload;
use crate::config::WaitForPodsReady;
use crate::engine::WorkloadKey;
use crate::engine::topology::node_failure::FailedNode;
use crate::status::admission_checks::outcome;
use crate::status::deactivation::awaits_deactivation;
use crate::status::execution_time::execution_deadline;

pub(super) struct Watched {
    /// Admitted Workloads whose pods are not ready: their PodsReady timer runs, and with
    /// `waitForPodsReady.blockAdmission` they hold admission.
    pub unready: Unready,
    /// `waitForPodsReady`; `None` holds nobody to becoming ready.
    pub wait_for_pods_ready: Option<WaitForPodsReady>,
    /// Workloads marked `DeactivationTarget` and still active: `spec.active: false` is due.
    pub deactivating: BTreeSet<WorkloadKey>,
    /// Admitted Workloads with a maximum execution time, and when it runs out.
    pub execution_deadlines: BTreeMap<WorkloadKey, Timestamp>,
    /// Admitted Workloads whose nodes failed, as the node-health loop last reported them.
    pub failed_nodes: BTreeMap<WorkloadKey, Vec<FailedNode>>,
    /// Workloads whose failed nodes recovered: their `unhealthyNodes` may need clearing.
    pub recovered: BTreeSet<WorkloadKey>,
    /// Workloads not evicted yet with an admission check in Retry or Rejected.
    pub failed_checks: BTreeSet<WorkloadKey>,
}

impl Watched {
    pub fn new(wait_for_pods_ready: Option<WaitForPodsReady>) -> Self {
        let block_admission = wait_for_pods_ready
            .as_ref()
            .is_some_and(|w| w.block_admission);
        Watched {
            unready: Unready::new(block_admission),
            wait_for_pods_ready,
            deactivating: BTreeSet::new(),
            execution_deadlines: BTreeMap::new(),
            failed_nodes: BTreeMap::new(),
            recovered: BTreeSet::new(),
            failed_checks: BTreeSet::new(),
        }
    }

    /// Notes whether `workload`, just read, awaits `spec.active: false`, when it runs out of
    /// execution time, and whether an admission check failed it.
    pub fn seen(&mut self, key: &WorkloadKey, workload: &Workload) {
        if workload.status.as_ref().and_then(outcome).is_some() {
            self.failed_checks.insert(key.clone());
        } else {
            self.failed_checks.remove(key);
        }
        if awaits_deactivation(workload) {
            self.deactivating.insert(key.clone());
        } else {
            self.deactivating.remove(key);
        }
        match execution_deadline(workload) {
            Some(deadline) => {
                self.execution_deadlines.insert(key.clone(), deadline);
            }
            None => {
                self.execution_deadlines.remove(key);
            }
        }
    }

    pub fn gone(&mut self, key: &WorkloadKey) {
        self.failed_nodes.remove(key);
        self.recovered.remove(key);
        self.unready.gone(key);
        self.deactivating.remove(key);
        self.execution_deadlines.remove(key);
        self.failed_checks.remove(key);
    }
}
