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
