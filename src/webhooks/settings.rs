//! What the webhooks are configured with.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::namespaces::NamespaceView;
use crate::engine::features::FeatureGates;

/// What the webhooks need to decide: the feature gates in force (`PartialAdmission` decides
/// whether a Workload keeps `minCount`, other gates switch rules on or off as in Kueue).
#[derive(Clone, Debug, Default)]
pub struct Webhooks {
    pub gates: FeatureGates,
    /// The job frameworks Kueue's `integrations` enables, by Kueue's names (`batch/job`, ...),
    /// listed or implied; a disabled framework's webhooks allow everything unchanged.
    pub frameworks: BTreeSet<&'static str>,
    /// What the Pod webhook reads besides the pod.
    pub pods: PodSettings,
}

/// The configuration and cluster facts Kueue's Pod webhook decides with.
#[derive(Clone, Debug, Default)]
pub struct PodSettings {
    /// `pod` is listed in `integrations.frameworks`. When it is only implied (by `deployment`,
    /// `statefulset` or `leaderworkerset`), Kueue takes over only the pods a parent suspends.
    pub plain_pods: bool,
    /// `manageJobsWithoutQueueName`.
    pub manage_jobs_without_queue_name: bool,
    /// `managedJobsNamespaceSelector`, resolved (Kueue's default leaves out `kube-system` and
    /// its own namespace); the default here, empty, selects every namespace.
    pub managed_jobs_namespace_selector: LabelSelector,
    /// The job kinds an enabled integration manages (listed frameworks other than `pod`, and
    /// `externalFrameworks`): a pod whose controlling owner is one of them is that
    /// integration's, not a plain pod.
    pub owner_kinds: BTreeSet<OwnerKind>,
    /// Namespace labels and the namespaces holding a LocalQueue named `default`.
    pub namespaces: NamespaceView,
}

/// An owner reference's `apiVersion` and `kind`, e.g. `batch/v1` and `Job`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OwnerKind {
    pub api_version: String,
    pub kind: String,
}

impl OwnerKind {
    /// The kind of `group`/`version` (the core group is empty, its apiVersion just `v1`).
    pub fn new(group: &str, version: &str, kind: &str) -> Self {
        let api_version = if group.is_empty() {
            version.to_owned()
        } else {
            format!("{group}/{version}")
        };
        OwnerKind {
            api_version,
            kind: kind.to_owned(),
        }
    }
}
