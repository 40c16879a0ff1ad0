use super::*;
use crate::engine::model::{BorrowWithinCohort, FlavorFungibility, FungibilityPreference};

#[test]
fn fungibility_preference_needs_both_policies_to_try_the_next_flavor() {
    let mut cq = ClusterQueue {
        name: "a".into(),
        flavor_fungibility: FlavorFungibility {
            preference: Some(FungibilityPreference::PreemptionOverBorrowing),
            ..Default::default()
        },
        ..Default::default()
    };
    let err = check_policies(&cq).unwrap_err();
    assert!(
        err.to_string()
            .contains("spec.flavorFungibility.preference")
    );
    cq.flavor_fungibility.when_can_borrow = FungibilityPolicy::TryNextFlavor;
    cq.flavor_fungibility.when_can_preempt = FungibilityPolicy::TryNextFlavor;
    assert!(check_policies(&cq).is_ok());
}

#[test]
fn borrowing_preemption_needs_reclaim() {
    let mut cq = ClusterQueue {
        name: "a".into(),
        ..Default::default()
    };
    cq.preemption.borrow_within_cohort = BorrowWithinCohort {
        policy: BorrowWithinCohortPolicy::LowerPriority,
        max_priority_threshold: None,
    };
    assert!(check_policies(&cq).is_err());
    cq.preemption.reclaim_within_cohort = ReclaimWithinCohort::Any;
    assert!(check_policies(&cq).is_ok());
}

#[test]
fn workloads_with_bad_counts_or_reserved_resources_are_refused() {
    let mut w = Workload {
        namespace: "ns".into(),
        name: "w".into(),
        pod_sets: vec![crate::engine::model::PodSet {
            name: "main".into(),
            count: 2,
            min_count: Some(3),
            ..Default::default()
        }],
        ..Default::default()
    };
    assert!(
        workload(&w)
            .unwrap_err()
            .to_string()
            .contains("spec.podSets[0].minCount")
    );
    w.pod_sets[0].min_count = None;
    w.pod_sets[0]
        .requests
        .insert(PODS.into(), Quantity::from_units(1));
    assert!(workload(&w).unwrap_err().to_string().contains("reserved"));
}
