use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use super::*;

fn condition(type_: &str, status: &str, reason: &str) -> Condition {
    Condition {
        type_: type_.into(),
        status: status.into(),
        reason: reason.into(),
        message: String::new(),
        last_transition_time: Time("2026-11-23T10:00:00Z".parse().unwrap()),
        observed_generation: None,
    }
}

fn update(conditions: Vec<Condition>) -> Planned {
    Planned {
        effect: Effect::Update,
        status: WorkloadStatus {
            conditions,
            ..WorkloadStatus::default()
        },
        annotations: None,
    }
}

#[test]
fn only_a_new_waiting_reason_counts_as_waiting_only() {
    let fresh = Workload::new("w", Default::default());
    let waiting = update(vec![condition("QuotaReserved", "False", "WaitingForQuota")]);
    assert!(waiting_only(&fresh, &waiting));

    let mut requeued = fresh.clone();
    requeued.status = Some(WorkloadStatus {
        conditions: vec![condition("Requeued", "True", "Preempted")],
        ..WorkloadStatus::default()
    });
    // An eviction's conditions change along with the reason: written at once.
    assert!(!waiting_only(&requeued, &waiting));
    let mut release = waiting.clone();
    release.effect = Effect::Release;
    assert!(!waiting_only(&fresh, &release));
}

#[test]
fn a_waiting_reason_is_held_back_until_the_workload_has_waited_the_delay() {
    let mut writes = WaitingWrites::new(Duration::from_secs(5));
    let t0 = Instant::now();
    writes.first_seen("ns/a", t0);
    writes.first_seen("ns/b", t0);
    assert!(writes.defer("ns/a", t0 + Duration::from_secs(1)));
    assert!(writes.due(t0 + Duration::from_secs(4)).is_empty());
    // b was never held back: nothing is asked for it.
    assert_eq!(writes.due(t0 + Duration::from_secs(5)), ["ns/a"]);
    assert!(!writes.defer("ns/a", t0 + Duration::from_secs(6)));
    // A Workload not seen new (one listed on election, say) is not held back.
    assert!(!writes.defer("ns/c", t0));
}
