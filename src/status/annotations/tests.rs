use super::*;

const OLD_RESERVED_AT: &str = "kuota.dev/quota-reserved-at";

#[test]
fn carried_state_is_written_and_cleared() {
    let mut annotations = BTreeMap::from([("other".to_string(), "kept".to_string())]);
    let carried = CarriedState {
        quota_reserved_at: Some(5000),
        preemption_credit_spent: true,
        fair_share_shield: vec!["a".into(), "b".into()],
    };
    set_carried(&mut annotations, &carried);
    assert_eq!(
        annotations,
        BTreeMap::from([
            ("other".to_string(), "kept".to_string()),
            (PREEMPTION_CREDIT_SPENT.to_string(), "true".to_string()),
            (FAIR_SHARE_SHIELD.to_string(), "a,b".to_string()),
        ]),
        "the reservation time is not an annotation"
    );
    set_carried(&mut annotations, &CarriedState::default());
    assert_eq!(
        annotations,
        BTreeMap::from([("other".to_string(), "kept".to_string())])
    );
}

#[test]
fn a_reservation_with_nothing_carried_changes_no_annotation() {
    // An old version's reservation-time annotation is ignored, neither rewritten nor removed.
    let read = BTreeMap::from([(OLD_RESERVED_AT.to_string(), "5001".to_string())]);
    let mut annotations = read.clone();
    let carried = CarriedState {
        quota_reserved_at: Some(7000),
        ..CarriedState::default()
    };
    set_carried_unless_stale(&mut annotations, &carried, true);
    assert_eq!(annotations, read);
}

#[test]
fn a_workload_without_a_reservation_keeps_the_shield_it_has() {
    let stale = BTreeMap::from([
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
        quota_reserved_at: Some(7000),
        ..CarriedState::default()
    };
    set_carried_unless_stale(&mut readmitted, &carried, true);
    assert_eq!(readmitted, BTreeMap::new());
}
