//! Kueue's workload-time histograms from the versions of a Workload the controller reads.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::durations;
use super::{LocalQueueObjects, MetricsFeed};
use crate::api::Workload;
use crate::controllers::metrics::{BuildInfo, Metrics, MetricsOptions, ReadyTimes, ReplicaRole};
use crate::engine::Structure;

fn at(hh_mm_ss: &str) -> Time {
    Time(format!("2026-01-01T{hh_mm_ss}Z").parse().unwrap())
}

/// Workload `team/w`, created at 09:55, with `status` (YAML, indented as under `status:`).
fn workload(status: &str) -> Workload {
    yaml_serde::from_str(&format!(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {{name: w, namespace: team, creationTimestamp: \"2026-01-01T09:55:00Z\"}}
spec:
  queueName: lq
  podSets: []
status:
{status}"
    ))
    .unwrap()
}

const ADMISSION: &str = "  admission: {clusterQueue: team-cq, podSetAssignments: []}\n";

fn condition(type_: &str, status: &str, reason: &str, hh_mm: &str) -> String {
    format!(
        "  - {{type: {type_}, status: \"{status}\", reason: {reason}, message: m, lastTransitionTime: \"2026-01-01T{hh_mm}:00Z\"}}\n"
    )
}

fn admitted_with(conditions: &[String]) -> Workload {
    let mut status = format!("{ADMISSION}  conditions:\n");
    status.push_str(&condition("Admitted", "True", "Admitted", "10:00"));
    for c in conditions {
        status.push_str(c);
    }
    workload(&status)
}

#[test]
fn execution_time_runs_from_admission_to_the_end_plus_earlier_runs() {
    let mut finished = admitted_with(&[condition("Finished", "True", "Succeeded", "10:30")]);
    assert_eq!(durations::execution(finished.status.as_ref()), Some(1800.0));
    if let Some(status) = finished.status.as_mut() {
        status.accumulated_past_execution_time_seconds = Some(120);
    }
    assert_eq!(durations::execution(finished.status.as_ref()), Some(1920.0));
    let running = admitted_with(&[]);
    assert_eq!(durations::execution(running.status.as_ref()), None);
}

#[test]
fn ready_waits_are_taken_once_the_pods_first_start() {
    let waiting = admitted_with(&[condition("PodsReady", "False", "WaitForStart", "10:00")]);
    let started = admitted_with(&[condition("PodsReady", "True", "Started", "10:05")]);
    assert_eq!(
        durations::ready(&waiting, &started),
        Some(ReadyTimes {
            queued_for: 600.0,
            admitted_for: Some(300.0),
        })
    );
    assert_eq!(durations::ready(&started, &started), None);
    let recovered = admitted_with(&[condition("PodsReady", "True", "Recovered", "10:05")]);
    assert_eq!(durations::ready(&waiting, &recovered), None);
}

#[test]
fn an_eviction_measures_the_pods_ready_time_and_the_release_of_its_quota() {
    let evicted = admitted_with(&[
        condition("PodsReady", "True", "Started", "10:05"),
        condition("Evicted", "True", "PodsReadyTimeout", "10:20"),
    ]);
    let status = evicted.status.as_ref().unwrap();
    assert_eq!(durations::ready_until_evicted(status), Some(900.0));

    let released = workload(&format!(
        "  conditions:\n{}",
        condition("Evicted", "True", "PodsReadyTimeout", "10:20")
    ));
    assert_eq!(
        durations::eviction_released(&evicted, &released, &at("10:20:03")),
        Some(("team-cq".to_string(), "PodsReadyTimeout".to_string(), 3.0))
    );
    assert_eq!(
        durations::eviction_released(&evicted, &evicted, &at("10:20:03")),
        None,
        "still holding its quota"
    );
}

#[test]
fn the_feed_reports_the_times_under_kueues_names() {
    let metrics = Arc::new(Metrics::new(
        ReplicaRole::Standalone,
        MetricsOptions::default(),
        BuildInfo::current(),
    ));
    let feed = MetricsFeed::new(metrics.clone());
    let (structure, queues) = (Structure::default(), LocalQueueObjects::new());
    let waiting = admitted_with(&[condition("PodsReady", "False", "WaitForStart", "10:00")]);
    let started = admitted_with(&[condition("PodsReady", "True", "Started", "10:05")]);
    let finished = admitted_with(&[
        condition("PodsReady", "True", "Started", "10:05"),
        condition("Finished", "True", "Succeeded", "10:30"),
    ]);
    let now = at("10:30:00");
    feed.watched(&waiting, &started, &now, &structure, &queues);
    feed.watched(&started, &finished, &now, &structure, &queues);
    let text = metrics.encode();
    for line in [
        "kueue_ready_wait_time_seconds_sum{cluster_queue=\"team-cq\",priority_class=\"\",replica_role=\"standalone\"} 600",
        "kueue_admitted_until_ready_wait_time_seconds_sum{cluster_queue=\"team-cq\",priority_class=\"\",replica_role=\"standalone\"} 300",
        "kueue_execution_time_seconds_sum{cluster_queue=\"team-cq\",priority_class=\"\",replica_role=\"standalone\"} 1800",
        "kueue_finished_workloads_total{cluster_queue=\"team-cq\",priority_class=\"\",replica_role=\"standalone\"} 1",
    ] {
        assert!(text.contains(line), "missing {line} in\n{text}");
    }
}
