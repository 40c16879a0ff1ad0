use std::sync::Arc;

use super::*;
use crate::engine::decision::PendingReason;
use crate::engine::model::Workload;

fn victim(priority: i32, creation: i64) -> WorkloadSlot {
    WorkloadSlot {
        model: Workload {
            priority,
            creation,
            ..Default::default()
        },
        uid: Arc::from("v"),
        per_pod: Vec::new(),
        cq: None,
        blocked: None,
        holding: None,
        pending: (PendingReason::PendingEvaluation, Arc::from("")),
        last_eviction: None,
        finished: false,
        removed: false,
        eq_class: 0,
        local_queue_stop: Default::default(),
        preemption_credit_spent: false,
    }
}

#[test]
fn policy_predicates() {
    let request = FlavorResourceAmounts::new();
    let preemptor = victim(5, 10);
    let p = Preemptor::new(0, &preemptor, &request, &[]);
    let lower = victim(4, 20);
    let equal_newer = victim(5, 11);
    let equal_older = victim(5, 9);
    assert!(within_queue_allows(
        WithinClusterQueue::LowerPriority,
        &p,
        &lower
    ));
    assert!(!within_queue_allows(
        WithinClusterQueue::LowerPriority,
        &p,
        &equal_newer
    ));
    assert!(within_queue_allows(
        WithinClusterQueue::LowerOrNewerEqualPriority,
        &p,
        &equal_newer
    ));
    assert!(!within_queue_allows(
        WithinClusterQueue::LowerOrNewerEqualPriority,
        &p,
        &equal_older
    ));
    assert!(!within_queue_allows(WithinClusterQueue::Never, &p, &lower));
    assert!(reclaim_allows(ReclaimWithinCohort::Any, &p, &equal_older));
    assert!(!reclaim_allows(
        ReclaimWithinCohort::LowerPriority,
        &p,
        &equal_older
    ));
    assert!(!reclaim_allows(ReclaimWithinCohort::Never, &p, &lower));
}
