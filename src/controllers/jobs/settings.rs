//! What the Job integration runs with, from the configuration.

use crate::engine::features::FeatureGates;
use crate::jobs::JobScope;

/// What the Job integration runs with.
#[derive(Clone, Debug, Default)]
pub struct JobSettings {
    pub gates: FeatureGates,
    /// `waitForPodsReady` is on: Workloads carry a `PodsReady` condition.
    pub wait_for_pods_ready: bool,
    /// Which Jobs are managed (`manageJobsWithoutQueueName`, `managedJobsNamespaceSelector`).
    pub scope: JobScope,
    /// `integrations.labelKeysToCopy`.
    pub label_keys_to_copy: Vec<String>,
}
