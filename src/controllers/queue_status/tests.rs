use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;
use crate::engine::queue_report::{ClusterQueueReport, LocalQueueReport};

fn now() -> Time {
    Time("2026-11-23T10:00:00Z".parse().unwrap())
}

fn report(admitted: usize) -> QueueReport {
    QueueReport {
        cluster_queues: vec![ClusterQueueReport {
            name: "team".into(),
            pending: 1,
            admitted,
            usage: Vec::new(),
            in_cohort: false,
            inactive: Vec::new(),
            weighted_share: None,
        }],
        local_queues: vec![LocalQueueReport {
            namespace: "ns".into(),
            name: "lq".into(),
            cluster_queue: "team".into(),
            stopped: false,
            pending: 1,
            admitted,
            usage: Vec::new(),
        }],
        cohorts: Vec::new(),
    }
}

fn objects() -> QueueObjects {
    let mut objects = QueueObjects::default();
    let mut cq = ClusterQueue::new("team", Default::default());
    cq.metadata.generation = Some(1);
    objects.put(QueueWrite::ClusterQueue(cq));
    let mut lq = LocalQueue::new("lq", Default::default());
    lq.metadata.namespace = Some("ns".into());
    objects.put(QueueWrite::LocalQueue(lq));
    objects
}

#[test]
fn queues_whose_status_differs_are_written_once() {
    let mut objects = objects();
    let writes = changed(&objects, &report(2), &now());
    assert_eq!(writes.len(), 2);
    for write in writes {
        objects.put(write);
    }
    let later = Time("2026-11-23T10:01:00Z".parse().unwrap());
    assert_eq!(changed(&objects, &report(2), &later), []);
    let counts: Vec<QueueWrite> = changed(&objects, &report(3), &later);
    match counts.as_slice() {
        [QueueWrite::ClusterQueue(cq), QueueWrite::LocalQueue(lq)] => {
            assert_eq!(
                cq.status.as_ref().and_then(|s| s.admitted_workloads),
                Some(3)
            );
            assert_eq!(
                lq.status.as_ref().and_then(|s| s.admitted_workloads),
                Some(3)
            );
        }
        other => panic!("expected the ClusterQueue and LocalQueue, got {other:?}"),
    }
}

#[test]
fn a_queue_not_read_yet_is_not_written() {
    assert_eq!(changed(&QueueObjects::default(), &report(1), &now()), []);
}

#[test]
fn put_returns_the_object_it_replaces() {
    let mut objects = objects();
    let cq = ClusterQueue::new("team", Default::default());
    assert!(matches!(
        objects.put(QueueWrite::ClusterQueue(cq.clone())),
        Some(QueueWrite::ClusterQueue(old)) if old.metadata.generation == Some(1)
    ));
    assert_eq!(
        objects.put(QueueWrite::ClusterQueue(ClusterQueue::new(
            "other",
            Default::default()
        ))),
        None
    );
}

#[test]
fn a_failed_write_puts_a_queue_back_unless_it_was_deleted_meanwhile() {
    let mut objects = objects();
    let before = objects.cluster_queues["team"].clone();
    let mut written = before.clone();
    written.metadata.generation = Some(2);
    objects.put(QueueWrite::ClusterQueue(written));
    objects.restore(QueueWrite::ClusterQueue(before.clone()));
    assert_eq!(objects.cluster_queues["team"].metadata.generation, Some(1));

    objects.cluster_queues.remove("team");
    objects.restore(QueueWrite::ClusterQueue(before));
    assert!(!objects.cluster_queues.contains_key("team"));
}

#[test]
fn a_queue_is_written_at_most_once_per_period() {
    let mut pacer = Pacer::new(Duration::from_secs(1));
    let t0 = Instant::now();
    assert!(pacer.admit("ClusterQueue/team", t0));
    assert!(!pacer.admit("ClusterQueue/team", t0 + Duration::from_millis(300)));
    assert!(!pacer.admit("ClusterQueue/team", t0 + Duration::from_millis(999)));
    // Another queue has a period of its own.
    assert!(pacer.admit("LocalQueue/ns/lq", t0 + Duration::from_millis(500)));
    assert!(pacer.admit("ClusterQueue/team", t0 + Duration::from_secs(1)));
    assert!(!pacer.admit("LocalQueue/ns/lq", t0 + Duration::from_millis(1400)));
}
