//! The admission loop: the one task that owns [`ClusterState`]. It takes watch changes in
//! bursts, runs engine cycles once every cache holds its first full list, and hands each
//! decision to the writer as soon as it is made. What is decided and not yet settled in the API
//! is kept by the [`ledger::Ledger`], which orders the writes so that the admissions the API
//! shows never exceed what quota allows.
//!
//! It runs in the [`super::work_queue::WorkQueue`] as a task whose one key is the pass (see
//! `task.rs`), through these calls: [`AdmissionLoop::take_change`] a watch change,
//! [`AdmissionLoop::take_answer`] a write's answer, [`AdmissionLoop::node_failures`] a node-health
//! report, [`AdmissionLoop::tick`] what is due by time alone, [`AdmissionLoop::turn`] one pass at
//! a clock reading, and [`AdmissionLoop::next_wake`] when a turn is due without new input. Who
//! changes what: the engine state in this file (decisions) and `reads.rs` (Workloads read); the
//! ledger in `writes.rs` (what is sent) and `answers.rs` (what comes back).

mod answers;
mod check_outcomes;
mod deactivation;
mod delayed_placements;
mod execution_time;
mod finalizers;
mod hot_swap;
mod inputs;
mod ledger;
pub mod pending_queries;
pub mod plan;
mod pods_ready;
mod pods_ready_timeout;
mod queues;
mod read;
mod reads;
mod replacement;
mod reports;
mod requests;
pub mod task;
mod waiting_reasons;
mod watched;
mod writes;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use self::ledger::{Ledger, Reads};
use self::reports::{REPORT_PERIOD, Reports};
pub use self::requests::{WriteRequest, Written, write_all};
use self::waiting_reasons::WaitingReasons;
use self::watched::Watched;
use super::events::EventSink;
use super::metrics_feed::MetricsFeed;
use super::watches::read_workloads::ReadWorkloads;
use super::watches::{Input, Kind};
use crate::api::{HasConditions, Workload};
use crate::clock::{Clock, Reading};
use crate::config::WaitForPodsReady;
use crate::engine::features::Feature;
use crate::engine::topology::PlacementQuality;
use crate::engine::topology::node_health::HotSwap;
use crate::engine::{EvictionReason, WorkloadKey, WorkloadState};
use crate::state::{ClusterState, Fallback};

/// Cycles one pass may run before it writes what it has (a safety bound; a pass normally ends
/// when a cycle changes nothing).
const MAX_CYCLES_PER_PASS: usize = 100;

/// Readiness: set once every watch delivered its first full list.
#[derive(Clone, Debug, Default)]
pub struct Ready(Arc<AtomicBool>);

impl Ready {
    pub fn get(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// A readiness already set, as after every first list.
    #[cfg(test)]
    pub(crate) fn synced() -> Self {
        Ready(Arc::new(AtomicBool::new(true)))
    }
}

/// Whether a pass may decide: every cache holds its first full list and this replica leads. The
/// work queue gates the pass the same way; the loop keeps its own view to act on an election
/// (every Workload and queue looked at again, the role metric switched) and to have nothing due
/// by time while it follows.
struct Gate {
    synced: BTreeSet<Kind>,
    ready: Ready,
    /// Whether this replica leads: a follower keeps its caches current and decides nothing.
    leading: watch::Receiver<bool>,
    /// Whether this replica led at the last pass.
    led: bool,
}

/// Workloads read from a cluster always have a UID and a creation time.
fn fallback() -> Fallback {
    Fallback {
        creation: 0,
        uid: String::new(),
    }
}

fn is_finished(workload: &Workload) -> bool {
    workload.condition_is_true(crate::api::keys::condition_types::FINISHED)
}

/// What one pass's engine cycles decided.
#[derive(Default)]
struct Decided {
    /// Workloads admitted, preempted, evicted or evaluated: their status may need a write.
    touched: BTreeSet<WorkloadKey>,
    /// How compact each TAS admission's placement is.
    placements: BTreeMap<WorkloadKey, Vec<(String, PlacementQuality)>>,
}

/// The loop's state.
pub struct AdmissionLoop {
    /// The engine and the caches it decides on.
    state: ClusterState,
    /// Every Workload as last read from the API.
    workloads: ReadWorkloads,
    /// What is decided and not settled in the API, and what may need a write.
    ledger: Ledger,
    /// What is followed about Workloads as they are read: pods ready, deactivation, execution
    /// time, failed nodes.
    watched: Watched,
    /// Workloads waiting out Kueue's requeue backoff, kept out of the engine until then.
    backoff: BTreeMap<WorkloadKey, Time>,
    /// Queue objects as read, their status writes and finalizer removals, paced.
    reports: Reports,
    /// The budget of waiting-reason writes.
    waiting_reasons: WaitingReasons,
    gate: Gate,
    events: EventSink,
    metrics: MetricsFeed,
    requests: mpsc::UnboundedSender<WriteRequest>,
    clock: Clock,
}

impl AdmissionLoop {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        state: ClusterState,
        events: EventSink,
        metrics: MetricsFeed,
        requests: mpsc::UnboundedSender<WriteRequest>,
        ready: Ready,
        wait_for_pods_ready: Option<WaitForPodsReady>,
        leading: watch::Receiver<bool>,
        clock: Clock,
    ) -> Self {
        AdmissionLoop {
            state,
            workloads: ReadWorkloads::default(),
            ledger: Ledger::default(),
            watched: Watched::new(wait_for_pods_ready),
            backoff: BTreeMap::new(),
            reports: Reports::new(),
            waiting_reasons: WaitingReasons::default(),
            gate: Gate {
                synced: BTreeSet::new(),
                ready,
                leading,
                led: false,
            },
            events,
            metrics,
            requests,
            clock,
        }
    }

    /// Takes one watch change into the caches.
    pub fn take_change(&mut self, input: Input) {
        let kind = input.kind();
        if input.is_reset() && self.gate.synced.insert(kind) {
            tracing::info!(%kind, "first full list read");
            if self.gate.synced.len() == Kind::ALL.len() {
                tracing::info!("every cache is synced; admission starts");
                self.gate.ready.0.store(true, Ordering::Relaxed);
            }
        }
        self.reports.due = true;
        match input {
            Input::Workload(change) => self.workload_change(change, &self.clock.read()),
            other => {
                let deleted = inputs::deleted_queues(&self.reports.objects, &other);
                inputs::apply(&mut self.state, &mut self.reports.objects, other);
                self.queues_deleted(&deleted);
            }
        }
    }

    /// Takes one write's answer.
    pub fn take_answer(&mut self, written: Written) {
        match written {
            Written::Workload {
                key,
                before,
                planned,
                result,
            } => self.workload_written(key, before, *planned, result, &self.clock.read()),
            Written::Deactivated {
                key,
                fenced_on,
                result,
            } => self.deactivation_written(key, fenced_on, result, &self.clock.read()),
            Written::Finalizers { object, result } => self.finalizers_written(object, result),
            Written::Queue {
                key,
                fenced_on,
                result,
            } => self.queue_written(key, fenced_on, result),
        }
    }

    /// What is due by time alone at `now`: retries, backoffs that ran out, waiting reasons the
    /// next period has room for.
    pub fn tick(&mut self, now: Reading) {
        if self.gate.led {
            self.due_retries(&now);
            self.due_waiting_reasons(now.instant);
        }
    }

    /// When a turn is due without new input: the next retry, or the next report period while
    /// something waits for one.
    pub fn next_wake(&self) -> Option<Instant> {
        if !self.gate.led {
            return None;
        }
        let periodic = (self.reports.due || !self.backoff.is_empty() || self.waiting_reasons.any())
            .then(|| {
                // Never reported yet: due now.
                self.reports
                    .next_at(REPORT_PERIOD)
                    .unwrap_or_else(|| self.clock.instant())
            });
        [self.ledger.next_retry(), periodic]
            .into_iter()
            .flatten()
            .min()
    }

    /// One pass at `now`: decides on everything taken in so far and asks for the writes; nothing
    /// before every cache holds its first full list, nor while another replica leads.
    pub fn turn(&mut self, now: Reading) {
        // 1. Decide only with every cache listed and while leading; just elected, look at every
        //    workload and queue again (while following, only the caches were kept current).
        if !self.synced() || !self.leads() {
            return;
        }
        let time = now.time();
        // 2. Workloads marked for deactivation get `spec.active: false`.
        self.deactivations();
        // 3. Kueue's timers: pods not ready in time are evicted, execution time that ran out
        //    marks the Workload for deactivation; admission checks that said Retry evict, those
        //    that said Rejected deactivate.
        self.pods_ready_timeouts(&time);
        self.check_outcomes(&time);
        self.execution_times_run_out(&time);
        // 4. Failed nodes are replaced before the cycles, so a replacement takes its capacity
        //    ahead of new admissions.
        self.replace_failed_nodes(&time);
        // 5. Reservations whose delayed topology requests may now be placed take their nodes
        //    first, then the engine's cycles, unless `blockAdmission` waits for pods to be ready.
        let placed = self.place_delayed();
        let mut decided = if self.watched.unready.blocks() {
            tracing::debug!("admission waits until every admitted workload's pods are ready");
            Decided::default()
        } else {
            self.decide(&now)
        };
        decided.touched.extend(placed);
        // 6. Every decision is planned and handed to the writer in the order the ledger allows.
        self.flush(decided, &now);
        // 7. Queue status, gauges and finalizers, at most every report period.
        if self.reports.take_due(now.instant) {
            let report = self.state.engine().queue_report();
            self.metrics.queues(
                &report,
                self.state.engine(),
                &self.reports.objects.local_queues,
            );
            self.write_report(&report, &now);
        }
    }

    /// Whether every cache holds its first full list.
    fn synced(&self) -> bool {
        self.gate.synced.len() == Kind::ALL.len()
    }

    /// Whether this replica leads now. A replica that has just been elected looks at every
    /// workload and queue again: while it followed, it only kept its caches current.
    fn leads(&mut self) -> bool {
        let leading = *self.gate.leading.borrow();
        if leading && !self.gate.led {
            tracing::info!("leading: every workload and queue is looked at again");
            self.metrics.elected();
            self.look_at_every_workload();
            self.reports.due = true;
        }
        self.gate.led = leading;
        leading
    }

    /// Runs cycles until one changes nothing; returns every workload they touched.
    fn decide(&mut self, now: &Reading) -> Decided {
        let mut decided = Decided::default();
        let mut admitted_any = false;
        // Reservations are made at this time, in whole seconds as the API keeps it: their
        // `QuotaReserved` conditions show exactly the time the engine orders preemption
        // candidates by.
        self.state
            .engine()
            .set_now(now.wall.as_second().saturating_mul(1000));
        self.state.engine().requeue_evicted();
        for _ in 0..MAX_CYCLES_PER_PASS {
            let out = self.state.engine().cycle();
            let touched = out
                .admitted
                .iter()
                .map(|a| &a.workload)
                .chain(out.preempted.iter().map(|p| &p.victim))
                .chain(out.evicted.iter().map(|e| &e.workload))
                .chain(out.pending.iter().map(|p| &p.workload));
            decided.touched.extend(touched.cloned());
            for preemption in &out.preempted {
                self.metrics.preemption_issued(
                    preemption,
                    self.workloads.read(&preemption.preemptor),
                    self.state.engine().structure(),
                );
            }
            let changed = out.changed_anything();
            for admitted in out.admitted {
                if !admitted.placement_quality.is_empty() {
                    decided
                        .placements
                        .insert(admitted.workload, admitted.placement_quality);
                }
                admitted_any = true;
            }
            if !changed {
                break;
            }
        }
        // The engine's event log is not needed: each decision is read from its state.
        self.state.engine().take_events();
        if !decided.touched.is_empty() {
            self.reports.due = true;
            let seconds = self.clock.instant().saturating_duration_since(now.instant);
            self.metrics
                .admission_attempt(admitted_any, seconds.as_secs_f64());
        }
        decided
    }

    /// The engine's decision about `key`.
    fn decided_state(&mut self, key: &WorkloadKey) -> Option<WorkloadState> {
        self.state.engine().state(key)
    }

    /// Replaces `failed` nodes of `key`'s assignment in the engine; also whether
    /// `TASFailedNodeReplacementFailFast` is on.
    fn replace_nodes(
        &mut self,
        key: &WorkloadKey,
        failed: &BTreeSet<String>,
    ) -> (Option<HotSwap>, bool) {
        let gates = self.state.engine().features().clone();
        let swap = self.state.replace_nodes_of(key, failed, &gates);
        (
            swap,
            gates.enabled(Feature::TASFailedNodeReplacementFailFast),
        )
    }

    /// Evicts `key` in the engine for `reason`; its state after, if it was admitted.
    fn evict(
        &mut self,
        key: &WorkloadKey,
        reason: EvictionReason,
        message: String,
    ) -> Option<WorkloadState> {
        let engine = self.state.engine();
        if !engine.evict_workload(key, reason, message) {
            return None;
        }
        engine.state(key)
    }
}

#[cfg(test)]
mod tests;
