//! Queue status held back to spend fewer requests: at most one write per queue and period, and a
//! budget of writes across queues.

use super::super::reports::{QUEUE_STATUS_BURST, QUEUE_STATUS_PERIOD, REPORT_PERIOD};
use super::*;
use crate::controllers::queue_status::{QueueKey, QueueWrite};

/// The ClusterQueue status writes asked for since the last call, each answered as stored.
fn cluster_queue_writes(h: &mut Harness) -> Vec<api::ClusterQueue> {
    h.drain();
    let mut out = Vec::new();
    for request in std::mem::take(&mut h.unclaimed) {
        match request {
            WriteRequest::Queue { key, write } => {
                if let QueueWrite::ClusterQueue(cq) = write.as_ref() {
                    out.push(cq.clone());
                }
                h.admission.take_answer(Written::Queue {
                    key,
                    fenced_on: write.resource_version().map(str::to_owned),
                    result: Ok(write),
                });
            }
            other => h.unclaimed.push(other),
        }
    }
    out
}

/// Runs a pass once the report period has passed.
fn report_next(h: &mut Harness) {
    h.clock.advance(REPORT_PERIOD);
    h.turn();
}

#[test]
fn changes_within_the_queue_status_period_are_written_once_with_the_last_status() {
    let mut h = Harness::new();
    h.apply(workload("a", 1, 0, 0));
    let first = cluster_queue_writes(&mut h);
    assert_eq!(first.len(), 1, "{first:?}");

    let admitted = |cq: &api::ClusterQueue| cq.status.as_ref().and_then(|s| s.admitted_workloads);
    for (i, name) in ["b", "c", "d"].into_iter().enumerate() {
        h.apply(workload(name, 1, 0, i as u32 + 1));
        for request in h.workload_requests() {
            h.store(request);
        }
    }
    report_next(&mut h);
    assert_eq!(
        cluster_queue_writes(&mut h),
        Vec::new(),
        "no second write within the period"
    );

    h.clock.advance(QUEUE_STATUS_PERIOD - REPORT_PERIOD);
    h.turn();
    let last = cluster_queue_writes(&mut h);
    assert_eq!(last.len(), 1, "{last:?}");
    assert_eq!(admitted(&last[0]), Some(4));
}

/// The keys of the queue status writes asked for since the last call, each answered as stored.
fn queue_writes(h: &mut Harness) -> Vec<QueueKey> {
    h.drain();
    let mut out = Vec::new();
    for request in std::mem::take(&mut h.unclaimed) {
        match request {
            WriteRequest::Queue { key, write } => {
                out.push(key.clone());
                h.admission.take_answer(Written::Queue {
                    key,
                    fenced_on: write.resource_version().map(str::to_owned),
                    result: Ok(write),
                });
            }
            other => h.unclaimed.push(other),
        }
    }
    out
}

#[test]
fn queues_held_back_by_the_budget_are_written_at_a_later_report() {
    let mut h = Harness::new();
    let local_queue = ADMIN.split("\n---\n").nth(2).expect("the LocalQueue");
    for i in 0..14 {
        let mut lq: api::LocalQueue = parse(local_queue);
        lq.metadata.name = Some(format!("lq-{i}"));
        h.admission
            .take_change(Input::LocalQueue(Change::Apply(Box::new(lq))));
    }
    // The ClusterQueue and 15 LocalQueues, none written yet: more than one burst.
    report_next(&mut h);
    let first = queue_writes(&mut h);
    assert_eq!(first.len(), QUEUE_STATUS_BURST as usize, "{first:?}");
    assert!(h.admission.reports.due, "the queues held back are due");

    // A second later, the next report writes the rest, though nothing changed meanwhile.
    h.clock.advance(QUEUE_STATUS_PERIOD);
    h.turn();
    let rest = queue_writes(&mut h);
    assert_eq!(rest.len(), 6, "{rest:?}");
    assert!(rest.iter().all(|key| !first.contains(key)), "{rest:?}");
    assert!(!h.admission.reports.due);
}
