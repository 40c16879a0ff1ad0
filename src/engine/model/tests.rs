use super::*;

#[test]
fn priority_comes_from_the_most_specific_class() {
    assert_eq!(resolve_priority(Some(7), Some(3), Some(1)), 7);
    assert_eq!(resolve_priority(None, Some(3), Some(1)), 3);
    assert_eq!(resolve_priority(None, None, Some(1)), 1);
    assert_eq!(resolve_priority(None, None, None), 0);
}

#[test]
fn fair_sharing_defaults_to_both_strategies() {
    assert_eq!(
        FairSharingConfig::enabled().strategies(),
        vec![
            FairPreemptionStrategy::LessThanOrEqualToFinalShare,
            FairPreemptionStrategy::LessThanInitialShare
        ]
    );
    let one = FairSharingConfig {
        enabled: true,
        preemption_strategies: vec![FairPreemptionStrategy::LessThanInitialShare],
    };
    assert_eq!(
        one.strategies(),
        vec![FairPreemptionStrategy::LessThanInitialShare]
    );
}
