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
