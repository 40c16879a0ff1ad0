use std::collections::{BTreeMap, BTreeSet};

use super::*;

fn metrics(options: MetricsOptions) -> Metrics {
    Metrics::new(ReplicaRole::Standalone, options, BuildInfo::current())
}

fn all_on() -> MetricsOptions {
    MetricsOptions {
        local_queue_metrics: true,
        local_queue_selector: None,
        cluster_queue_resources: true,
        fair_sharing: true,
    }
}

static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();

const W: WorkloadLabels<'static> = WorkloadLabels {
    cluster_queue: "team",
    local_queue_namespace: "ns",
    local_queue: "lq",
    priority_class: "high",
    local_queue_labels: Some(&NO_LABELS),
};

/// The sample lines of `name` (exact metric name, any labels).
fn samples<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| l.split(['{', ' ']).next() == Some(name))
        .collect()
}

fn queue(name: &str) -> ClusterQueueGauge {
    ClusterQueueGauge {
        name: name.into(),
        parent_cohort: "org".into(),
        root_cohort: "org".into(),
        status: "active",
        pending_active: 1,
        pending_inadmissible: 2,
        unadmitted: BTreeMap::from([(("NoReservation".into(), "WaitingForQuota".into()), 2)]),
        reserving: 3,
        admitted: 3,
        finished: 1,
        resource_pending: BTreeMap::from([("cpu".into(), 2.0)]),
        resources: vec![ResourceGauge {
            flavor: "default".into(),
            resource: "cpu".into(),
            nominal: 4.0,
            borrowing_limit: None,
            lending_limit: Some(1.0),
            reservation: 3.0,
            usage: 3.0,
        }],
        weighted_share: Some(0.5),
    }
}

#[test]
fn admissions_count_under_kueues_names_labels_and_buckets() {
    let m = metrics(all_on());
    m.admission_attempt(true, 0.002);
    m.quota_reserved(&W, 3.0);
    m.admitted(&W, 3.0, 0.0, &["org", "root"]);
    m.admitted(&W, 30000.0, 0.0, &[]);
    let text = m.encode();
    assert!(text.contains("# TYPE kueue_admitted_workloads_total counter"));
    assert_eq!(
        samples(&text, "kueue_admitted_workloads_total"),
        [
            "kueue_admitted_workloads_total{cluster_queue=\"team\",priority_class=\"high\",replica_role=\"standalone\"} 2"
        ]
    );
    assert_eq!(
        samples(&text, "kueue_admission_attempts_total"),
        ["kueue_admission_attempts_total{replica_role=\"standalone\",result=\"success\"} 1"]
    );
    // The ClusterQueue's admission wait has Kueue's 16 buckets, the LocalQueue's twin 14.
    let cq_buckets = samples(&text, "kueue_admission_wait_time_seconds_bucket");
    let lq_buckets = samples(
        &text,
        "kueue_local_queue_admission_wait_time_seconds_bucket",
    );
    assert_eq!(cq_buckets.len(), 17, "16 bounds and +Inf");
    assert_eq!(lq_buckets.len(), 15, "14 bounds and +Inf");
    assert!(cq_buckets.iter().any(|l| l.contains("le=\"40960\"")));
    assert_eq!(
        samples(&text, "kueue_cohort_subtree_admitted_workloads_total").len(),
        2,
        "one per ancestor cohort"
    );
    assert!(samples(&text, "kueue_admission_checks_wait_time_seconds_count")[0].ends_with(" 2"));
}

#[test]
fn every_series_but_build_info_carries_the_replica_role() {
    let m = metrics(all_on());
    m.evicted(&W, "Preempted", "", true);
    m.preempted("other", "InCohortReclamation");
    m.finished(&W);
    m.placement_quality("team", 2, Some("rack"));
    m.set_queues(&QueueGauges {
        cluster_queues: vec![queue("team")],
        ..QueueGauges::default()
    });
    let text = m.encode();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        if line.starts_with("kueue_build_info") {
            assert!(!line.contains("replica_role"), "{line}");
            assert!(line.contains("compiler=\"rustc\""), "{line}");
        } else {
            assert!(line.contains("replica_role=\"standalone\""), "{line}");
        }
    }
    assert_eq!(
        samples(&text, "kueue_evicted_workloads_once_total").len(),
        1
    );
    assert!(
        samples(&text, "kuota_tas_placements_total")[0].contains("lowest_common_level=\"rack\"")
    );
}

#[test]
fn a_queue_no_longer_listed_loses_its_series() {
    let m = metrics(all_on());
    m.set_queues(&QueueGauges {
        cluster_queues: vec![queue("a"), queue("b")],
        ..QueueGauges::default()
    });
    assert!(m.encode().contains("cluster_queue=\"b\""));
    m.set_queues(&QueueGauges {
        cluster_queues: vec![queue("a")],
        ..QueueGauges::default()
    });
    let text = m.encode();
    assert!(!text.contains("cluster_queue=\"b\""));
    let status = samples(&text, "kueue_cluster_queue_status");
    assert_eq!(status.len(), 3, "one series per status");
    assert!(
        status
            .iter()
            .any(|l| l.contains("status=\"active\"") && l.ends_with(" 1"))
    );
    assert!(
        status
            .iter()
            .any(|l| l.contains("status=\"terminating\"") && l.ends_with(" 0"))
    );
    let limit = samples(&text, "kueue_cluster_queue_borrowing_limit");
    // Prometheus reads `inf` as +Inf (Go's ParseFloat).
    assert!(
        limit[0].ends_with(" inf") || limit[0].ends_with("+Inf"),
        "{limit:?}"
    );
}

#[test]
fn a_new_role_drops_the_gauges_of_the_old_one() {
    let m = metrics(all_on());
    m.set_queues(&QueueGauges {
        cluster_queues: vec![queue("a")],
        ..QueueGauges::default()
    });
    m.set_role(ReplicaRole::Leader);
    let text = m.encode();
    assert_eq!(
        samples(&text, "kueue_pending_workloads"),
        Vec::<&str>::new()
    );
    m.set_queues(&QueueGauges {
        cluster_queues: vec![queue("a")],
        ..QueueGauges::default()
    });
    assert!(
        samples(&m.encode(), "kueue_pending_workloads")
            .iter()
            .all(|l| l.contains("replica_role=\"leader\""))
    );
}

#[test]
fn optional_families_follow_the_configuration() {
    let m = metrics(MetricsOptions::default());
    m.admitted(&W, 1.0, 0.0, &[]);
    m.set_queues(&QueueGauges {
        cluster_queues: vec![queue("a")],
        local_queues: vec![LocalQueueGauge {
            namespace: "ns".into(),
            name: "lq".into(),
            cluster_queue: "a".into(),
            labels: Some(BTreeMap::new()),
            active: "True",
            ..LocalQueueGauge::default()
        }],
        ..QueueGauges::default()
    });
    let text = m.encode();
    assert!(!text.contains("kueue_local_queue_"));
    assert!(!text.contains("kueue_cluster_queue_nominal_quota{"));
    assert!(!text.contains("kueue_cluster_queue_weighted_share{"));
    assert!(text.contains("kueue_pending_workloads{"));
}

#[test]
fn cohort_subtree_series_at_zero_are_dropped() {
    let m = metrics(all_on());
    let cohort = |quota: f64| CohortGauge {
        name: "org".into(),
        quota: BTreeMap::from([(("default".into(), "cpu".into()), quota)]),
        ..CohortGauge::default()
    };
    m.set_queues(&QueueGauges {
        cohorts: vec![cohort(8.0)],
        ..QueueGauges::default()
    });
    assert_eq!(samples(&m.encode(), "kueue_cohort_subtree_quota").len(), 1);
    m.set_queues(&QueueGauges {
        cohorts: vec![cohort(0.0)],
        ..QueueGauges::default()
    });
    assert_eq!(samples(&m.encode(), "kueue_cohort_subtree_quota").len(), 0);
}

/// `localQueueSelector`: only LocalQueues whose labels match have `kueue_local_queue_*` series,
/// counters and gauges alike; an unknown LocalQueue has none, as in Kueue.
#[test]
fn only_local_queues_the_selector_matches_are_reported() {
    let selector: k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector =
        yaml_serde::from_str("matchLabels: {observed: \"true\"}").unwrap();
    let m = metrics(MetricsOptions {
        local_queue_selector: Some(selector),
        ..all_on()
    });
    let observed = BTreeMap::from([("observed".to_string(), "true".to_string())]);
    let other = BTreeMap::from([("observed".to_string(), "false".to_string())]);
    let in_queue =
        |name: &'static str, labels: Option<&'static BTreeMap<String, String>>| WorkloadLabels {
            local_queue: name,
            local_queue_labels: labels,
            ..W
        };
    let observed: &'static BTreeMap<String, String> = Box::leak(Box::new(observed));
    let other: &'static BTreeMap<String, String> = Box::leak(Box::new(other));
    for w in [
        in_queue("seen", Some(observed)),
        in_queue("unseen", Some(other)),
        in_queue("unknown", None),
    ] {
        m.quota_reserved(&w, 1.0);
        m.admitted(&w, 1.0, 0.0, &[]);
        m.evicted(&w, "Preempted", "", true);
        m.finished(&w);
    }
    let gauge = |name: &str, labels: Option<&BTreeMap<String, String>>| LocalQueueGauge {
        namespace: "ns".into(),
        name: name.into(),
        cluster_queue: "team".into(),
        labels: labels.cloned(),
        active: "True",
        ..LocalQueueGauge::default()
    };
    m.set_queues(&QueueGauges {
        local_queues: vec![
            gauge("seen", Some(observed)),
            gauge("unseen", Some(other)),
            gauge("unknown", None),
        ],
        ..QueueGauges::default()
    });
    let text = m.encode();
    let local_queue_series: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("kueue_local_queue_"))
        .collect();
    assert!(!local_queue_series.is_empty());
    for line in &local_queue_series {
        assert!(line.contains("name=\"seen\""), "{line}");
    }
    for family in [
        "kueue_local_queue_admitted_workloads_total",
        "kueue_local_queue_evicted_workloads_total",
        "kueue_local_queue_finished_workloads_total",
        "kueue_local_queue_status",
    ] {
        assert!(!samples(&text, family).is_empty(), "{family}");
    }
    // The ClusterQueue's series count every workload.
    assert!(samples(&text, "kueue_admitted_workloads_total")[0].ends_with(" 3"));
}

/// Every metric of Kueue's `pkg/metrics/metrics.go`.
const KUEUE_METRICS: [&str; 64] = [
    "kueue_admission_attempt_duration_seconds",
    "kueue_admission_attempts_total",
    "kueue_admission_checks_wait_time_seconds",
    "kueue_admission_cycle_preemption_skips",
    "kueue_admission_wait_time_seconds",
    "kueue_admitted_active_workloads",
    "kueue_admitted_until_ready_wait_time_seconds",
    "kueue_admitted_workloads_total",
    "kueue_build_info",
    "kueue_cluster_queue_borrowing_limit",
    "kueue_cluster_queue_info",
    "kueue_cluster_queue_lending_limit",
    "kueue_cluster_queue_nominal_quota",
    "kueue_cluster_queue_resource_pending",
    "kueue_cluster_queue_resource_reservation",
    "kueue_cluster_queue_resource_usage",
    "kueue_cluster_queue_status",
    "kueue_cluster_queue_weighted_share",
    "kueue_cohort_info",
    "kueue_cohort_subtree_admitted_active_workloads",
    "kueue_cohort_subtree_admitted_workloads_total",
    "kueue_cohort_subtree_quota",
    "kueue_cohort_subtree_resource_reservations",
    "kueue_cohort_weighted_share",
    "kueue_evicted_workloads_once_total",
    "kueue_evicted_workloads_total",
    "kueue_execution_time_seconds",
    "kueue_finished_workloads",
    "kueue_finished_workloads_total",
    "kueue_local_queue_admission_checks_wait_time_seconds",
    "kueue_local_queue_admission_fair_sharing_usage",
    "kueue_local_queue_admission_wait_time_seconds",
    "kueue_local_queue_admitted_active_workloads",
    "kueue_local_queue_admitted_until_ready_wait_time_seconds",
    "kueue_local_queue_admitted_workloads_total",
    "kueue_local_queue_evicted_workloads_total",
    "kueue_local_queue_execution_time_seconds",
    "kueue_local_queue_finished_workloads",
    "kueue_local_queue_finished_workloads_total",
    "kueue_local_queue_pending_workloads",
    "kueue_local_queue_quota_reserved_wait_time_seconds",
    "kueue_local_queue_quota_reserved_workloads_total",
    "kueue_local_queue_ready_wait_time_seconds",
    "kueue_local_queue_reserving_active_workloads",
    "kueue_local_queue_resource_reservation",
    "kueue_local_queue_resource_usage",
    "kueue_local_queue_status",
    "kueue_local_queue_unadmitted_workloads",
    "kueue_pending_scheduling_hashes",
    "kueue_pending_workloads",
    "kueue_pod_scheduling_gate_removal_seconds",
    "kueue_pods_ready_to_evicted_time_seconds",
    "kueue_preempted_workloads_total",
    "kueue_preemption_target_recomputations_total",
    "kueue_quota_reserved_wait_time_seconds",
    "kueue_quota_reserved_workloads_total",
    "kueue_ready_wait_time_seconds",
    "kueue_replaced_workload_slices_total",
    "kueue_reserving_active_workloads",
    "kueue_unadmitted_workloads",
    "kueue_workload_creation_latency_seconds",
    "kueue_workload_eviction_latency_seconds",
    "multikueue_workloads_admitted_total",
    "multikueue_workloads_dispatched_total",
];

/// The families of a registry in which every method kuota has was called: `(name, type)`.
fn every_family() -> BTreeMap<String, String> {
    let m = metrics(all_on());
    m.admission_attempt(true, 0.1);
    m.quota_reserved(&W, 1.0);
    m.admitted(&W, 1.0, 0.0, &["org"]);
    m.evicted(&W, "Preempted", "", true);
    m.preempted("team", "InClusterQueue");
    m.finished(&W);
    m.execution_time(&W, 60.0);
    m.pods_ready(
        &W,
        ReadyTimes {
            queued_for: 2.0,
            admitted_for: Some(1.0),
        },
    );
    m.pods_ready_to_evicted("team", "PodsReadyTimeout", "", 30.0);
    m.quota_released_after_eviction("team", "PodsReadyTimeout", 0.0);
    m.placement_quality("team", 2, Some("rack"));
    m.node_replaced("team", 1.0);
    m.set_queues(&QueueGauges {
        cluster_queues: vec![queue("team")],
        local_queues: vec![LocalQueueGauge {
            namespace: "ns".into(),
            name: "lq".into(),
            cluster_queue: "team".into(),
            labels: Some(BTreeMap::new()),
            active: "True",
            unadmitted: BTreeMap::from([(("NoReservation".into(), "WaitingForQuota".into()), 1)]),
            resources: vec![("default".into(), "cpu".into(), 1.0, 1.0)],
            ..LocalQueueGauge::default()
        }],
        cohorts: vec![CohortGauge {
            name: "org".into(),
            quota: BTreeMap::from([(("default".into(), "cpu".into()), 4.0)]),
            reservations: BTreeMap::from([(("default".into(), "cpu".into()), 3.0)]),
            weighted_share: Some(0.5),
            ..CohortGauge::default()
        }],
    });
    m.encode()
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_once(' '))
        .map(|(name, kind)| (name.to_string(), kind.to_string()))
        .collect()
}

/// The metrics the module documentation lists as Kueue's and not exported.
fn documented_as_missing() -> BTreeSet<String> {
    include_str!("../metrics.rs")
        .lines()
        .take_while(|l| l.starts_with("//!"))
        .filter(|l| l.starts_with("//! - "))
        .flat_map(|l| l.split('`').skip(1).step_by(2))
        .filter(|name| name.starts_with("kueue_") || name.starts_with("multikueue_"))
        .map(str::to_string)
        .collect()
}

/// Each of Kueue's metrics is exported (its name, with Kueue's type), or listed in the module
/// documentation as missing, with why; none is both.
#[test]
fn every_kueue_metric_is_exported_or_documented_as_missing() {
    let families = every_family();
    let missing = documented_as_missing();
    let kueue: BTreeSet<String> = KUEUE_METRICS.iter().map(|n| n.to_string()).collect();
    assert!(
        missing.is_subset(&kueue),
        "documented names Kueue does not have: {:?}",
        missing.difference(&kueue).collect::<Vec<_>>()
    );
    for name in &kueue {
        assert_ne!(
            families.contains_key(name),
            missing.contains(name),
            "{name}: exported and documented as missing, or neither"
        );
    }
    let exported: Vec<&String> = kueue.iter().filter(|n| families.contains_key(*n)).collect();
    assert_eq!(exported.len(), 55, "{exported:?}");
    for (name, kind) in &families {
        let expected = if name.ends_with("_seconds") {
            "histogram"
        } else if name.ends_with("_total") {
            "counter"
        } else {
            "gauge"
        };
        if name.starts_with("kueue_") {
            assert_eq!(kind, expected, "{name}");
        }
    }
}
