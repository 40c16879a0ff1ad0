//! What the admission loop tells [`Metrics`]: the labels of a Workload (its ClusterQueue,
//! LocalQueue and priority class), counters derived from each status change that was written,
//! and the queue gauges from the engine's queue report.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;

use super::events::queued_at;
use super::metrics::{Metrics, ReplicaRole, WorkloadLabels};
use super::queue_gauges;
use super::queue_status::QueueKey;
use crate::api::HasConditions;
use crate::api::keys::condition_types;
use crate::api::workload_status::WorkloadEviction;
use crate::api::{LocalQueue, ObjectKey, Workload, WorkloadStatus};
use crate::engine::PreemptionDecision;
use crate::engine::queue_report::QueueReport;
use crate::engine::topology::PlacementQuality;
use crate::engine::topology::quality::short_level_name;
use crate::engine::{Engine, Structure};

use super::queue_gauges::{FinishedWorkload, PendingWorkload};

mod durations;

/// The loop's handle on the metrics.
pub struct MetricsFeed {
    metrics: Arc<Metrics>,
}

/// The LocalQueues as read: their labels decide whether their series are reported
/// (`metrics.localQueueMetrics.localQueueSelector`).
pub type LocalQueueObjects = BTreeMap<ObjectKey, LocalQueue>;

fn local_queue_labels<'a>(
    local_queues: &'a LocalQueueObjects,
    namespace: &str,
    name: &str,
) -> Option<&'a BTreeMap<String, String>> {
    local_queues
        .get(&ObjectKey::new(namespace, name))
        .map(|queue| queue.labels())
}

/// Owned label values of one Workload.
struct Labels<'a> {
    cluster_queue: String,
    namespace: String,
    local_queue: String,
    priority_class: String,
    local_queue_labels: Option<&'a BTreeMap<String, String>>,
}

impl Labels<'_> {
    fn borrowed(&self) -> WorkloadLabels<'_> {
        WorkloadLabels {
            cluster_queue: &self.cluster_queue,
            local_queue_namespace: &self.namespace,
            local_queue: &self.local_queue,
            priority_class: &self.priority_class,
            local_queue_labels: self.local_queue_labels,
        }
    }
}

/// The ClusterQueue a Workload is admitted to, else the one its LocalQueue points at.
fn cluster_queue_of(
    workload: &Workload,
    status: Option<&WorkloadStatus>,
    structure: &Structure,
) -> Option<String> {
    if let Some(admission) = status.and_then(|s| s.admission.as_ref()) {
        return Some(admission.cluster_queue.clone());
    }
    let key = ObjectKey::new(
        workload.namespace().unwrap_or_default(),
        workload.spec.queue_name.clone().unwrap_or_default(),
    );
    structure
        .local_queues
        .get(&key)
        .map(|q| q.cluster_queue.clone())
}

fn labels<'a>(
    workload: &Workload,
    status: Option<&WorkloadStatus>,
    structure: &Structure,
    local_queues: &'a LocalQueueObjects,
) -> Option<Labels<'a>> {
    let namespace = workload.namespace().unwrap_or_default();
    let local_queue = workload.spec.queue_name.clone().unwrap_or_default();
    Some(Labels {
        cluster_queue: cluster_queue_of(workload, status, structure)?,
        local_queue_labels: local_queue_labels(local_queues, &namespace, &local_queue),
        namespace,
        local_queue,
        priority_class: workload
            .spec
            .priority_class_ref
            .as_ref()
            .map(|r| r.name.clone())
            .unwrap_or_default(),
    })
}

/// The Cohorts above a ClusterQueue, nearest first.
fn ancestors(cluster_queue: &str, structure: &Structure) -> Vec<String> {
    structure
        .cluster_queues
        .get(cluster_queue)
        .and_then(|q| q.cohort.as_deref())
        .map(|cohort| queue_gauges::chain(cohort, structure))
        .unwrap_or_default()
}

/// The `schedulingStats` eviction counter a written eviction raised, and its count before: Kueue
/// labels the eviction metrics with that counter's reason and underlying cause (`Deactivated` and
/// `RequeuingLimitExceeded`, where the condition reads `DeactivatedDueToRequeuingLimitExceeded`),
/// and counts a Workload once per counter that leaves zero.
fn counted_eviction<'a>(
    old: Option<&WorkloadStatus>,
    after: &'a WorkloadStatus,
) -> Option<(&'a WorkloadEviction, i32)> {
    let count_before = |counter: &WorkloadEviction| {
        old.and_then(|s| s.scheduling_stats.as_ref())
            .and_then(|stats| {
                stats.evictions.iter().find(|e| {
                    e.reason == counter.reason && e.underlying_cause == counter.underlying_cause
                })
            })
            .map_or(0, |e| e.count)
    };
    after
        .scheduling_stats
        .iter()
        .flat_map(|stats| &stats.evictions)
        .map(|counter| (counter, count_before(counter)))
        .find(|(counter, before)| counter.count > *before)
}

impl MetricsFeed {
    pub fn new(metrics: Arc<Metrics>) -> Self {
        MetricsFeed { metrics }
    }

    /// From now on this replica reports as the leader. Called by the loop before it reports
    /// queues again, so no gauge is written under the old role after the switch.
    pub fn elected(&self) {
        self.metrics.set_role(ReplicaRole::Leader);
    }

    pub fn admission_attempt(&self, admitted_any: bool, seconds: f64) {
        self.metrics.admission_attempt(admitted_any, seconds);
    }

    /// A preemption the engine issued, counted under the preemptor's ClusterQueue.
    pub fn preemption_issued(
        &self,
        preemption: &PreemptionDecision,
        preemptor: Option<&Workload>,
        structure: &Structure,
    ) {
        let Some(preemptor) = preemptor else {
            return;
        };
        if let Some(cq) = cluster_queue_of(preemptor, None, structure) {
            self.metrics.preempted(&cq, preemption.reason.as_str());
        }
    }

    /// A workload's failed nodes replaced, `seconds` after the earliest of them failed.
    pub fn node_replaced(&self, workload: &Workload, seconds: f64) {
        if let Some(admission) = workload.status.as_ref().and_then(|s| s.admission.as_ref()) {
            self.metrics
                .node_replaced(&admission.cluster_queue, seconds.max(0.0));
        }
    }

    /// A workload evicted from the ClusterQueue `cluster_queue` because its failed nodes had no
    /// replacement.
    pub fn node_replacement_failed(&self, cluster_queue: &str) {
        self.metrics.node_replacement_failed(cluster_queue);
    }

    /// Counters for a status change that was written.
    pub fn written(
        &self,
        before: &Workload,
        after: &WorkloadStatus,
        now: &Time,
        placement: &[(String, PlacementQuality)],
        structure: &Structure,
        local_queues: &LocalQueueObjects,
    ) {
        let old = before.status.as_ref();
        let Some(labels) = labels(before, Some(after), structure, local_queues)
            .or_else(|| labels(before, old, structure, local_queues))
        else {
            return;
        };
        let reserved_now = after.admission.is_some()
            && old.and_then(|s| s.admission.as_ref()) != after.admission.as_ref();
        let since =
            |at: &Time| (now.0.as_millisecond() - at.0.as_millisecond()).max(0) as f64 / 1000.0;
        let waited = queued_at(before).map_or(0.0, |at| since(&at));
        if reserved_now {
            self.metrics.quota_reserved(&labels.borrowed(), waited);
        }
        // Admitted with the reservation, or once every admission check said Ready: the checks'
        // wait runs from the reservation.
        let admitted_now = after.admission.is_some()
            && after.condition_is_true(condition_types::ADMITTED)
            && (reserved_now || !old.condition_is_true(condition_types::ADMITTED));
        if admitted_now {
            let checks_wait = after
                .condition(condition_types::QUOTA_RESERVED)
                .map_or(0.0, |c| since(&c.last_transition_time));
            let cohorts = ancestors(&labels.cluster_queue, structure);
            let cohorts: Vec<&str> = cohorts.iter().map(String::as_str).collect();
            self.metrics
                .admitted(&labels.borrowed(), waited, checks_wait, &cohorts);
        }
        if reserved_now {
            for (_, quality) in placement {
                let lowest = quality
                    .domains_per_level
                    .last()
                    .copied()
                    .unwrap_or_default();
                let common = quality
                    .lowest_common_level()
                    .and_then(|level| quality.levels.get(level))
                    .map(|key| short_level_name(key));
                self.metrics
                    .placement_quality(&labels.cluster_queue, lowest, common);
            }
        }
        let evicted = after
            .true_condition(condition_types::EVICTED)
            .map(|c| c.reason.to_string());
        if let Some(condition_reason) = evicted
            && !old.condition_is_true(condition_types::EVICTED)
        {
            let (reason, cause, first_time) = match counted_eviction(old, after) {
                Some((counted, before)) => (
                    counted.reason.clone(),
                    counted.underlying_cause.clone(),
                    before == 0,
                ),
                None => {
                    let first_time = old.is_none_or(|s| {
                        s.condition(condition_types::EVICTED)
                            .is_none_or(|c| c.reason != condition_reason)
                    });
                    (condition_reason, String::new(), first_time)
                }
            };
            self.metrics
                .evicted(&labels.borrowed(), &reason, &cause, first_time);
            if let Some(seconds) = durations::ready_until_evicted(after) {
                self.metrics
                    .pods_ready_to_evicted(&labels.cluster_queue, &reason, &cause, seconds);
            }
        }
    }

    /// A Workload read from the API, and the version read before it: what Kueue's controllers
    /// count on their watches. A Workload that finished (its execution time too); one whose pods
    /// became ready for the first time since its admission (the waits until then); an evicted
    /// one whose quota was released (the time since the eviction).
    pub fn watched(
        &self,
        previous: &Workload,
        current: &Workload,
        now: &Time,
        structure: &Structure,
        local_queues: &LocalQueueObjects,
    ) {
        let status = current.status.as_ref();
        if let Some((cluster_queue, reason, seconds)) =
            durations::eviction_released(previous, current, now)
        {
            self.metrics
                .quota_released_after_eviction(&cluster_queue, &reason, seconds);
        }
        let Some(labels) = labels(current, status, structure, local_queues) else {
            return;
        };
        let finished = |w: &Workload| {
            w.true_condition(condition_types::FINISHED)
                .map(|c| c.reason.to_string())
        };
        if finished(previous).is_none() && finished(current).is_some() {
            self.metrics.finished(&labels.borrowed());
            if let Some(seconds) = durations::execution(status) {
                self.metrics.execution_time(&labels.borrowed(), seconds);
            }
        }
        if let Some(times) = durations::ready(previous, current) {
            self.metrics.pods_ready(&labels.borrowed(), times);
        }
    }

    /// Drops the series of a queue that was deleted.
    pub fn queue_deleted(&self, queue: &QueueKey) {
        match queue {
            QueueKey::ClusterQueue(name) => self.metrics.forget_cluster_queue(name),
            QueueKey::LocalQueue(key) => self
                .metrics
                .forget_local_queue(key.namespace.as_str(), key.name.as_str()),
            QueueKey::Cohort(name) => self.metrics.forget_cohort(name),
        }
    }

    /// Replaces the queue gauges from the engine's queue report, its quota objects, its pending
    /// workloads (the LocalQueue each waits in, why, and what it asks for) and finished ones, and
    /// the LocalQueues as read.
    pub fn queues(&self, report: &QueueReport, engine: &Engine, local_queues: &LocalQueueObjects) {
        let pending: Vec<PendingWorkload> = engine
            .pending()
            .map(|(workload, reason)| PendingWorkload {
                namespace: &workload.namespace,
                local_queue: &workload.queue_name,
                reason,
                pod_sets: &workload.pod_sets,
            })
            .collect();
        let finished: Vec<FinishedWorkload> = engine
            .finished()
            .map(|workload| FinishedWorkload {
                namespace: &workload.namespace,
                local_queue: &workload.queue_name,
            })
            .collect();
        let mut gauges = queue_gauges::gauges(report, engine.structure(), &pending, &finished);
        for queue in &mut gauges.local_queues {
            queue.labels = local_queue_labels(local_queues, &queue.namespace, &queue.name).cloned();
        }
        self.metrics.set_queues(&gauges);
    }
}

#[cfg(test)]
mod tests;
