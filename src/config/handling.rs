//! The one record of how kuota treats each field of Kueue's `Configuration` (`v1beta2`, and the
//! fields only `v1beta1` has) and each feature gate: acted on, refused, or ignored because its
//! absence changes neither what is admitted nor what is counted. The loader refuses and reports
//! from this record, and `docs/configuration.md`'s table is checked against it.

use crate::engine::features::Feature;

/// What kuota does with a field that is set, or with a gate set to its non-default value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handling {
    /// kuota implements it as Kueue does.
    ActedOn,
    /// Loading fails, for this reason: without it, work would run outside quota, be counted
    /// otherwise, or be admitted otherwise than the admin asked.
    Refused(&'static str),
    /// Accepted and reported at start; its absence changes no admission and no count.
    Harmless,
}

impl Handling {
    /// The handling as `docs/configuration.md` spells it.
    pub fn label(self) -> &'static str {
        match self {
            Handling::ActedOn => "acted on",
            Handling::Refused(_) => "refused",
            Handling::Harmless => "ignored (harmless)",
        }
    }
}

use Handling::{ActedOn, Harmless, Refused};

const NO_MULTI_KUEUE: &str = "kuota does not dispatch Workloads to worker clusters (MultiKueue): \
                              Workloads of a MultiKueue admission check would never run";
const NO_ADMISSION_FAIR_SHARING: &str = "kuota does not order LocalQueues by their usage \
                                         (admission fair sharing), so it would admit in another \
                                         order than asked";
const NO_DEVICE_CLASS_MAPPINGS: &str = "kuota does not count DRA devices, so requests for them \
                                        would run outside quota";

/// Every field of Kueue's `Configuration`, by dotted path (`v1beta1`-only fields included). A
/// block kuota refuses or ignores as a whole is one row.
pub const FIELDS: &[(&str, Handling)] = &[
    ("namespace", ActedOn),
    ("manageJobsWithoutQueueName", ActedOn),
    ("managedJobsNamespaceSelector", ActedOn),
    ("waitForPodsReady.enable", ActedOn),
    ("waitForPodsReady.timeout", ActedOn),
    ("waitForPodsReady.blockAdmission", ActedOn),
    ("waitForPodsReady.recoveryTimeout", ActedOn),
    ("waitForPodsReady.requeuingStrategy.timestamp", ActedOn),
    (
        "waitForPodsReady.requeuingStrategy.backoffLimitCount",
        ActedOn,
    ),
    (
        "waitForPodsReady.requeuingStrategy.backoffBaseSeconds",
        ActedOn,
    ),
    (
        "waitForPodsReady.requeuingStrategy.backoffMaxSeconds",
        ActedOn,
    ),
    ("integrations.frameworks", ActedOn),
    ("integrations.externalFrameworks", ActedOn),
    ("integrations.labelKeysToCopy", ActedOn),
    ("integrations.podOptions", Harmless),
    ("fairSharing.enable", ActedOn),
    ("fairSharing.preemptionStrategies", ActedOn),
    ("admissionFairSharing", Refused(NO_ADMISSION_FAIR_SHARING)),
    ("resources.quotaCheckStrategy", ActedOn),
    ("resources.excludeResourcePrefixes", ActedOn),
    ("resources.transformations", ActedOn),
    (
        "resources.deviceClassMappings",
        Refused(NO_DEVICE_CLASS_MAPPINGS),
    ),
    ("objectRetentionPolicies.workloads.afterFinished", ActedOn),
    (
        "objectRetentionPolicies.workloads.afterDeactivatedByKueue",
        ActedOn,
    ),
    ("featureGates", ActedOn),
    ("multiKueue", Refused(NO_MULTI_KUEUE)),
    ("leaderElection.leaderElect", ActedOn),
    ("leaderElection.resourceName", ActedOn),
    ("leaderElection.resourceNamespace", ActedOn),
    ("leaderElection.resourceLock", ActedOn),
    ("leaderElection.leaseDuration", ActedOn),
    ("leaderElection.renewDeadline", ActedOn),
    ("leaderElection.retryPeriod", ActedOn),
    ("clientConnection.qps", ActedOn),
    ("clientConnection.burst", ActedOn),
    ("metrics.bindAddress", ActedOn),
    ("metrics.enableClusterQueueResources", ActedOn),
    ("metrics.localQueueMetrics.enable", ActedOn),
    ("metrics.localQueueMetrics.localQueueSelector", ActedOn),
    ("metrics.customLabels", Harmless),
    ("health.healthProbeBindAddress", ActedOn),
    ("health.readinessEndpointName", ActedOn),
    ("health.livenessEndpointName", ActedOn),
    ("webhook.port", ActedOn),
    ("webhook.host", ActedOn),
    ("webhook.certDir", ActedOn),
    ("internalCertManagement.enable", ActedOn),
    ("internalCertManagement.webhookServiceName", ActedOn),
    ("internalCertManagement.webhookSecretName", ActedOn),
    ("tls.minVersion", ActedOn),
    ("tls.cipherSuites", ActedOn),
    ("tls.curvePreferences", ActedOn),
    ("pprofBindAddress", Harmless),
    ("controller.groupKindConcurrency", Harmless),
    ("controller.cacheSyncTimeout", ActedOn),
    ("visibilityServer.bindAddress", ActedOn),
    ("visibilityServer.bindPort", ActedOn),
    ("queueVisibility", Harmless),
];

/// How kuota treats the field at `path`, when it is one of Kueue's.
pub fn field(path: &str) -> Option<Handling> {
    FIELDS
        .iter()
        .find(|(known, _)| *known == path)
        .map(|(_, handling)| *handling)
}

const PLACEMENT: &str = "kuota does not implement this gate's other value, so topology \
                         placement would differ from what was asked";
const ORDER: &str = "kuota does not implement this gate's other value, so it would admit or \
                     preempt otherwise than asked";
const DRA: &str = "kuota does not implement this gate's other value, so Workloads using DRA \
                   devices would be admitted otherwise than asked";

/// How kuota treats a gate set away from Kueue's default.
pub fn gate(feature: Feature) -> Handling {
    use Feature::*;
    match feature {
        TopologyAwareScheduling
        | TASProfileMixed
        | TASBalancedPlacement
        | TASMultiLayerTopology
        | TASAssignmentsEncodingByHostnamePrefix
        | TASFailedNodeReplacement
        | TASFailedNodeReplacementFailFast
        | TASReplaceNodeOnPodTermination
        | TASReplaceNodeDueToNotReadyOverFixedTime
        | TASReplaceNodeOnNodeTaints
        | TASReplaceMultipleFailedNodes
        | FlavorFungibility
        | PartialAdmission
        | PrioritySortingWithinCohort
        | FairSharingPreemptWithinNominal
        | FairSharingPrioritizeNonBorrowing
        | AdmissionGatedBy
        | QuotaCheckStrategy
        | ReclaimablePods
        | DisableWaitForPodsReady
        | LocalQueueMetrics
        | ManagedJobsNamespaceSelectorAlwaysRespected
        | TLSOptions
        | AssignQueueLabelsForPods
        | FinishOrphanedWorkloads
        | PodIntegrationValidateGroupOwner
        | WorkloadValidationForPodSetMetadata
        | RejectUpdatesToCQWithInvalidOnFlavors
        | ElasticJobsViaWorkloadSlices
        | WorkloadPriorityClassDefaulting
        | CleanupProvisioningRequestsOnEviction
        | VisibilityOnDemand => ActedOn,
        TASRespectNodeAffinityPreferred
        | TASHandleOverlappingFlavors
        | TASRecomputeAssignmentWithinSchedulingCycle
        | SkipReassignmentForPodOwnedWorkloads
        | ElasticJobsViaWorkloadSlicesWithTAS => Refused(PLACEMENT),
        FlavorFungibilityPreserveScanProgress
        | PrioritizePreemptorWorkloads
        | RecomputeAssignmentUponPreemptionTargetsOverlap
        | ConcurrentAdmission
        | FastQuotaReleaseInPodIntegration
        | SchedulerLibraryIntegration
        | PriorityBoost => Refused(ORDER),
        KueueDRAIntegration | KueueDRARejectWorkloadsWhenDRADisabled => Refused(DRA),
        AdmissionFairSharing
        | SchedulingEquivalenceHashing
        | UnadmittedWorkloadsObservability
        | UnadmittedWorkloadsExplicitStatus
        | MultiKueue
        | MultiKueueAdaptersForCustomJobs
        | MultiKueueKubeConfigPathValidation
        | MultiKueueClusterProfile
        | MultiKueueOrchestratedPreemption
        | MultiKueueIncrementalDispatcherConfig
        | MultiKueueIncrementalDispatcherRespectConfigOrder
        | MultiKueueManagerQuotaAutomation
        | MultiKueueRemoteSpecSync
        | KueueDRAIntegrationExtendedResource
        | KueueDRAIntegrationPartitionableDevices
        | KueueDRAIntegrationConsumableCapacity
        | WorkloadRequestUseMergePatch
        | RemoveFinalizersWithStrictPatch
        | FailureRecoveryPolicy
        | CustomMetricLabels
        | MetricForWorkloadCreationLatency
        | MetricsForCohorts
        | SparkApplicationIntegration
        | DeferRayServiceFinalizationForRedisCleanup
        | LWSImmutableGroupSize
        | ValidateRayAndSparkJobUpdates
        | ShortWorkloadNames
        | WorkloadIdentifierAnnotations
        | TASCacheNodeMatchResults
        | TASCachingRemainingResources
        | TASCacheTopologyTree
        | VectorizedResourceRequests
        | WorkloadValidateResourcesAreNonNegative
        | TASValidateWorkloadSliceSize
        | SkipAncestorCheckForDeletedWorkloads => Harmless,
    }
}

#[cfg(test)]
mod tests;
