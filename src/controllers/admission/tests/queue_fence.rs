//! Queue status written at the resource version it was computed from: a write that lands moves
//! the fence to the version stored, and one refused for a conflict waits for the newer version.

use super::super::reports::QUEUE_STATUS_PERIOD;
use super::*;
use crate::controllers::queue_status::{QueueKey, QueueWrite};

/// The ClusterQueue `team` as in [`ADMIN`], read at `version`.
fn team_at(version: &str) -> api::ClusterQueue {
    let doc = ADMIN.split("\n---\n").nth(1).expect("the ClusterQueue");
    let mut cq: api::ClusterQueue = parse(doc);
    cq.metadata.resource_version = Some(version.into());
    cq
}

/// The ClusterQueue status writes asked for since the last call, unanswered.
fn cluster_queue_requests(h: &mut Harness) -> Vec<(QueueKey, Box<QueueWrite>)> {
    h.drain();
    let mut out = Vec::new();
    for request in std::mem::take(&mut h.unclaimed) {
        match request {
            WriteRequest::Queue { key, write } if matches!(key, QueueKey::ClusterQueue(_)) => {
                out.push((key, write));
            }
            other => h.unclaimed.push(other),
        }
    }
    out
}

/// Admits Workload `name`, its write stored, and runs a pass a status period later.
fn admit_later(h: &mut Harness, name: &str, second: u32) {
    h.apply(workload(name, 1, 0, second));
    for request in h.workload_requests() {
        h.store(request);
    }
    h.clock.advance(QUEUE_STATUS_PERIOD);
    h.turn();
}

#[test]
fn a_queue_status_write_is_fenced_on_the_version_read_then_on_the_version_stored() {
    let mut h = Harness::new();
    h.admission
        .take_change(Input::ClusterQueue(Change::Apply(Box::new(team_at("7")))));
    admit_later(&mut h, "a", 0);
    let mut writes = cluster_queue_requests(&mut h);
    assert_eq!(writes.len(), 1, "{writes:?}");
    let (key, write) = writes.remove(0);
    assert_eq!(write.resource_version(), Some("7"));

    let mut stored = write;
    if let QueueWrite::ClusterQueue(cq) = stored.as_mut() {
        cq.metadata.resource_version = Some("8".into());
    }
    h.admission.take_answer(Written::Queue {
        key,
        fenced_on: Some("7".into()),
        result: Ok(stored),
    });

    // Before the watch brings version 8, the next status is fenced on it, not on 7.
    admit_later(&mut h, "b", 1);
    let writes = cluster_queue_requests(&mut h);
    assert_eq!(writes.len(), 1, "{writes:?}");
    assert_eq!(writes[0].1.resource_version(), Some("8"));
}

#[test]
fn a_queue_status_write_that_conflicts_waits_for_the_newer_version_and_is_fenced_on_it() {
    let mut h = Harness::new();
    h.admission
        .take_change(Input::ClusterQueue(Change::Apply(Box::new(team_at("7")))));
    admit_later(&mut h, "a", 0);
    let mut writes = cluster_queue_requests(&mut h);
    assert_eq!(writes.len(), 1, "{writes:?}");
    let (key, _) = writes.remove(0);
    h.admission.take_answer(Written::Queue {
        key: key.clone(),
        fenced_on: Some("7".into()),
        result: Err(WriteError::Conflict("ClusterQueue team".into())),
    });

    // The same status computed from version 7 would conflict again: nothing is written while
    // version 7 is all that was read, however much changes.
    admit_later(&mut h, "b", 1);
    admit_later(&mut h, "c", 2);
    assert_eq!(cluster_queue_requests(&mut h).len(), 0);
    assert!(h.admission.reports.conflicts.holds(&key));

    // The watch brings version 9 (another writer's change): the status is computed from it and
    // fenced on it.
    h.admission
        .take_change(Input::ClusterQueue(Change::Apply(Box::new(team_at("9")))));
    h.clock.advance(QUEUE_STATUS_PERIOD);
    h.turn();
    let writes = cluster_queue_requests(&mut h);
    assert_eq!(writes.len(), 1, "{writes:?}");
    assert_eq!(writes[0].1.resource_version(), Some("9"));
    let QueueWrite::ClusterQueue(cq) = writes[0].1.as_ref() else {
        panic!("a ClusterQueue write");
    };
    assert_eq!(
        cq.status.as_ref().and_then(|s| s.admitted_workloads),
        Some(3)
    );
    assert!(h.admission.reports.conflicts.is_empty());
}
