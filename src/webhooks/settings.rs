//! What the webhooks are configured with.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::namespaces::NamespaceView;
use crate::engine::features::{Feature, FeatureGates};
use crate::jobs::{JobScope, default_workload_priority_class};

/// What the webhooks need to decide: the feature gates in force (`PartialAdmission` decides
/// whether a Workload keeps `minCount`, other gates switch rules on or off as in Kueue).
#[derive(Clone, Debug, Default)]
pub struct Webhooks {
    pub gates: FeatureGates,
    /// The job frameworks Kueue's `integrations` enables, by Kueue's names (`batch/job`, ...),
    /// listed or implied; a disabled framework's webhooks allow everything unchanged.
    pub frameworks: BTreeSet<&'static str>,
    /// What the Pod and Job webhooks read besides the object.
    pub pods: PodSettings,
}

/// The configuration and cluster facts Kueue's Pod and Job webhooks decide with.
#[derive(Clone, Debug, Default)]
pub struct PodSettings {
    /// `pod` is listed in `integrations.frameworks`. When it is only implied (by `deployment`),
    /// Kueue takes over only the pods a parent suspends.
    pub plain_pods: bool,
    /// `manageJobsWithoutQueueName`, `managedJobsNamespaceSelector` and the parent kinds
    /// enabled integrations manage.
    pub scope: JobScope,
    /// Namespace labels and the namespaces holding a LocalQueue named `default`.
    pub namespaces: NamespaceView,
}

impl Webhooks {
    /// Kueue's `ApplyDefaultWorkloadPriorityClass` (gate `WorkloadPriorityClassDefaulting`): an
    /// object naming no WorkloadPriorityClass, whose owner no enabled integration manages, is
    /// labelled with the one named `default` when it exists.
    pub(super) fn default_priority_class(&self, meta: &mut ObjectMeta) {
        if self.gates.enabled(Feature::WorkloadPriorityClassDefaulting)
            && !self.pods.scope.has_managed_parent(meta)
        {
            default_workload_priority_class(
                meta,
                self.pods.namespaces.has_default_workload_priority_class(),
            );
        }
    }
}
