//! A deleted queue leaves nothing behind: its metric series, as Kueue's
//! `ClearClusterQueueMetrics` and `ClearLocalQueueMetrics` drop them, and its pacing.

use super::super::reports::QUEUE_STATUS_PERIOD;
use super::*;

/// Answers every queue status write asked for as stored.
fn store_queue_writes(h: &mut Harness) -> usize {
    h.drain();
    let mut written = 0;
    for request in std::mem::take(&mut h.unclaimed) {
        match request {
            WriteRequest::Queue { key, write } => {
                written += 1;
                h.admission.take_answer(Written::Queue {
                    key,
                    fenced_on: write.resource_version().map(str::to_owned),
                    result: Ok(write),
                });
            }
            other => h.unclaimed.push(other),
        }
    }
    written
}

/// The exposition's sample lines carrying `label`.
fn series_with(h: &Harness, label: &str) -> Vec<String> {
    h.metrics
        .encode()
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains(label))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_deleted_queue_loses_its_series_and_its_pacing() {
    let mut h = Harness::with_local_queue_metrics();
    h.apply(workload("a", 1, 0, 0));
    for request in h.workload_requests() {
        h.store(request);
    }
    h.clock.advance(QUEUE_STATUS_PERIOD);
    h.turn();
    assert_eq!(
        store_queue_writes(&mut h),
        2,
        "the ClusterQueue and LocalQueue"
    );
    assert_eq!(h.admission.reports.pacer.remembered(), 2);
    let admitted = "kueue_admitted_workloads_total{cluster_queue=\"team\"";
    assert!(
        series_with(&h, "cluster_queue=\"team\"")
            .iter()
            .any(|l| l.starts_with(admitted)),
        "{:?}",
        series_with(&h, "cluster_queue=\"team\"")
    );
    assert!(!series_with(&h, "name=\"lq\"").is_empty());

    let docs: Vec<&str> = ADMIN.split("\n---\n").collect();
    let local_queue: api::LocalQueue = parse(docs[2]);
    h.admission
        .take_change(Input::LocalQueue(Change::Delete(Box::new(local_queue))));
    assert_eq!(series_with(&h, "name=\"lq\""), Vec::<String>::new());
    assert_eq!(h.admission.reports.pacer.remembered(), 1);

    let cluster_queue: api::ClusterQueue = parse(docs[1]);
    h.admission
        .take_change(Input::ClusterQueue(Change::Delete(Box::new(cluster_queue))));
    h.clock.advance(QUEUE_STATUS_PERIOD);
    h.turn();
    assert_eq!(
        series_with(&h, "cluster_queue=\"team\""),
        Vec::<String>::new()
    );
    assert_eq!(series_with(&h, "name=\"lq\""), Vec::<String>::new());
    assert_eq!(h.admission.reports.pacer.remembered(), 0);
    assert!(h.admission.reports.conflicts.is_empty());
}

#[test]
fn a_queue_a_full_list_leaves_out_loses_its_series() {
    let mut h = Harness::new();
    h.apply(workload("a", 1, 0, 0));
    for request in h.workload_requests() {
        h.store(request);
    }
    assert!(!series_with(&h, "cluster_queue=\"team\"").is_empty());
    h.admission
        .take_change(Input::ClusterQueue(Change::Reset(Vec::new())));
    h.clock.advance(QUEUE_STATUS_PERIOD);
    h.turn();
    assert_eq!(
        series_with(&h, "cluster_queue=\"team\""),
        Vec::<String>::new()
    );
}
