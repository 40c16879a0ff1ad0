use super::*;

#[test]
fn carried_state_is_written_and_cleared() {
    let mut annotations = BTreeMap::from([("other".to_string(), "kept".to_string())]);
    let carried = CarriedState {
        quota_reserved_at: Some(5001),
        preemption_credit_spent: true,
        fair_share_shield: vec!["a".into(), "b".into()],
    };
    set_carried(&mut annotations, &carried);
    assert_eq!(annotations[QUOTA_RESERVED_AT], "5001");
    assert_eq!(annotations[PREEMPTION_CREDIT_SPENT], "true");
    assert_eq!(annotations[FAIR_SHARE_SHIELD], "a,b");
    set_carried(&mut annotations, &CarriedState::default());
    assert_eq!(
        annotations,
        BTreeMap::from([("other".to_string(), "kept".to_string())])
    );
}

#[test]
fn a_workload_without_a_reservation_keeps_the_reservation_keys_it_has() {
    let stale = BTreeMap::from([
        (QUOTA_RESERVED_AT.to_string(), "5001".to_string()),
        (FAIR_SHARE_SHIELD.to_string(), "a".to_string()),
        (PREEMPTION_CREDIT_SPENT.to_string(), "true".to_string()),
    ]);
    let mut released = stale.clone();
    set_carried_unless_stale(&mut released, &CarriedState::default(), false);
    // The credit is the workload's, not its reservation's: it still goes.
    let mut expected = stale.clone();
    expected.remove(PREEMPTION_CREDIT_SPENT);
    assert_eq!(released, expected);

    let mut readmitted = stale.clone();
    let carried = CarriedState {
        quota_reserved_at: Some(7002),
        ..CarriedState::default()
    };
    set_carried_unless_stale(&mut readmitted, &carried, true);
    assert_eq!(
        readmitted,
        BTreeMap::from([(QUOTA_RESERVED_AT.to_string(), "7002".to_string())])
    );
}
