//! `waitForPodsReady`: `blockAdmission` holds admission while admitted pods are not ready, and
//! pods not ready in time evict their Workload into a requeue backoff.

use super::*;

#[test]
fn with_block_admission_nothing_is_admitted_until_admitted_pods_are_ready() {
    let mut h = Harness::blocking(true);
    h.apply(workload("a", 2, 0, 0));
    let mut stored = Vec::new();
    for request in h.workload_requests() {
        stored.push(request.0.clone());
        h.store(request);
    }
    assert_eq!(stored, [wk("a")]);
    h.apply(workload("b", 2, 0, 1));
    assert!(
        !h.admitted_in_engine(&wk("b")),
        "a's pods are not ready yet"
    );
    for request in h.workload_requests() {
        assert_eq!(request.2.effect, Effect::Update);
        h.store(request);
    }
    let mut ready = h
        .admission
        .workloads
        .read(&wk("a"))
        .cloned()
        .expect("a is known");
    h.revision += 1;
    ready.metadata.resource_version = Some(h.revision.to_string());
    if let Some(status) = ready.status.as_mut() {
        status.conditions.push(crate::api::Condition {
            type_: "PodsReady".into(),
            status: "True".into(),
            reason: "Started".into(),
            message: Default::default(),
            last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                "2026-11-23T10:01:00Z".parse().unwrap(),
            ),
            observed_generation: None,
        });
    }
    h.apply(ready);
    assert_eq!(effects(&h.workload_requests()), [(wk("b"), Effect::Claim)]);
}

#[test]
fn pods_not_ready_in_time_evict_release_and_keep_the_workload_out_until_its_backoff_ends() {
    let mut h = Harness::waiting(pods_ready(Duration::ZERO, false));
    h.apply(workload("slow", 4, 0, 0));
    let admitted = h.workload_requests();
    assert_eq!(effects(&admitted), [(wk("slow"), Effect::Claim)]);
    for request in admitted {
        h.store(request);
    }
    // With no time to become ready, the next pass evicts it.
    let evicted = h.workload_requests();
    assert_eq!(effects(&evicted), [(wk("slow"), Effect::Release)]);
    let status = &evicted[0].2.status;
    let condition = |type_: &str| status.conditions.iter().find(|c| c.type_ == type_).cloned();
    let evicted_condition = condition("Evicted").expect("Evicted is set");
    assert_eq!(
        (
            evicted_condition.status.as_str(),
            evicted_condition.reason.as_str()
        ),
        ("True", "PodsReadyTimeout")
    );
    let requeued = condition("Requeued").expect("Requeued is set");
    assert_eq!(
        (requeued.status.as_str(), requeued.reason.as_str()),
        ("False", "PodsReadyTimeout")
    );
    let requeue = status.requeue_state.clone().expect("a requeue backoff");
    assert_eq!(requeue.count, Some(1));
    assert!(requeue.requeue_at.is_some());
    let stats = status
        .scheduling_stats
        .clone()
        .expect("the eviction is counted");
    assert!(
        stats
            .evictions
            .iter()
            .any(|e| e.reason == "PodsReadyTimeout"
                && e.underlying_cause == "WaitForStart"
                && e.count == 1),
        "{:?}",
        stats.evictions
    );
    assert!(
        !h.admitted_in_engine(&wk("slow")),
        "its quota is released at once"
    );

    // Another workload takes the quota once the release has landed; the evicted one waits out
    // its backoff.
    h.apply(workload("next", 4, 0, 1));
    assert!(
        effects(&h.workload_requests()).is_empty(),
        "claims wait for the release"
    );
    for request in evicted {
        h.store(request);
    }
    assert_eq!(
        effects(&h.workload_requests()),
        [(wk("next"), Effect::Claim)]
    );
    assert!(h.admission.backoff.contains_key(&wk("slow")));
}

#[test]
fn a_pods_ready_eviction_that_cannot_be_written_leaves_the_workload_admitted() {
    let mut h = Harness::waiting(pods_ready(Duration::ZERO, false));
    h.apply(workload("slow", 4, 0, 0));
    for request in h.workload_requests() {
        h.store(request);
    }
    let evicted = h.workload_requests();
    assert_eq!(effects(&evicted), [(wk("slow"), Effect::Release)]);
    for request in evicted {
        h.refuse(request, WriteError::Conflict("ns/slow".into()));
    }
    assert!(
        h.admitted_in_engine(&wk("slow")),
        "the API still shows it admitted"
    );
    assert!(!h.admission.backoff.contains_key(&wk("slow")));
}
