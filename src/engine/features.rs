//! Feature gates, with Kueue's names and defaults, so behaviour Kueue keeps behind a gate is switched
//! the same way in kuota (`--feature-gates TASBalancedPlacement=true,PartialAdmission=false`). One
//! gate is kuota's own, not Kueue's: `TASReplaceMultipleFailedNodes`.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use thiserror::Error;

macro_rules! features {
    ($($variant:ident => $default:expr),+ $(,)?) => {
        /// A gate kuota knows, spelled as in Kueue (or kuota's own, see the module doc).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Feature {
            $($variant),+
        }

        impl Feature {
            /// Every known gate.
            const ALL: &'static [Feature] = &[$(Feature::$variant),+];

            /// The gate's name as Kueue spells it.
            pub fn name(self) -> &'static str {
                match self {
                    $(Feature::$variant => stringify!($variant)),+
                }
            }

            /// Whether the gate is on when nothing says otherwise (Kueue's default, for a gate of
            /// Kueue's).
            fn default_enabled(self) -> bool {
                match self {
                    $(Feature::$variant => $default),+
                }
            }
        }
    };
}

features! {
    TopologyAwareScheduling => true,
    TASProfileMixed => true,
    TASBalancedPlacement => false,
    TASMultiLayerTopology => true,
    TASAssignmentsEncodingByHostnamePrefix => true,
    TASRecomputeAssignmentWithinSchedulingCycle => true,
    TASHandleOverlappingFlavors => true,
    TASRespectNodeAffinityPreferred => false,
    TASFailedNodeReplacement => true,
    TASFailedNodeReplacementFailFast => true,
    TASReplaceNodeOnPodTermination => true,
    TASReplaceNodeDueToNotReadyOverFixedTime => false,
    TASReplaceNodeOnNodeTaints => true,
    // kuota's own gate; Kueue has none of this name. On, every failed node of an admitted TAS
    // workload is replaced in one pass. Off, as Kueue does (it replaces one failed node at a time
    // and evicts with `NodeFailures` when another fails before the first is replaced), a workload
    // with more than one failed node is evicted.
    TASReplaceMultipleFailedNodes => true,
    FlavorFungibility => true,
    FlavorFungibilityPreserveScanProgress => true,
    PartialAdmission => true,
    PrioritySortingWithinCohort => true,
    PrioritizePreemptorWorkloads => false,
    RecomputeAssignmentUponPreemptionTargetsOverlap => true,
    SchedulingEquivalenceHashing => true,
    FairSharingPreemptWithinNominal => true,
    FairSharingPrioritizeNonBorrowing => true,
    AdmissionFairSharing => true,
    AdmissionGatedBy => true,
    UnadmittedWorkloadsObservability => true,
    QuotaCheckStrategy => true,
    ReclaimablePods => true,
    PriorityBoost => false,
    // Gates the engine does not consult (the controller and its configuration read some); known so
    // that every gate a Kueue user may set is accepted.
    VisibilityOnDemand => true,
    DisableWaitForPodsReady => false,
    MultiKueue => true,
    LocalQueueMetrics => true,
    ElasticJobsViaWorkloadSlices => true,
    ElasticJobsViaWorkloadSlicesWithTAS => false,
    SkipReassignmentForPodOwnedWorkloads => true,
    ManagedJobsNamespaceSelectorAlwaysRespected => true,
    KueueDRAIntegration => true,
    KueueDRAIntegrationExtendedResource => true,
    KueueDRARejectWorkloadsWhenDRADisabled => true,
    KueueDRAIntegrationPartitionableDevices => true,
    KueueDRAIntegrationConsumableCapacity => false,
    MultiKueueAdaptersForCustomJobs => true,
    WorkloadRequestUseMergePatch => false,
    MultiKueueKubeConfigPathValidation => true,
    MultiKueueClusterProfile => false,
    FailureRecoveryPolicy => false,
    TLSOptions => true,
    RemoveFinalizersWithStrictPatch => true,
    AssignQueueLabelsForPods => true,
    CustomMetricLabels => false,
    SparkApplicationIntegration => false,
    MultiKueueOrchestratedPreemption => false,
    ShortWorkloadNames => false,
    FastQuotaReleaseInPodIntegration => false,
    RejectUpdatesToCQWithInvalidOnFlavors => false,
    FinishOrphanedWorkloads => true,
    MultiKueueIncrementalDispatcherConfig => true,
    MultiKueueIncrementalDispatcherRespectConfigOrder => true,
    ConcurrentAdmission => false,
    MetricForWorkloadCreationLatency => true,
    MultiKueueManagerQuotaAutomation => false,
    WorkloadIdentifierAnnotations => true,
    WorkloadPriorityClassDefaulting => true,
    MetricsForCohorts => true,
    CleanupProvisioningRequestsOnEviction => true,
    UnadmittedWorkloadsExplicitStatus => false,
    DeferRayServiceFinalizationForRedisCleanup => true,
    TASCacheNodeMatchResults => true,
    TASCachingRemainingResources => true,
    TASCacheTopologyTree => true,
    SchedulerLibraryIntegration => false,
    VectorizedResourceRequests => true,
    WorkloadValidateResourcesAreNonNegative => true,
    TASValidateWorkloadSliceSize => true,
    WorkloadValidationForPodSetMetadata => true,
    LWSImmutableGroupSize => true,
    SkipAncestorCheckForDeletedWorkloads => true,
    MultiKueueRemoteSpecSync => true,
    PodIntegrationValidateGroupOwner => true,
    ValidateRayAndSparkJobUpdates => true,
}

impl Feature {
    /// Every known gate.
    pub fn all() -> impl Iterator<Item = Feature> {
        Feature::ALL.iter().copied()
    }

    /// Whether the gate is GA and locked to its default, as Kueue marks it: setting it to the other
    /// value is an error.
    fn locked(self) -> bool {
        matches!(
            self,
            Feature::ManagedJobsNamespaceSelectorAlwaysRespected | Feature::TLSOptions
        )
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a `--feature-gates` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FeatureGateError {
    #[error("feature gate {0:?} is unknown; known gates: {known}", known = known_names())]
    Unknown(String),
    #[error("feature gate entry {0:?} must have the form Name=true or Name=false")]
    Malformed(String),
    #[error("cannot set feature gate {feature} to {requested}, feature is locked to {locked_to}", requested = !locked_to)]
    Locked { feature: Feature, locked_to: bool },
}

fn known_names() -> String {
    Feature::ALL
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The gates in force: Kueue's defaults, with explicit overrides.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FeatureGates {
    overrides: BTreeMap<Feature, bool>,
}

impl FeatureGates {
    /// Whether `feature` is on.
    pub fn enabled(&self, feature: Feature) -> bool {
        self.overrides
            .get(&feature)
            .copied()
            .unwrap_or_else(|| feature.default_enabled())
    }

    /// Switches one gate.
    pub fn set(&mut self, feature: Feature, enabled: bool) {
        self.overrides.insert(feature, enabled);
    }

    /// Switches one gate as a user asked, refusing to move a locked gate off its default (Kubernetes
    /// feature-gate semantics).
    pub fn try_set(&mut self, feature: Feature, enabled: bool) -> Result<(), FeatureGateError> {
        if feature.locked() && enabled != feature.default_enabled() {
            return Err(FeatureGateError::Locked {
                feature,
                locked_to: feature.default_enabled(),
            });
        }
        self.set(feature, enabled);
        Ok(())
    }

    /// Builder form of [`FeatureGates::set`].
    pub fn with(mut self, feature: Feature, enabled: bool) -> Self {
        self.set(feature, enabled);
        self
    }
}

impl FromStr for Feature {
    type Err = FeatureGateError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Feature::ALL
            .iter()
            .copied()
            .find(|f| f.name() == name)
            .ok_or_else(|| FeatureGateError::Unknown(name.to_string()))
    }
}

impl FromStr for FeatureGates {
    type Err = FeatureGateError;

    /// Parses `Name=bool[,Name=bool...]`, the form Kubernetes components take; values are spelled
    /// as Go's `strconv.ParseBool` accepts them (`true`, `1`, `t`, `False`, ...).
    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        let mut gates = FeatureGates::default();
        for entry in spec.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let malformed = || FeatureGateError::Malformed(entry.to_string());
            let (name, value) = entry.split_once('=').ok_or_else(malformed)?;
            let enabled = parse_go_bool(value.trim()).ok_or_else(malformed)?;
            gates.try_set(name.trim().parse()?, enabled)?;
        }
        Ok(gates)
    }
}

/// The spellings Go's `strconv.ParseBool` accepts, which Kubernetes uses for gate values.
fn parse_go_bool(value: &str) -> Option<bool> {
    match value {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
