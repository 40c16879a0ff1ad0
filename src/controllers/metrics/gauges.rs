//! Queue gauges: replaced as a whole from the queue state, so the series of a queue that is gone
//! go with it, as Kueue deletes a removed ClusterQueue's, LocalQueue's and Cohort's series.

use std::collections::BTreeMap;

use prometheus::GaugeVec;

use super::families::{Families, MetricsOptions};

/// One (flavor, resource) of a ClusterQueue, in the resource's base unit (cores, bytes).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResourceGauge {
    pub flavor: String,
    pub resource: String,
    pub nominal: f64,
    /// `None`: no limit (+Inf).
    pub borrowing_limit: Option<f64>,
    pub lending_limit: Option<f64>,
    pub reservation: f64,
    pub usage: f64,
}

/// One ClusterQueue.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterQueueGauge {
    pub name: String,
    /// The parent Cohort (empty when none) and the root of its tree.
    pub parent_cohort: String,
    pub root_cohort: String,
    /// `pending`, `active` or `terminating`.
    pub status: &'static str,
    pub pending_active: usize,
    pub pending_inadmissible: usize,
    /// Pending workloads by (Admitted reason, QuotaReserved reason).
    pub unadmitted: BTreeMap<(String, String), usize>,
    pub reserving: usize,
    pub admitted: usize,
    /// Finished workloads that still exist.
    pub finished: usize,
    /// What its pending workloads ask for in all, by resource (every covered resource listed).
    pub resource_pending: BTreeMap<String, f64>,
    pub resources: Vec<ResourceGauge>,
    pub weighted_share: Option<f64>,
}

/// One LocalQueue.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LocalQueueGauge {
    pub namespace: String,
    pub name: String,
    /// The LocalQueue's labels, matched against `localQueueSelector`; `None` when the
    /// LocalQueue object is unknown.
    pub labels: Option<BTreeMap<String, String>>,
    pub cluster_queue: String,
    /// `True`, `False` or `Unknown`.
    pub active: &'static str,
    pub pending_active: usize,
    pub pending_inadmissible: usize,
    pub unadmitted: BTreeMap<(String, String), usize>,
    pub reserving: usize,
    pub admitted: usize,
    /// Finished workloads that still exist.
    pub finished: usize,
    /// (flavor, resource, reservation, usage).
    pub resources: Vec<(String, String, f64, f64)>,
}

/// One Cohort.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CohortGauge {
    pub name: String,
    pub parent: String,
    pub root: String,
    /// Nominal quota and reservations over the subtree, by (flavor, resource).
    pub quota: BTreeMap<(String, String), f64>,
    pub reservations: BTreeMap<(String, String), f64>,
    pub admitted_active: usize,
    pub weighted_share: Option<f64>,
}

/// Every queue gauge's input.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueGauges {
    pub cluster_queues: Vec<ClusterQueueGauge>,
    pub local_queues: Vec<LocalQueueGauge>,
    pub cohorts: Vec<CohortGauge>,
}

const CLUSTER_QUEUE_STATUSES: [&str; 3] = ["pending", "active", "terminating"];
const LOCAL_QUEUE_STATUSES: [&str; 3] = ["True", "False", "Unknown"];

pub(super) struct Gauges {
    pending: GaugeVec,
    unadmitted: GaugeVec,
    reserving: GaugeVec,
    admitted: GaugeVec,
    cq_status: GaugeVec,
    cq_info: GaugeVec,
    cq_nominal: GaugeVec,
    cq_borrowing_limit: GaugeVec,
    cq_lending_limit: GaugeVec,
    cq_reservation: GaugeVec,
    cq_usage: GaugeVec,
    cq_weighted_share: GaugeVec,
    cq_finished: GaugeVec,
    cq_resource_pending: GaugeVec,
    lq_pending: GaugeVec,
    lq_unadmitted: GaugeVec,
    lq_reserving: GaugeVec,
    lq_admitted: GaugeVec,
    lq_status: GaugeVec,
    lq_reservation: GaugeVec,
    lq_usage: GaugeVec,
    lq_finished: GaugeVec,
    cohort_info: GaugeVec,
    cohort_quota: GaugeVec,
    cohort_reservations: GaugeVec,
    cohort_admitted: GaugeVec,
    cohort_weighted_share: GaugeVec,
}

impl Gauges {
    pub(super) fn register(f: &Families<'_>) -> Self {
        let cq = ["cluster_queue"];
        let cq_resource = ["cohort", "cluster_queue", "flavor", "resource"];
        let lq = ["name", "namespace"];
        let lq_resource = ["name", "namespace", "flavor", "resource"];
        let cohort_resource = ["cohort", "flavor", "resource"];
        let unadmitted = ["cluster_queue", "reason", "underlying_cause"];
        Gauges {
            pending: f.gauge(
                "kueue_pending_workloads",
                "Pending workloads, active or inadmissible",
                &["cluster_queue", "status"],
            ),
            unadmitted: f.gauge(
                "kueue_unadmitted_workloads",
                "Workloads not admitted, by Admitted reason and QuotaReserved reason",
                &unadmitted,
            ),
            reserving: f.gauge(
                "kueue_reserving_active_workloads",
                "Workloads holding a quota reservation",
                &cq,
            ),
            admitted: f.gauge(
                "kueue_admitted_active_workloads",
                "Admitted workloads that are active",
                &cq,
            ),
            cq_status: f.gauge(
                "kueue_cluster_queue_status",
                "The ClusterQueue's status: 1 on the current one",
                &["cluster_queue", "status"],
            ),
            cq_info: f.gauge(
                "kueue_cluster_queue_info",
                "The ClusterQueue's place in its cohort tree",
                &["cluster_queue", "parent_cohort", "root_cohort"],
            ),
            cq_nominal: f.gauge(
                "kueue_cluster_queue_nominal_quota",
                "Nominal quota",
                &cq_resource,
            ),
            cq_borrowing_limit: f.gauge(
                "kueue_cluster_queue_borrowing_limit",
                "Borrowing limit (+Inf without one)",
                &cq_resource,
            ),
            cq_lending_limit: f.gauge(
                "kueue_cluster_queue_lending_limit",
                "Lending limit (+Inf without one)",
                &cq_resource,
            ),
            cq_reservation: f.gauge(
                "kueue_cluster_queue_resource_reservation",
                "Quota reserved",
                &cq_resource,
            ),
            cq_usage: f.gauge(
                "kueue_cluster_queue_resource_usage",
                "Quota used by admitted workloads",
                &cq_resource,
            ),
            cq_weighted_share: f.gauge(
                "kueue_cluster_queue_weighted_share",
                "Dominant resource share over fair-sharing weight",
                &["cluster_queue", "cohort"],
            ),
            cq_finished: f.gauge(
                "kueue_finished_workloads",
                "Finished workloads that still exist",
                &cq,
            ),
            cq_resource_pending: f.gauge(
                "kueue_cluster_queue_resource_pending",
                "What the pending workloads ask for in all, not yet assigned to flavors",
                &["cluster_queue", "resource"],
            ),
            lq_pending: f.gauge(
                "kueue_local_queue_pending_workloads",
                "Pending workloads of the LocalQueue",
                &["name", "namespace", "status"],
            ),
            lq_unadmitted: f.gauge(
                "kueue_local_queue_unadmitted_workloads",
                "Workloads of the LocalQueue not admitted, by reason",
                &[
                    "name",
                    "namespace",
                    "cluster_queue",
                    "reason",
                    "underlying_cause",
                ],
            ),
            lq_reserving: f.gauge(
                "kueue_local_queue_reserving_active_workloads",
                "Workloads of the LocalQueue holding a quota reservation",
                &lq,
            ),
            lq_admitted: f.gauge(
                "kueue_local_queue_admitted_active_workloads",
                "Admitted workloads of the LocalQueue",
                &lq,
            ),
            lq_status: f.gauge(
                "kueue_local_queue_status",
                "The LocalQueue's Active condition: 1 on the current one",
                &["name", "namespace", "active"],
            ),
            lq_reservation: f.gauge(
                "kueue_local_queue_resource_reservation",
                "Quota reserved by the LocalQueue's workloads",
                &lq_resource,
            ),
            lq_usage: f.gauge(
                "kueue_local_queue_resource_usage",
                "Quota used by the LocalQueue's admitted workloads",
                &lq_resource,
            ),
            lq_finished: f.gauge(
                "kueue_local_queue_finished_workloads",
                "Finished workloads of the LocalQueue that still exist",
                &lq,
            ),
            cohort_info: f.gauge(
                "kueue_cohort_info",
                "The Cohort's place in its tree",
                &["cohort", "parent_cohort", "root_cohort"],
            ),
            cohort_quota: f.gauge(
                "kueue_cohort_subtree_quota",
                "Nominal quota over the Cohort's subtree",
                &cohort_resource,
            ),
            cohort_reservations: f.gauge(
                "kueue_cohort_subtree_resource_reservations",
                "Reservations over the Cohort's subtree",
                &cohort_resource,
            ),
            cohort_admitted: f.gauge(
                "kueue_cohort_subtree_admitted_active_workloads",
                "Admitted workloads in the Cohort's subtree",
                &["cohort"],
            ),
            cohort_weighted_share: f.gauge(
                "kueue_cohort_weighted_share",
                "Dominant resource share of the Cohort over its weight",
                &["cohort"],
            ),
        }
    }

    fn all(&self) -> [&GaugeVec; 27] {
        [
            &self.pending,
            &self.unadmitted,
            &self.reserving,
            &self.admitted,
            &self.cq_status,
            &self.cq_info,
            &self.cq_nominal,
            &self.cq_borrowing_limit,
            &self.cq_lending_limit,
            &self.cq_reservation,
            &self.cq_usage,
            &self.cq_weighted_share,
            &self.cq_finished,
            &self.cq_resource_pending,
            &self.lq_pending,
            &self.lq_unadmitted,
            &self.lq_reserving,
            &self.lq_admitted,
            &self.lq_status,
            &self.lq_reservation,
            &self.lq_usage,
            &self.lq_finished,
            &self.cohort_info,
            &self.cohort_quota,
            &self.cohort_reservations,
            &self.cohort_admitted,
            &self.cohort_weighted_share,
        ]
    }

    pub(super) fn reset(&self) {
        for gauge in self.all() {
            gauge.reset();
        }
    }

    pub(super) fn set(&self, role: &str, options: &MetricsOptions, queues: &QueueGauges) {
        self.reset();
        for cq in &queues.cluster_queues {
            self.cluster_queue(role, options, cq);
        }
        for lq in &queues.local_queues {
            if options.reports_local_queue(lq.labels.as_ref()) {
                self.local_queue(role, lq);
            }
        }
        for cohort in &queues.cohorts {
            self.cohort(role, options, cohort);
        }
    }

    fn cluster_queue(&self, role: &str, options: &MetricsOptions, cq: &ClusterQueueGauge) {
        let name = cq.name.as_str();
        let pending = [
            ("active", cq.pending_active),
            ("inadmissible", cq.pending_inadmissible),
        ];
        for (status, count) in pending {
            self.pending
                .with_label_values(&[role, name, status])
                .set(count as f64);
        }
        for ((reason, cause), count) in &cq.unadmitted {
            self.unadmitted
                .with_label_values(&[role, name, reason, cause])
                .set(*count as f64);
        }
        self.reserving
            .with_label_values(&[role, name])
            .set(cq.reserving as f64);
        self.admitted
            .with_label_values(&[role, name])
            .set(cq.admitted as f64);
        for status in CLUSTER_QUEUE_STATUSES {
            let value = if status == cq.status { 1.0 } else { 0.0 };
            self.cq_status
                .with_label_values(&[role, name, status])
                .set(value);
        }
        self.cq_info
            .with_label_values(&[role, name, &cq.parent_cohort, &cq.root_cohort])
            .set(1.0);
        self.cq_finished
            .with_label_values(&[role, name])
            .set(cq.finished as f64);
        if options.cluster_queue_resources {
            for (resource, amount) in &cq.resource_pending {
                self.cq_resource_pending
                    .with_label_values(&[role, name, resource])
                    .set(*amount);
            }
            for r in &cq.resources {
                let labels = [
                    role,
                    cq.parent_cohort.as_str(),
                    name,
                    &r.flavor,
                    &r.resource,
                ];
                self.cq_nominal.with_label_values(&labels).set(r.nominal);
                let unlimited = |limit: Option<f64>| limit.unwrap_or(f64::INFINITY);
                self.cq_borrowing_limit
                    .with_label_values(&labels)
                    .set(unlimited(r.borrowing_limit));
                self.cq_lending_limit
                    .with_label_values(&labels)
                    .set(unlimited(r.lending_limit));
                self.cq_reservation
                    .with_label_values(&labels)
                    .set(r.reservation);
                self.cq_usage.with_label_values(&labels).set(r.usage);
            }
            if options.fair_sharing
                && let Some(share) = cq.weighted_share
            {
                self.cq_weighted_share
                    .with_label_values(&[role, name, &cq.parent_cohort])
                    .set(if share.is_infinite() { f64::NAN } else { share });
            }
        }
    }

    fn local_queue(&self, role: &str, lq: &LocalQueueGauge) {
        let (name, namespace) = (lq.name.as_str(), lq.namespace.as_str());
        let pending = [
            ("active", lq.pending_active),
            ("inadmissible", lq.pending_inadmissible),
        ];
        for (status, count) in pending {
            self.lq_pending
                .with_label_values(&[role, name, namespace, status])
                .set(count as f64);
        }
        for ((reason, cause), count) in &lq.unadmitted {
            self.lq_unadmitted
                .with_label_values(&[role, name, namespace, &lq.cluster_queue, reason, cause])
                .set(*count as f64);
        }
        self.lq_reserving
            .with_label_values(&[role, name, namespace])
            .set(lq.reserving as f64);
        self.lq_admitted
            .with_label_values(&[role, name, namespace])
            .set(lq.admitted as f64);
        self.lq_finished
            .with_label_values(&[role, name, namespace])
            .set(lq.finished as f64);
        for status in LOCAL_QUEUE_STATUSES {
            let value = if status == lq.active { 1.0 } else { 0.0 };
            self.lq_status
                .with_label_values(&[role, name, namespace, status])
                .set(value);
        }
        for (flavor, resource, reservation, usage) in &lq.resources {
            let labels = [role, name, namespace, flavor, resource];
            self.lq_reservation
                .with_label_values(&labels)
                .set(*reservation);
            self.lq_usage.with_label_values(&labels).set(*usage);
        }
    }

    fn cohort(&self, role: &str, options: &MetricsOptions, cohort: &CohortGauge) {
        let name = cohort.name.as_str();
        self.cohort_info
            .with_label_values(&[role, name, &cohort.parent, &cohort.root])
            .set(1.0);
        // Kueue drops a subtree series once it falls to zero.
        for ((flavor, resource), amount) in cohort.quota.iter().filter(|(_, a)| **a > 0.0) {
            self.cohort_quota
                .with_label_values(&[role, name, flavor, resource])
                .set(*amount);
        }
        for ((flavor, resource), amount) in cohort.reservations.iter().filter(|(_, a)| **a > 0.0) {
            self.cohort_reservations
                .with_label_values(&[role, name, flavor, resource])
                .set(*amount);
        }
        self.cohort_admitted
            .with_label_values(&[role, name])
            .set(cohort.admitted_active as f64);
        if options.fair_sharing
            && let Some(share) = cohort.weighted_share
        {
            self.cohort_weighted_share
                .with_label_values(&[role, name])
                .set(if share.is_infinite() { f64::NAN } else { share });
        }
    }
}
