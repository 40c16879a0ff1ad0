use super::*;

#[test]
fn deactivated_due_to_joins_prefix_and_cause() {
    assert_eq!(
        deactivated_due_to(deactivation_target_reasons::REQUEUING_LIMIT_EXCEEDED),
        "DeactivatedDueToRequeuingLimitExceeded"
    );
}
