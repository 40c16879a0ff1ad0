use super::*;

#[test]
fn defaults_follow_kueue() {
    let gates = FeatureGates::default();
    assert!(!gates.enabled(Feature::TASBalancedPlacement));
    assert!(gates.enabled(Feature::PartialAdmission));
}

#[test]
fn parses_overrides() {
    let gates: FeatureGates = "TASBalancedPlacement=true, PartialAdmission=false"
        .parse()
        .unwrap();
    assert!(gates.enabled(Feature::TASBalancedPlacement));
    assert!(!gates.enabled(Feature::PartialAdmission));
    assert!(gates.enabled(Feature::TopologyAwareScheduling));
}

#[test]
fn rejects_unknown_and_malformed_entries() {
    assert_eq!(
        "NoSuchGate=true"
            .parse::<FeatureGates>()
            .map(|_| ())
            .unwrap_err(),
        FeatureGateError::Unknown("NoSuchGate".into())
    );
    assert!(matches!(
        "TASBalancedPlacement".parse::<FeatureGates>(),
        Err(FeatureGateError::Malformed(_))
    ));
    assert!(matches!(
        "TASBalancedPlacement=yes".parse::<FeatureGates>(),
        Err(FeatureGateError::Malformed(_))
    ));
}

#[test]
fn accepts_go_bool_spellings() {
    let gates: FeatureGates = "TASBalancedPlacement=T,PartialAdmission=0".parse().unwrap();
    assert!(gates.enabled(Feature::TASBalancedPlacement));
    assert!(!gates.enabled(Feature::PartialAdmission));
}

#[test]
fn knows_kueue_gates_the_engine_does_not_consult() {
    let gates: FeatureGates = "VisibilityOnDemand=false,ConcurrentAdmission=true"
        .parse()
        .unwrap();
    assert!(!gates.enabled(Feature::VisibilityOnDemand));
    assert!(gates.enabled(Feature::ConcurrentAdmission));
    assert!(!FeatureGates::default().enabled(Feature::DisableWaitForPodsReady));
    assert!(FeatureGates::default().enabled(Feature::TASCacheTopologyTree));
}

#[test]
fn locked_gates_keep_their_default() {
    let err = "TLSOptions=false".parse::<FeatureGates>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot set feature gate TLSOptions to false, feature is locked to true"
    );
    let gates: FeatureGates = "ManagedJobsNamespaceSelectorAlwaysRespected=true"
        .parse()
        .unwrap();
    assert!(gates.enabled(Feature::ManagedJobsNamespaceSelectorAlwaysRespected));
}

/// Kueue's gates (`pkg/features/kube_features.go`) with their defaults: every gate kuota knows is
/// one of them with the same default, but for kuota's own `TASReplaceMultipleFailedNodes`.
const KUEUE_GATES: &[(&str, bool)] = &[
    ("AdmissionFairSharing", true),
    ("AdmissionGatedBy", true),
    ("AssignQueueLabelsForPods", true),
    ("CleanupProvisioningRequestsOnEviction", true),
    ("ConcurrentAdmission", false),
    ("CustomMetricLabels", false),
    ("DeferRayServiceFinalizationForRedisCleanup", true),
    ("DisableWaitForPodsReady", false),
    ("ElasticJobsViaWorkloadSlices", true),
    ("ElasticJobsViaWorkloadSlicesWithTAS", false),
    ("FailureRecoveryPolicy", false),
    ("FairSharingPreemptWithinNominal", true),
    ("FairSharingPrioritizeNonBorrowing", true),
    ("FastQuotaReleaseInPodIntegration", false),
    ("FinishOrphanedWorkloads", true),
    ("FlavorFungibility", true),
    ("FlavorFungibilityPreserveScanProgress", true),
    ("KueueDRAIntegration", true),
    ("KueueDRAIntegrationConsumableCapacity", false),
    ("KueueDRAIntegrationExtendedResource", true),
    ("KueueDRAIntegrationPartitionableDevices", true),
    ("KueueDRARejectWorkloadsWhenDRADisabled", true),
    ("LWSImmutableGroupSize", true),
    ("LocalQueueMetrics", true),
    ("ManagedJobsNamespaceSelectorAlwaysRespected", true),
    ("MetricForWorkloadCreationLatency", true),
    ("MetricsForCohorts", true),
    ("MultiKueue", true),
    ("MultiKueueAdaptersForCustomJobs", true),
    ("MultiKueueClusterProfile", false),
    ("MultiKueueIncrementalDispatcherConfig", true),
    ("MultiKueueIncrementalDispatcherRespectConfigOrder", true),
    ("MultiKueueKubeConfigPathValidation", true),
    ("MultiKueueManagerQuotaAutomation", false),
    ("MultiKueueOrchestratedPreemption", false),
    ("MultiKueueRemoteSpecSync", true),
    ("PartialAdmission", true),
    ("PodIntegrationValidateGroupOwner", true),
    ("PrioritizePreemptorWorkloads", false),
    ("PriorityBoost", false),
    ("PrioritySortingWithinCohort", true),
    ("QuotaCheckStrategy", true),
    ("ReclaimablePods", true),
    ("RecomputeAssignmentUponPreemptionTargetsOverlap", true),
    ("RejectUpdatesToCQWithInvalidOnFlavors", false),
    ("RemoveFinalizersWithStrictPatch", true),
    ("SchedulerLibraryIntegration", false),
    ("SchedulingEquivalenceHashing", true),
    ("ShortWorkloadNames", false),
    ("SkipAncestorCheckForDeletedWorkloads", true),
    ("SkipReassignmentForPodOwnedWorkloads", true),
    ("SparkApplicationIntegration", false),
    ("TASAssignmentsEncodingByHostnamePrefix", true),
    ("TASBalancedPlacement", false),
    ("TASCacheNodeMatchResults", true),
    ("TASCacheTopologyTree", true),
    ("TASCachingRemainingResources", true),
    ("TASFailedNodeReplacement", true),
    ("TASFailedNodeReplacementFailFast", true),
    ("TASHandleOverlappingFlavors", true),
    ("TASMultiLayerTopology", true),
    ("TASProfileMixed", true),
    ("TASRecomputeAssignmentWithinSchedulingCycle", true),
    ("TASReplaceNodeDueToNotReadyOverFixedTime", false),
    ("TASReplaceNodeOnNodeTaints", true),
    ("TASReplaceNodeOnPodTermination", true),
    ("TASRespectNodeAffinityPreferred", false),
    ("TASValidateWorkloadSliceSize", true),
    ("TLSOptions", true),
    ("TopologyAwareScheduling", true),
    ("UnadmittedWorkloadsExplicitStatus", false),
    ("UnadmittedWorkloadsObservability", true),
    ("ValidateRayAndSparkJobUpdates", true),
    ("VectorizedResourceRequests", true),
    ("VisibilityOnDemand", true),
    ("WorkloadIdentifierAnnotations", true),
    ("WorkloadPriorityClassDefaulting", true),
    ("WorkloadRequestUseMergePatch", false),
    ("WorkloadValidateResourcesAreNonNegative", true),
    ("WorkloadValidationForPodSetMetadata", true),
];

#[test]
fn every_gate_but_kuotas_own_is_kueues_with_its_default() {
    let kueue: BTreeMap<&str, bool> = KUEUE_GATES.iter().copied().collect();
    let mut own = Vec::new();
    for feature in Feature::ALL {
        match kueue.get(feature.name()) {
            Some(default) => assert_eq!(
                feature.default_enabled(),
                *default,
                "{feature}: Kueue's default"
            ),
            None => own.push(feature.name()),
        }
    }
    assert_eq!(own, ["TASReplaceMultipleFailedNodes"]);
    assert_eq!(Feature::ALL.len(), KUEUE_GATES.len() + own.len());
}
