//! The retention task in the work-queue loop: a Workload is deleted when its period ends, not
//! before, and a deletion that failed is tried again after its own wait.

use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::controllers::leader::Tenure;

fn at(text: &str) -> Timestamp {
    text.parse().expect("a timestamp")
}

/// Workload `ns/name`, finished at `finished`.
fn finished(name: &str, finished: &str) -> SharedWorkload {
    Arc::new(
        serde_json::from_value(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "Workload",
            "metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}"),
                         "resourceVersion": "1"},
            "spec": {"podSets": []},
            "status": {"conditions": [{"type": "Finished", "status": "True",
                "reason": "Succeeded", "message": "done", "lastTransitionTime": finished}]},
        }))
        .expect("a Workload"),
    )
}

/// A leading loop keeping finished Workloads an hour, on `clock`; its writer is never called.
fn queue(clock: &Clock) -> (WorkQueue<RetentionTask>, watch::Sender<bool>) {
    let config = kube::Config::new("http://127.0.0.1:9".parse().expect("a URL"));
    let client = kube::Client::try_from(config).expect("a client");
    let (events, _) = EventSink::detached();
    let task = RetentionTask {
        schedule: Schedule::new(WorkloadRetention {
            after_finished: Some(Duration::from_secs(3600)),
            after_deactivated_by_kueue: None,
        }),
        writer: Writer::new(
            client,
            -1.0,
            1,
            Tenure::none(),
            crate::clock::Clock::system(),
        ),
        events,
        listed: false,
        jitter: || 0.5,
    };
    let (election, leading) = watch::channel(true);
    (WorkQueue::new(task, leading, clock.clone()), election)
}

fn sent(queue: &mut WorkQueue<RetentionTask>) -> Vec<String> {
    queue.turn().into_iter().map(|(key, _)| key.name).collect()
}

#[tokio::test]
async fn a_workload_is_deleted_when_its_period_ends_and_a_failed_deletion_waits_its_turn() {
    let clock = Clock::manual(at("2026-11-28T10:59:59Z"));
    let (mut queue, _election) = queue(&clock);
    let done = finished("done", "2026-11-28T10:00:00Z");
    queue.take(Change::Reset(vec![done.clone()]));
    assert!(sent(&mut queue).is_empty(), "a second early");
    assert_eq!(
        queue.next_wake(),
        Some(clock.instant() + Duration::from_secs(1)),
        "the loop wakes when the period ends"
    );

    clock.advance(Duration::from_secs(1));
    assert_eq!(sent(&mut queue), ["done"]);
    let conflict = Err(WriteError::Conflict("done".to_owned()));
    queue.answered(
        ObjectKey::of(&*done),
        (done.clone(), Expired::Workload, conflict),
    );
    assert!(sent(&mut queue).is_empty(), "tried again after a second");
    // A second, lengthened by half the jitter factor (the draw is one half).
    clock.advance(RETRY_AFTER);
    assert!(sent(&mut queue).is_empty(), "the retry is jittered");
    clock.advance(RETRY_AFTER.mul_f64(RETRY_JITTER / 2.0));
    assert_eq!(sent(&mut queue), ["done"]);

    queue.answered(ObjectKey::of(&*done), (done, Expired::Workload, Ok(())));
    clock.advance(Duration::from_secs(3600));
    assert!(sent(&mut queue).is_empty(), "deleted once");
}
