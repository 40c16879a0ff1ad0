//! Prometheus metrics with Kueue's names, types, labels and buckets; kuota's own additions start
//! with `kuota_`. Every series but `kueue_build_info` carries `replica_role`. The registry is
//! private: the methods below are the only way in, and [`Metrics::encode`] the only way out.
//!
//! Kueue's metrics that kuota does not export, because nothing in kuota means what they mean (a
//! dashboard panel built on them stays empty):
//! - `kueue_admission_cycle_preemption_skips`: kuota's cycle holds the quota a preemptor is owed
//!   for the whole cycle, so no preemptor is skipped for another queue's overlapping targets.
//! - `kueue_preemption_target_recomputations_total`: kuota never recomputes a preemptor's
//!   targets for an overlap within a cycle, for the same reason.
//! - `kueue_pending_scheduling_hashes`: kuota's equivalence classes of identical workloads live
//!   for one cycle and are not Kueue's hashes; their count would not be Kueue's.
//! - `kueue_local_queue_admission_fair_sharing_usage`: admission fair sharing is not implemented
//!   (a configuration setting `admissionFairSharing` is refused).
//! - `kueue_replaced_workload_slices_total`: elastic workload slices are not implemented.
//! - `kueue_workload_creation_latency_seconds`, `kueue_pod_scheduling_gate_removal_seconds`: the
//!   Job and pod integrations do not measure the time from a job's creation to its Workload's, nor
//!   from an admission to a pod's gate removal.
//! - `multikueue_workloads_dispatched_total`, `multikueue_workloads_admitted_total`: MultiKueue is
//!   not implemented.
//!

mod buckets;
mod families;
mod forget;
mod gauges;
mod labelled;
mod workload_times;

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError, RwLock};

use prometheus::{Encoder, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder};

use buckets::{B14, DEF, DOMAIN_BUCKETS, REPLACEMENT_BUCKETS, b16};
use families::Families;
pub use families::MetricsOptions;
use gauges::Gauges;
pub use gauges::{ClusterQueueGauge, CohortGauge, LocalQueueGauge, QueueGauges, ResourceGauge};
pub use workload_times::ReadyTimes;
use workload_times::WorkloadTimes;

/// Which replica this is, as the `replica_role` label says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplicaRole {
    Leader,
    Follower,
    /// Leader election is off.
    Standalone,
}

impl ReplicaRole {
    fn label(self) -> &'static str {
        match self {
            ReplicaRole::Leader => "leader",
            ReplicaRole::Follower => "follower",
            ReplicaRole::Standalone => "standalone",
        }
    }
}

/// `kueue_build_info`'s labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildInfo {
    pub git_version: String,
    pub git_commit: String,
    pub build_date: String,
    pub platform: String,
}

impl BuildInfo {
    /// This binary's version and platform.
    pub fn current() -> Self {
        BuildInfo {
            git_version: concat!("v", env!("CARGO_PKG_VERSION")).to_string(),
            git_commit: String::new(),
            build_date: String::new(),
            platform: format!("{}/{}", std::env::consts::OS, go_arch()),
        }
    }
}

/// The architecture as Go names it, as Kueue's `platform` label does.
fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}

/// A Workload's labels.
#[derive(Clone, Copy, Debug)]
pub struct WorkloadLabels<'a> {
    pub cluster_queue: &'a str,
    pub local_queue_namespace: &'a str,
    pub local_queue: &'a str,
    pub priority_class: &'a str,
    /// The labels of its LocalQueue, which decide whether the LocalQueue's series are reported;
    /// `None` when the LocalQueue is unknown.
    pub local_queue_labels: Option<&'a BTreeMap<String, String>>,
}

/// Counters and histograms updated as decisions are written.
struct Events {
    admission_attempts: IntCounterVec,
    admission_attempt_duration: HistogramVec,
    quota_reserved: IntCounterVec,
    quota_reserved_wait: HistogramVec,
    admitted: IntCounterVec,
    admission_wait: HistogramVec,
    admission_checks_wait: HistogramVec,
    evicted: IntCounterVec,
    evicted_once: IntCounterVec,
    preempted: IntCounterVec,
    finished: IntCounterVec,
    cohort_admitted: IntCounterVec,
    lq_quota_reserved: IntCounterVec,
    lq_quota_reserved_wait: HistogramVec,
    lq_admitted: IntCounterVec,
    lq_admission_wait: HistogramVec,
    lq_admission_checks_wait: HistogramVec,
    lq_evicted: IntCounterVec,
    lq_finished: IntCounterVec,
    placement_domains: HistogramVec,
    placements: IntCounterVec,
    node_replacements: IntCounterVec,
    node_replacement_duration: HistogramVec,
}

/// kuota's metrics.
pub struct Metrics {
    registry: Registry,
    role: RwLock<ReplicaRole>,
    options: MetricsOptions,
    events: Events,
    times: WorkloadTimes,
    gauges: Gauges,
    /// Every labelled family, for dropping a deleted queue's series.
    labelled: Vec<Box<dyn labelled::Labelled>>,
    /// Held while gauges are replaced and while the registry is read, so a scrape never sees a
    /// half-replaced set.
    exposition: Mutex<()>,
}

impl Metrics {
    pub fn new(role: ReplicaRole, options: MetricsOptions, build: BuildInfo) -> Self {
        let registry = Registry::new();
        let f = Families::new(&registry);
        let cq_pc = ["cluster_queue", "priority_class"];
        let lq_pc = ["name", "namespace", "priority_class"];
        let eviction = [
            "cluster_queue",
            "reason",
            "underlying_cause",
            "priority_class",
        ];
        let events = Events {
            admission_attempts: f.counter(
                "kueue_admission_attempts_total",
                "Admission cycles, by whether any workload was admitted (success) or not (inadmissible)",
                &["result"],
            ),
            admission_attempt_duration: f.histogram(
                "kueue_admission_attempt_duration_seconds",
                "Duration of an admission cycle, by result",
                &["result"],
                DEF.to_vec(),
            ),
            quota_reserved: f.counter(
                "kueue_quota_reserved_workloads_total",
                "Workloads that got a quota reservation",
                &cq_pc,
            ),
            quota_reserved_wait: f.histogram(
                "kueue_quota_reserved_wait_time_seconds",
                "Time from queueing (creation or last requeue) to quota reservation",
                &cq_pc,
                B14.to_vec(),
            ),
            admitted: f.counter("kueue_admitted_workloads_total", "Admitted workloads", &cq_pc),
            admission_wait: f.histogram(
                "kueue_admission_wait_time_seconds",
                "Time from queueing (creation or last requeue) to admission",
                &cq_pc,
                b16(),
            ),
            admission_checks_wait: f.histogram(
                "kueue_admission_checks_wait_time_seconds",
                "Time from quota reservation to admission",
                &cq_pc,
                B14.to_vec(),
            ),
            evicted: f.counter("kueue_evicted_workloads_total", "Evictions", &eviction),
            evicted_once: f.counter(
                "kueue_evicted_workloads_once_total",
                "Workloads evicted for a reason and cause for the first time",
                &eviction,
            ),
            preempted: f.counter(
                "kueue_preempted_workloads_total",
                "Preemptions, by the preemptor's ClusterQueue and the reason",
                &["preempting_cluster_queue", "reason"],
            ),
            finished: f.counter("kueue_finished_workloads_total", "Finished workloads", &cq_pc),
            cohort_admitted: f.counter(
                "kueue_cohort_subtree_admitted_workloads_total",
                "Workloads admitted in the Cohort's subtree",
                &["cohort", "priority_class"],
            ),
            lq_quota_reserved: f.counter(
                "kueue_local_queue_quota_reserved_workloads_total",
                "Workloads of the LocalQueue that got a quota reservation",
                &lq_pc,
            ),
            lq_quota_reserved_wait: f.histogram(
                "kueue_local_queue_quota_reserved_wait_time_seconds",
                "Time from queueing to quota reservation, per LocalQueue",
                &lq_pc,
                B14.to_vec(),
            ),
            lq_admitted: f.counter(
                "kueue_local_queue_admitted_workloads_total",
                "Admitted workloads of the LocalQueue",
                &lq_pc,
            ),
            lq_admission_wait: f.histogram(
                "kueue_local_queue_admission_wait_time_seconds",
                "Time from queueing to admission, per LocalQueue",
                &lq_pc,
                B14.to_vec(),
            ),
            lq_admission_checks_wait: f.histogram(
                "kueue_local_queue_admission_checks_wait_time_seconds",
                "Time from quota reservation to admission, per LocalQueue",
                &lq_pc,
                B14.to_vec(),
            ),
            lq_evicted: f.counter(
                "kueue_local_queue_evicted_workloads_total",
                "Evictions of the LocalQueue's workloads",
                &["name", "namespace", "reason", "underlying_cause", "priority_class"],
            ),
            lq_finished: f.counter(
                "kueue_local_queue_finished_workloads_total",
                "Finished workloads of the LocalQueue",
                &lq_pc,
            ),
            placement_domains: f.histogram(
                "kuota_tas_placement_domains",
                "Domains a topology-aware pod set's placement uses at the topology's lowest level",
                &["cluster_queue"],
                DOMAIN_BUCKETS.to_vec(),
            ),
            placements: f.counter(
                "kuota_tas_placements_total",
                "Topology-aware pod set placements, by the lowest topology level all their pods \
                 share (empty when they span top-level domains)",
                &["cluster_queue", "lowest_common_level"],
            ),
            node_replacements: f.counter(
                "kuota_tas_node_replacements_total",
                "Admitted topology-aware workloads whose failed nodes were handled, by result: \
                 replaced (a new topologyAssignment was written) or evicted (NodeFailures)",
                &["cluster_queue", "result"],
            ),
            node_replacement_duration: f.histogram(
                "kuota_tas_node_replacement_duration_seconds",
                "Time from a node's failure (the end of its NotReady delay, its deletion or its \
                 taint) to the workload's new topologyAssignment being written",
                &["cluster_queue"],
                REPLACEMENT_BUCKETS.to_vec(),
            ),
        };
        let times = WorkloadTimes::register(&f);
        let gauges = Gauges::register(&f);
        let info = IntGaugeVec::new(
            Opts::new("kueue_build_info", "kuota's build: version and platform"),
            &[
                "git_version",
                "git_commit",
                "build_date",
                "go_version",
                "compiler",
                "platform",
            ],
        )
        .expect("valid metric");
        info.with_label_values(&[
            build.git_version.as_str(),
            &build.git_commit,
            &build.build_date,
            "",
            "rustc",
            &build.platform,
        ])
        .set(1);
        f.register(info);
        let labelled = f.into_labelled();
        Metrics {
            registry,
            role: RwLock::new(role),
            options,
            events,
            times,
            gauges,
            labelled,
            exposition: Mutex::new(()),
        }
    }

    fn role(&self) -> &'static str {
        self.role
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .label()
    }

    /// A new role: gauges under the old one are dropped (the next [`Metrics::set_queues`]
    /// reports them under the new one), as Kueue does on election.
    pub fn set_role(&self, role: ReplicaRole) {
        let _exposition = self
            .exposition
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut current = self.role.write().unwrap_or_else(PoisonError::into_inner);
        if *current != role {
            *current = role;
            self.gauges.reset();
        }
    }

    pub fn admission_attempt(&self, admitted_any: bool, seconds: f64) {
        let result = if admitted_any {
            "success"
        } else {
            "inadmissible"
        };
        let labels = [self.role(), result];
        self.events
            .admission_attempts
            .with_label_values(&labels)
            .inc();
        self.events
            .admission_attempt_duration
            .with_label_values(&labels)
            .observe(seconds);
    }

    pub fn quota_reserved(&self, w: &WorkloadLabels<'_>, wait_seconds: f64) {
        let role = self.role();
        let cq = [role, w.cluster_queue, w.priority_class];
        self.events.quota_reserved.with_label_values(&cq).inc();
        self.events
            .quota_reserved_wait
            .with_label_values(&cq)
            .observe(wait_seconds);
        if self.options.reports_local_queue(w.local_queue_labels) {
            let lq = [
                role,
                w.local_queue,
                w.local_queue_namespace,
                w.priority_class,
            ];
            self.events.lq_quota_reserved.with_label_values(&lq).inc();
            self.events
                .lq_quota_reserved_wait
                .with_label_values(&lq)
                .observe(wait_seconds);
        }
    }

    /// An admission, `wait_seconds` after the workload was queued and `checks_wait_seconds` after
    /// its quota was reserved (0 without admission checks).
    pub fn admitted(
        &self,
        w: &WorkloadLabels<'_>,
        wait_seconds: f64,
        checks_wait_seconds: f64,
        cohort_ancestors: &[&str],
    ) {
        let role = self.role();
        let cq = [role, w.cluster_queue, w.priority_class];
        self.events.admitted.with_label_values(&cq).inc();
        self.events
            .admission_wait
            .with_label_values(&cq)
            .observe(wait_seconds);
        self.events
            .admission_checks_wait
            .with_label_values(&cq)
            .observe(checks_wait_seconds);
        for cohort in cohort_ancestors {
            self.events
                .cohort_admitted
                .with_label_values(&[role, cohort, w.priority_class])
                .inc();
        }
        if self.options.reports_local_queue(w.local_queue_labels) {
            let lq = [
                role,
                w.local_queue,
                w.local_queue_namespace,
                w.priority_class,
            ];
            self.events.lq_admitted.with_label_values(&lq).inc();
            self.events
                .lq_admission_wait
                .with_label_values(&lq)
                .observe(wait_seconds);
            self.events
                .lq_admission_checks_wait
                .with_label_values(&lq)
                .observe(checks_wait_seconds);
        }
    }

    pub fn evicted(
        &self,
        w: &WorkloadLabels<'_>,
        reason: &str,
        underlying_cause: &str,
        first_time: bool,
    ) {
        let role = self.role();
        let labels = [
            role,
            w.cluster_queue,
            reason,
            underlying_cause,
            w.priority_class,
        ];
        self.events.evicted.with_label_values(&labels).inc();
        if first_time {
            self.events.evicted_once.with_label_values(&labels).inc();
        }
        if self.options.reports_local_queue(w.local_queue_labels) {
            self.events
                .lq_evicted
                .with_label_values(&[
                    role,
                    w.local_queue,
                    w.local_queue_namespace,
                    reason,
                    underlying_cause,
                    w.priority_class,
                ])
                .inc();
        }
    }

    pub fn preempted(&self, preempting_cluster_queue: &str, reason: &str) {
        self.events
            .preempted
            .with_label_values(&[self.role(), preempting_cluster_queue, reason])
            .inc();
    }

    pub fn finished(&self, w: &WorkloadLabels<'_>) {
        let role = self.role();
        self.events
            .finished
            .with_label_values(&[role, w.cluster_queue, w.priority_class])
            .inc();
        if self.options.reports_local_queue(w.local_queue_labels) {
            self.events
                .lq_finished
                .with_label_values(&[
                    role,
                    w.local_queue,
                    w.local_queue_namespace,
                    w.priority_class,
                ])
                .inc();
        }
    }

    /// The LocalQueue labels of `w`'s series, when its LocalQueue is reported.
    fn local_queue_of<'a>(&self, w: &WorkloadLabels<'a>) -> Option<[&'a str; 2]> {
        self.options
            .reports_local_queue(w.local_queue_labels)
            .then_some([w.local_queue, w.local_queue_namespace])
    }

    /// A finished workload ran `seconds` in all, as Kueue's `TotalExecutionTime` counts it.
    pub fn execution_time(&self, w: &WorkloadLabels<'_>, seconds: f64) {
        self.times.execution(
            self.role(),
            w.cluster_queue,
            self.local_queue_of(w),
            w.priority_class,
            seconds,
        );
    }

    /// A workload's pods all became ready for the first time since its admission.
    pub fn pods_ready(&self, w: &WorkloadLabels<'_>, times: ReadyTimes) {
        self.times.ready(
            self.role(),
            w.cluster_queue,
            self.local_queue_of(w),
            w.priority_class,
            times,
        );
    }

    /// A workload evicted `seconds` after its pods were ready.
    pub fn pods_ready_to_evicted(
        &self,
        cluster_queue: &str,
        reason: &str,
        underlying_cause: &str,
        seconds: f64,
    ) {
        self.times.pods_ready_to_evicted(
            self.role(),
            cluster_queue,
            reason,
            underlying_cause,
            seconds,
        );
    }

    /// An evicted workload's quota released `seconds` after its eviction.
    pub fn quota_released_after_eviction(&self, cluster_queue: &str, reason: &str, seconds: f64) {
        self.times
            .eviction_latency(self.role(), cluster_queue, reason, seconds);
    }

    /// A topology-aware pod set placed: how many lowest-level domains it uses, and the short
    /// name of the lowest level all its pods share (`None`: they span top-level domains).
    pub fn placement_quality(
        &self,
        cluster_queue: &str,
        domains: usize,
        common_level: Option<&str>,
    ) {
        let role = self.role();
        self.events
            .placement_domains
            .with_label_values(&[role, cluster_queue])
            .observe(domains as f64);
        self.events
            .placements
            .with_label_values(&[role, cluster_queue, common_level.unwrap_or("")])
            .inc();
    }

    /// A workload's failed nodes replaced `seconds` after the earliest of them failed.
    pub fn node_replaced(&self, cluster_queue: &str, seconds: f64) {
        let role = self.role();
        self.events
            .node_replacements
            .with_label_values(&[role, cluster_queue, "replaced"])
            .inc();
        self.events
            .node_replacement_duration
            .with_label_values(&[role, cluster_queue])
            .observe(seconds);
    }

    /// A workload evicted because its failed nodes had no replacement.
    pub fn node_replacement_failed(&self, cluster_queue: &str) {
        self.events
            .node_replacements
            .with_label_values(&[self.role(), cluster_queue, "evicted"])
            .inc();
    }

    /// Replaces every queue gauge: the series of queues no longer listed are gone.
    pub fn set_queues(&self, queues: &QueueGauges) {
        let _exposition = self
            .exposition
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.gauges.set(self.role(), &self.options, queues);
    }

    /// Everything, in Prometheus' text format 0.0.4.
    pub fn encode(&self) -> String {
        let families = {
            let _exposition = self
                .exposition
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            self.registry.gather()
        };
        let mut out = Vec::new();
        if let Err(error) = TextEncoder::new().encode(&families, &mut out) {
            tracing::error!(%error, "metrics not encoded");
        }
        String::from_utf8(out).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;
