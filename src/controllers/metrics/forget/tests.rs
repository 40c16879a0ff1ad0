use std::collections::BTreeMap;

use super::super::{BuildInfo, MetricsOptions, ReplicaRole, WorkloadLabels};
use super::*;

static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();

fn labels<'a>(cluster_queue: &'a str, local_queue: &'a str) -> WorkloadLabels<'a> {
    WorkloadLabels {
        cluster_queue,
        local_queue_namespace: "ns",
        local_queue,
        priority_class: "high",
        local_queue_labels: Some(&NO_LABELS),
    }
}

fn metrics() -> Metrics {
    let options = MetricsOptions {
        local_queue_metrics: true,
        ..MetricsOptions::default()
    };
    Metrics::new(ReplicaRole::Standalone, options, BuildInfo::current())
}

/// The sample lines that carry `label`.
fn series_with(text: &str, label: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && l.contains(label))
        .map(str::to_owned)
        .collect()
}

/// Two queues with workloads admitted, evicted, preempting and finished, and the cohorts above.
fn two_queues() -> Metrics {
    let m = metrics();
    for (cq, lq) in [("team-a", "lq-a"), ("team-b", "lq-b")] {
        let w = labels(cq, lq);
        m.quota_reserved(&w, 1.0);
        m.admitted(&w, 1.0, 0.0, &["org"]);
        m.evicted(&w, "Preempted", "InClusterQueue", true);
        m.preempted(cq, "InClusterQueue");
        m.finished(&w);
        m.execution_time(&w, 10.0);
    }
    m
}

#[test]
fn a_deleted_cluster_queue_loses_its_counters_and_histograms_and_no_other_queue_does() {
    let m = two_queues();
    let before = m.encode();
    let of_a = series_with(&before, "cluster_queue=\"team-a\"");
    assert!(of_a.len() > 10, "{of_a:?}");
    assert!(!series_with(&before, "preempting_cluster_queue=\"team-a\"").is_empty());
    let of_b = series_with(&before, "cluster_queue=\"team-b\"");

    m.forget_cluster_queue("team-a");
    let after = m.encode();
    assert_eq!(
        series_with(&after, "cluster_queue=\"team-a\""),
        Vec::<String>::new()
    );
    assert_eq!(series_with(&after, "cluster_queue=\"team-b\""), of_b);
    assert!(
        !series_with(&after, "name=\"lq-a\"").is_empty(),
        "the LocalQueue's own series are its own"
    );
}

#[test]
fn a_deleted_local_queue_loses_its_series_and_no_other_queue_does() {
    let m = two_queues();
    let before = m.encode();
    assert!(!series_with(&before, "name=\"lq-a\"").is_empty());
    let of_b = series_with(&before, "name=\"lq-b\"");
    let of_team = series_with(&before, "cluster_queue=\"team-a\"");

    m.forget_local_queue("ns", "lq-a");
    let after = m.encode();
    assert_eq!(series_with(&after, "name=\"lq-a\""), Vec::<String>::new());
    assert_eq!(series_with(&after, "name=\"lq-b\""), of_b);
    assert_eq!(series_with(&after, "cluster_queue=\"team-a\""), of_team);

    m.forget_local_queue("other", "lq-b");
    assert_eq!(
        series_with(&m.encode(), "name=\"lq-b\""),
        of_b,
        "another namespace"
    );
}

#[test]
fn a_deleted_cohort_loses_its_series() {
    let m = two_queues();
    assert!(!series_with(&m.encode(), "cohort=\"org\"").is_empty());
    m.forget_cohort("org");
    assert_eq!(
        series_with(&m.encode(), "cohort=\"org\""),
        Vec::<String>::new()
    );
}
