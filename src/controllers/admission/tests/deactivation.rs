//! waitForPodsReady past `backoffLimitCount`: the Workload is marked `DeactivationTarget`, then
//! made inactive through the writer, then evicted with its quota released, as Kueue does; a mark
//! left by another manager is acted on too.

use super::*;

fn condition_of<'a>(status: &'a api::WorkloadStatus, type_: &str) -> Option<(&'a str, &'a str)> {
    status
        .conditions
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| (c.status.as_str(), c.reason.as_str()))
}

#[test]
fn past_the_requeuing_limit_a_workload_is_marked_deactivated_then_evicted_and_its_quota_freed() {
    let mut wait = pods_ready(Duration::ZERO, false);
    wait.requeuing_strategy.backoff_limit_count = Some(0);
    let mut h = Harness::waiting(wait);
    h.apply(workload("slow", 4, 0, 0));
    for request in h.workload_requests() {
        h.store(request);
    }
    // No requeue is left: instead of an eviction, the Workload is marked, still admitted.
    let marked = h.workload_requests();
    assert_eq!(effects(&marked), [(wk("slow"), Effect::Update)]);
    let status = &marked[0].2.status;
    assert_eq!(
        condition_of(status, "DeactivationTarget"),
        Some(("True", "RequeuingLimitExceeded"))
    );
    assert!(status.admission.is_some());
    assert!(h.admitted_in_engine(&wk("slow")));
    assert!(h.deactivate_requests().is_empty(), "once it is marked");
    for request in marked {
        h.store(request);
    }
    let deactivations = h.deactivate_requests();
    assert_eq!(deactivations.len(), 1);
    assert!(
        h.workload_requests().is_empty(),
        "nothing else while in flight"
    );
    for request in deactivations {
        h.store_deactivation(request);
    }
    // Inactive, it is evicted and its quota released, the eviction naming the cause.
    let evicted = h.workload_requests();
    assert_eq!(effects(&evicted), [(wk("slow"), Effect::Release)]);
    let status = &evicted[0].2.status;
    assert_eq!(
        condition_of(status, "Evicted"),
        Some(("True", "DeactivatedDueToRequeuingLimitExceeded"))
    );
    assert_eq!(
        condition_of(status, "Requeued"),
        Some(("False", "Deactivated"))
    );
    assert_eq!(condition_of(status, "DeactivationTarget"), None);
    assert!(!h.admitted_in_engine(&wk("slow")));
    h.apply(workload("next", 4, 0, 1));
    for request in evicted {
        h.store(request);
    }
    assert_eq!(
        effects(&h.workload_requests()),
        [(wk("next"), Effect::Claim)]
    );
    assert!(h.deactivate_requests().is_empty());
    let rendered = h.metrics.encode();
    assert!(
        rendered
            .lines()
            .any(|l| l.starts_with("kueue_evicted_workloads_total{")
                && l.contains("reason=\"Deactivated\"")
                && l.contains("underlying_cause=\"RequeuingLimitExceeded\"")),
        "{rendered}"
    );
}

#[test]
fn a_workload_marked_by_another_manager_is_deactivated_and_a_conflict_waits_for_a_newer_read() {
    let mut h = Harness::new();
    let mut marked = workload("marked", 1, 0, 0);
    marked.status = Some(crate::status::deactivation::deactivation_target(
        &api::WorkloadStatus::default(),
        "RequeuingLimitExceeded",
        "exceeding the maximum number of re-queuing retries",
        &h.clock.time(),
        Some(1),
    ));
    h.apply(marked.clone());
    let asked = h.deactivate_requests();
    assert_eq!(asked.len(), 1);
    for (key, read) in asked {
        h.admission.take_answer(Written::Deactivated {
            key,
            fenced_on: read.metadata.resource_version.clone(),
            result: Err(WriteError::Conflict("ns/marked".into())),
        });
        h.turn();
    }
    assert!(
        h.deactivate_requests().is_empty(),
        "not at the same version"
    );
    marked.metadata.resource_version = Some("2".into());
    h.apply(marked);
    assert_eq!(
        h.deactivate_requests().len(),
        1,
        "asked again at the newer one"
    );
}
