//! What the webhooks are configured with.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::namespaces::NamespaceView;
use super::review::AdmissionRequest;
use crate::api::keys::labels;
use crate::engine::features::{Feature, FeatureGates};
use crate::jobs::{DEFAULT_LOCAL_QUEUE, JobScope, default_workload_priority_class};

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
    /// Kueue's defaulting of a job's metadata on creation, the same for every kind: the
    /// `default` LocalQueue for a job naming none (in a selected namespace that has it), then
    /// the `default` WorkloadPriorityClass. Returns whether kuota manages the job, so its kind
    /// suspends it.
    pub(super) fn default_job_metadata(
        &self,
        request: &AdmissionRequest,
        meta: &mut ObjectMeta,
    ) -> bool {
        let settings = &self.pods;
        let namespace = request.namespace_of(meta).to_owned();
        let namespace_labels = settings.namespaces.labels(&namespace);
        if settings.scope.takes_default_queue(
            meta,
            &namespace_labels,
            settings.namespaces.has_default_local_queue(&namespace),
        ) {
            meta.labels.get_or_insert_default().insert(
                labels::QUEUE_NAME.to_owned(),
                DEFAULT_LOCAL_QUEUE.to_owned(),
            );
        }
        self.default_priority_class(meta);
        settings.scope.manages(meta, &namespace_labels)
    }

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
