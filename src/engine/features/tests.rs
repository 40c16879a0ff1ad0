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
