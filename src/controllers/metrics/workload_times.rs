//! Histograms of how long a Workload took from one condition to another, with Kueue's names,
//! labels and buckets: its execution time when it finishes, its wait until its pods were ready,
//! its pods' time ready before an eviction, and the time from an eviction to its quota being
//! released.

use prometheus::HistogramVec;

use super::buckets::{B14, b16};
use super::families::Families;

pub(super) struct WorkloadTimes {
    execution: HistogramVec,
    lq_execution: HistogramVec,
    queued_until_ready: HistogramVec,
    admitted_until_ready: HistogramVec,
    lq_queued_until_ready: HistogramVec,
    lq_admitted_until_ready: HistogramVec,
    pods_ready_to_evicted: HistogramVec,
    eviction_latency: HistogramVec,
}

/// When a Workload's pods all became ready for the first time since its admission.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReadyTimes {
    /// From its queueing (creation or last requeue).
    pub queued_for: f64,
    /// From its admission; `None` without an `Admitted` condition.
    pub admitted_for: Option<f64>,
}

impl WorkloadTimes {
    pub(super) fn register(f: &Families<'_>) -> Self {
        let cq_pc = ["cluster_queue", "priority_class"];
        let lq_pc = ["name", "namespace", "priority_class"];
        WorkloadTimes {
            execution: f.histogram(
                "kueue_execution_time_seconds",
                "Execution time of a finished workload, from its admission to its end, with the \
                 time it ran before earlier evictions",
                &cq_pc,
                b16(),
            ),
            lq_execution: f.histogram(
                "kueue_local_queue_execution_time_seconds",
                "Execution time of a finished workload, per LocalQueue",
                &lq_pc,
                b16(),
            ),
            queued_until_ready: f.histogram(
                "kueue_ready_wait_time_seconds",
                "Time from queueing (creation or last requeue) until the workload's pods were ready",
                &cq_pc,
                B14.to_vec(),
            ),
            admitted_until_ready: f.histogram(
                "kueue_admitted_until_ready_wait_time_seconds",
                "Time from admission until the workload's pods were ready",
                &cq_pc,
                B14.to_vec(),
            ),
            lq_queued_until_ready: f.histogram(
                "kueue_local_queue_ready_wait_time_seconds",
                "Time from queueing until the workload's pods were ready, per LocalQueue",
                &lq_pc,
                B14.to_vec(),
            ),
            lq_admitted_until_ready: f.histogram(
                "kueue_local_queue_admitted_until_ready_wait_time_seconds",
                "Time from admission until the workload's pods were ready, per LocalQueue",
                &lq_pc,
                B14.to_vec(),
            ),
            pods_ready_to_evicted: f.histogram(
                "kueue_pods_ready_to_evicted_time_seconds",
                "Time from the workload's pods being ready to its eviction",
                &["cluster_queue", "reason", "underlying_cause"],
                B14.to_vec(),
            ),
            eviction_latency: f.histogram(
                "kueue_workload_eviction_latency_seconds",
                "Time from the workload's eviction until its quota was released",
                &["cluster_queue", "reason"],
                B14.to_vec(),
            ),
        }
    }

    pub(super) fn execution(
        &self,
        role: &str,
        cluster_queue: &str,
        local_queue: Option<[&str; 2]>,
        priority_class: &str,
        seconds: f64,
    ) {
        let seconds = seconds.max(0.0);
        self.execution
            .with_label_values(&[role, cluster_queue, priority_class])
            .observe(seconds);
        if let Some([name, namespace]) = local_queue {
            self.lq_execution
                .with_label_values(&[role, name, namespace, priority_class])
                .observe(seconds);
        }
    }

    pub(super) fn ready(
        &self,
        role: &str,
        cluster_queue: &str,
        local_queue: Option<[&str; 2]>,
        priority_class: &str,
        times: ReadyTimes,
    ) {
        self.queued_until_ready
            .with_label_values(&[role, cluster_queue, priority_class])
            .observe(times.queued_for);
        if let Some(admitted_for) = times.admitted_for {
            self.admitted_until_ready
                .with_label_values(&[role, cluster_queue, priority_class])
                .observe(admitted_for);
        }
        if let Some([name, namespace]) = local_queue {
            let labels = [role, name, namespace, priority_class];
            self.lq_queued_until_ready
                .with_label_values(&labels)
                .observe(times.queued_for);
            if let Some(admitted_for) = times.admitted_for {
                self.lq_admitted_until_ready
                    .with_label_values(&labels)
                    .observe(admitted_for);
            }
        }
    }

    pub(super) fn pods_ready_to_evicted(
        &self,
        role: &str,
        cluster_queue: &str,
        reason: &str,
        underlying_cause: &str,
        seconds: f64,
    ) {
        self.pods_ready_to_evicted
            .with_label_values(&[role, cluster_queue, reason, underlying_cause])
            .observe(seconds);
    }

    pub(super) fn eviction_latency(
        &self,
        role: &str,
        cluster_queue: &str,
        reason: &str,
        seconds: f64,
    ) {
        // The eviction's time is the API server's clock, read against this one: a skew must not
        // make the latency negative, as Kueue clamps it.
        self.eviction_latency
            .with_label_values(&[role, cluster_queue, reason])
            .observe(seconds.max(0.0));
    }
}
