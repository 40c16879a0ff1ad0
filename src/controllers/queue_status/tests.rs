use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use tokio::time::Instant;

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
            reserving: admitted,
            admitted,
            reservation: Vec::new(),
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
            reserving: admitted,
            admitted,
            reservation: Vec::new(),
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

/// `team` read at `version`, with `generation` to tell copies apart.
fn team(version: &str, generation: i64) -> QueueWrite {
    let mut cq = ClusterQueue::new("team", Default::default());
    cq.metadata.resource_version = Some(version.into());
    cq.metadata.generation = Some(generation);
    QueueWrite::ClusterQueue(cq)
}

#[test]
fn a_failed_write_leaves_a_newer_version_the_watch_brought() {
    let mut objects = QueueObjects::default();
    objects.put(team("7", 1));
    let before = objects.put(team("7", 2)).expect("the queue as read");
    objects.put(team("9", 3));
    objects.restore(before);
    assert_eq!(objects.cluster_queues["team"].metadata.generation, Some(3));
}

#[test]
fn a_stored_write_is_taken_unless_the_watch_brought_another_version() {
    let key = QueueKey::ClusterQueue("team".into());
    let mut objects = QueueObjects::default();
    objects.put(team("7", 1));
    objects.written(team("8", 2), Some("7"));
    assert_eq!(objects.version(&key), Some(Some("8")));

    objects.put(team("10", 3));
    objects.written(team("9", 4), Some("8"));
    assert_eq!(
        objects.version(&key),
        Some(Some("10")),
        "the newer read stays"
    );

    objects.cluster_queues.clear();
    objects.written(team("11", 5), Some("10"));
    assert_eq!(objects.version(&key), None, "a deleted queue stays deleted");
}

#[test]
fn a_conflict_holds_a_queue_until_another_version_is_read_or_it_is_gone() {
    let key = QueueKey::ClusterQueue("team".into());
    let mut objects = QueueObjects::default();
    objects.put(team("7", 1));
    let mut conflicts = Conflicts::default();
    conflicts.insert(key.clone(), Some("7".into()));
    conflicts.retain_current(&objects);
    assert!(
        conflicts.holds(&key),
        "still at the version the write conflicted on"
    );

    objects.put(team("9", 2));
    conflicts.retain_current(&objects);
    assert!(!conflicts.holds(&key));

    conflicts.insert(key.clone(), Some("9".into()));
    objects.cluster_queues.clear();
    conflicts.retain_current(&objects);
    assert!(conflicts.is_empty(), "a deleted queue is forgotten");
}

/// `n` ClusterQueues `cq-i`, each with a LocalQueue `ns/lq-i`.
fn many(n: usize) -> QueueObjects {
    let mut objects = QueueObjects::default();
    for i in 0..n {
        let mut cq = ClusterQueue::new(&format!("cq-{i}"), Default::default());
        cq.metadata.generation = Some(1);
        objects.put(QueueWrite::ClusterQueue(cq));
        let mut lq = LocalQueue::new(&format!("lq-{i}"), Default::default());
        lq.metadata.namespace = Some("ns".into());
        objects.put(QueueWrite::LocalQueue(lq));
    }
    objects
}

/// The report of [`many`]'s queues, each with `admitted` Workloads.
fn load(n: usize, admitted: usize) -> QueueReport {
    let mut report = QueueReport {
        cluster_queues: Vec::new(),
        local_queues: Vec::new(),
        cohorts: Vec::new(),
    };
    for i in 0..n {
        let mut one = self::report(admitted);
        report
            .cluster_queues
            .extend(one.cluster_queues.drain(..).map(|mut cq| {
                cq.name = format!("cq-{i}");
                cq
            }));
        report
            .local_queues
            .extend(one.local_queues.drain(..).map(|mut lq| {
                lq.name = format!("lq-{i}");
                lq.cluster_queue = format!("cq-{i}");
                lq
            }));
    }
    report
}

/// One report at `at`: the queues whose status differs, as many as `pacer` lets through,
/// taken as written. Returns the keys written.
fn round(
    objects: &mut QueueObjects,
    pacer: &mut Pacer<QueueKey>,
    report: &QueueReport,
    at: Instant,
) -> Vec<QueueKey> {
    let candidates = changed(objects, report, &now())
        .into_iter()
        .map(|write| (write.key(), write))
        .collect();
    let mut keys = Vec::new();
    for (key, write) in pacer.pick(candidates, at) {
        objects.put(write);
        keys.push(key);
    }
    keys
}

const HALF_SECOND: Duration = Duration::from_millis(500);

fn budget<K: Ord + Clone>() -> Pacer<K> {
    Pacer::new(Duration::from_secs(1), 10, 10)
}

#[test]
fn more_differing_queues_than_the_budget_take_the_budget_a_second() {
    let mut objects = many(30);
    let mut pacer = budget();
    let t0 = Instant::now();
    let counts: Vec<usize> = (0..20)
        .map(|k| {
            // Every queue's status changes at every report, as under a steady load.
            let at = t0 + HALF_SECOND * k;
            round(&mut objects, &mut pacer, &load(30, k as usize + 1), at).len()
        })
        .collect();
    // The burst first, then 10 a second: 5 at each report half a second apart.
    let mut expected = vec![10];
    expected.extend([5; 19]);
    assert_eq!(counts, expected);
}

#[test]
fn every_differing_queue_is_written_in_turn_stalest_first() {
    let mut objects = many(30);
    let mut pacer = budget();
    let t0 = Instant::now();
    let mut last: BTreeMap<QueueKey, Instant> = BTreeMap::new();
    let mut order: Vec<QueueKey> = Vec::new();
    for k in 0..24 {
        let at = t0 + HALF_SECOND * k;
        let report = load(30, k as usize + 1);
        let differing: Vec<QueueKey> = changed(&objects, &report, &now())
            .iter()
            .map(QueueWrite::key)
            .collect();
        let written = round(&mut objects, &mut pacer, &report, at);
        let staleness = |key: &QueueKey| last.get(key).copied();
        let newest_written = written.iter().map(staleness).max().flatten();
        for key in differing.iter().filter(|key| !written.contains(key)) {
            assert!(
                staleness(key) >= newest_written,
                "{key:?} (last written {:?}) was left for a queue written later",
                staleness(key)
            );
        }
        for key in written {
            last.insert(key.clone(), at);
            order.push(key);
        }
    }
    // 10 + 23 × 5 writes: every one of the 60 queues once, then again in the same order.
    assert_eq!(order.len(), 125);
    let first: BTreeSet<&QueueKey> = order[..60].iter().collect();
    assert_eq!(
        first.len(),
        60,
        "a queue was written twice before all were once"
    );
    assert!(first.contains(&QueueKey::LocalQueue(ObjectKey::new("ns", "lq-29"))));
    assert_eq!(order[60..120], order[..60]);
}

#[test]
fn a_queue_is_written_at_most_once_per_period() {
    let mut pacer = budget();
    let t0 = Instant::now();
    let one = |key: &str| vec![(key.to_string(), ())];
    assert_eq!(pacer.pick(one("ClusterQueue/team"), t0).len(), 1);
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    assert_eq!(pacer.pick(one("ClusterQueue/team"), at(300)), []);
    assert_eq!(pacer.pick(one("ClusterQueue/team"), at(999)), []);
    // Another queue has a period of its own.
    assert_eq!(pacer.pick(one("LocalQueue/ns/lq"), at(500)).len(), 1);
    assert_eq!(pacer.pick(one("ClusterQueue/team"), at(1000)).len(), 1);
    assert_eq!(pacer.pick(one("LocalQueue/ns/lq"), at(1400)), []);
}

#[test]
fn within_the_budget_each_queue_is_still_written_at_most_once_per_period() {
    let mut objects = many(3);
    let mut pacer = budget();
    let t0 = Instant::now();
    let counts: Vec<usize> = (0..8)
        .map(|k| {
            round(
                &mut objects,
                &mut pacer,
                &load(3, k + 1),
                t0 + HALF_SECOND * k as u32,
            )
            .len()
        })
        .collect();
    // Six queues changing at every report are all written, each every second: the budget
    // holds none of them back.
    assert_eq!(counts, [6, 0, 6, 0, 6, 0, 6, 0]);
}

#[test]
fn queues_that_stop_changing_end_written_with_their_last_status() {
    let mut objects = many(30);
    let mut pacer = budget();
    let t0 = Instant::now();
    for k in 0..10 {
        round(
            &mut objects,
            &mut pacer,
            &load(30, k + 1),
            t0 + HALF_SECOND * k as u32,
        );
    }
    // The load ends: the statuses stop changing, and the queues held back are written with
    // the last one, 5 at each report.
    let last = load(30, 10);
    let mut reports = 0;
    while !changed(&objects, &last, &now()).is_empty() {
        assert!(reports < 12, "queues still unwritten after 12 reports");
        round(
            &mut objects,
            &mut pacer,
            &last,
            t0 + HALF_SECOND * (10 + reports),
        );
        reports += 1;
    }
    assert!(reports > 0, "the budget held nothing back");
    for cq in objects.cluster_queues.values() {
        assert_eq!(
            cq.status.as_ref().and_then(|s| s.admitted_workloads),
            Some(10)
        );
    }
    for lq in objects.local_queues.values() {
        assert_eq!(
            lq.status.as_ref().and_then(|s| s.admitted_workloads),
            Some(10)
        );
    }
}

#[test]
fn a_queue_not_written_for_the_horizon_is_forgotten_and_goes_first() {
    let mut pacer = budget();
    let t0 = Instant::now();
    let keys = |names: &[&str]| -> Vec<(String, ())> {
        names.iter().map(|n| (n.to_string(), ())).collect()
    };
    assert_eq!(pacer.pick(keys(&["old", "gone"]), t0).len(), 2);
    let later = t0 + Duration::from_secs(300);
    assert_eq!(pacer.pick(keys(&["recent"]), later).len(), 1);
    assert_eq!(pacer.remembered(), 3);
    // Ten minutes after, `old` and `gone` are forgotten; `old` still precedes `recent`.
    let horizon = t0 + Duration::from_secs(600);
    let picked = pacer.pick(keys(&["recent", "old"]), horizon);
    assert_eq!(picked[0].0, "old");
    assert_eq!(pacer.remembered(), 2);
}
