//! The admission loop: the one task that owns [`ClusterState`]. It takes watch changes in
//! bursts, runs engine cycles once every cache holds its first full list, and hands each
//! decision to the writer as soon as it is made. A decision is held in memory (an
//! [`assumed::Assumption`]) until its write lands; a write that fails undoes it, so the workload
//! waits again and its quota is free. Admissions are written only while no released quota is
//! still unwritten, so the admissions the API shows never exceed what quota allows.

mod assumed;
mod deactivation;
mod execution_time;
mod finalizers;
mod hot_swap;
mod inputs;
mod ordering;
pub mod plan;
mod pods_ready;
mod pods_ready_timeout;
mod queues;
mod read;
mod requests;
mod results;
mod send;
mod unconfirmed;
mod waiting_reasons;
mod waiting_writes;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use self::assumed::{Assumption, is_older, overlay};
use self::plan::{Effect, Planned, plan};
pub use self::requests::{WriteRequest, Written, write_all};
use self::waiting_reasons::{WaitingReasons, only_waiting_reason};
use super::events::EventSink;
use super::metrics_feed::MetricsFeed;
use super::node_health::NodeFailures;
use super::queue_status::{Pacer, QueueObjects, QueueWrite};
use super::watches::read_workloads::ReadWorkloads;
use super::watches::{Change, Input, Kind, SharedWorkload};
use crate::api::Workload;
use crate::config::WaitForPodsReady;
use crate::engine::topology::PlacementQuality;
use crate::engine::{WorkloadKey, WorkloadState, WorkloadStatus as EngineStatus};
use crate::state::{ClusterState, Fallback};
use crate::status::requeue::waiting_until;

/// Cycles one pass may run before it writes what it has (a safety bound; a pass normally ends
/// when a cycle changes nothing).
const MAX_CYCLES_PER_PASS: usize = 100;
/// How often queue status and gauges are refreshed at most.
const REPORT_PERIOD: Duration = Duration::from_millis(500);
/// The shortest time between two status writes of one queue.
const QUEUE_STATUS_PERIOD: Duration = Duration::from_secs(1);
/// Queue status writes a second, across all queues: with many queues changing at once (a
/// status write each per period would be one request per queue and second), each is written
/// less often rather than taking API server capacity from admissions.
const QUEUE_STATUS_WRITES_PER_SECOND: u32 = 10;
/// Queue status writes that may go out at once after a quiet spell: one second's budget, so
/// that up to that many queues changing together (an admission changes its ClusterQueue,
/// LocalQueue and cohorts) are written at the next report as without a budget, reports being
/// [`REPORT_PERIOD`] apart; the long-run rate stays [`QUEUE_STATUS_WRITES_PER_SECOND`].
const QUEUE_STATUS_BURST: u32 = 10;
/// Wait before a write that failed for a transient reason is tried again.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// Readiness: set once every watch delivered its first full list.
#[derive(Clone, Debug, Default)]
pub struct Ready(Arc<AtomicBool>);

impl Ready {
    pub fn get(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Workloads read from a cluster always have a UID and a creation time.
fn fallback() -> Fallback {
    Fallback {
        creation: 0,
        uid: String::new(),
    }
}

fn is_finished(workload: &Workload) -> bool {
    workload.status.as_ref().is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == crate::api::keys::condition_types::FINISHED && c.status == "True")
    })
}

fn key_of(workload: &Workload) -> String {
    format!(
        "{}/{}",
        workload.namespace().unwrap_or_default(),
        workload.name_any()
    )
}

fn workload_key(key: &str) -> WorkloadKey {
    let (namespace, name) = key.split_once('/').unwrap_or(("", key));
    WorkloadKey::new(namespace, name)
}

/// The loop's state.
pub struct AdmissionLoop {
    state: ClusterState,
    /// Every Workload as last read from the API.
    workloads: ReadWorkloads,
    queues: QueueObjects,
    synced: BTreeSet<Kind>,
    ready: Ready,
    /// Workloads whose status may need a write.
    dirty: BTreeSet<String>,
    /// Decisions that claim or release quota and are not written yet.
    assumed: BTreeMap<String, Assumption>,
    /// Claims waiting until no release is outstanding (or undone if one fails).
    held: BTreeSet<String>,
    /// A release failed while claims were held: they were decided on quota that is not free.
    release_failed: bool,
    /// Writes sent and not answered, each with the decision it carries (none for a write that
    /// claims or releases nothing).
    in_flight: BTreeMap<String, Option<Assumption>>,
    /// Workloads whose last write conflicted at this resource version: nothing is written for
    /// them until a newer version is read.
    stale: BTreeMap<String, Option<String>>,
    /// Workloads whose last write failed for a transient reason, and when to try again.
    retries: BTreeMap<String, Instant>,
    /// Admissions whose write failed but may have been stored.
    unconfirmed: BTreeMap<String, unconfirmed::Unconfirmed>,
    /// Admitted Workloads whose pods are not ready: their PodsReady timer runs, and with
    /// `waitForPodsReady.blockAdmission` they hold admission.
    unready: pods_ready::Unready,
    /// `waitForPodsReady`; `None` holds nobody to becoming ready.
    wait_for_pods_ready: Option<WaitForPodsReady>,
    /// Workloads marked `DeactivationTarget` and still active: `spec.active: false` is due.
    deactivating: BTreeSet<String>,
    /// Admitted Workloads with a maximum execution time, and when it runs out.
    execution_deadlines: BTreeMap<String, k8s_openapi::jiff::Timestamp>,
    /// How compact each unwritten TAS admission's placement is, for its event and metric.
    placements: BTreeMap<String, Vec<(String, PlacementQuality)>>,
    /// Workloads waiting out Kueue's requeue backoff, kept out of the engine until then.
    backoff: BTreeMap<String, Time>,
    /// Admitted Workloads whose nodes failed, as the node-health loop last reported them.
    failed_nodes: BTreeMap<String, Vec<crate::engine::topology::node_failure::FailedNode>>,
    /// Workloads whose failed nodes recovered: their `unhealthyNodes` may need clearing.
    recovered: BTreeSet<String>,
    /// Replacements decided and not written yet.
    replacing: BTreeMap<String, hot_swap::Replacing>,
    /// Finalizer removals asked for, by `Kind/name`, with the version they were asked at.
    finalizing: BTreeMap<String, Option<String>>,
    /// Queue status writes in flight, with the object as it was before.
    queue_writes_in_flight: BTreeMap<String, QueueWrite>,
    queue_pacer: Pacer,
    waiting_reasons: WaitingReasons,
    report_due: bool,
    last_report: Option<Instant>,
    events: EventSink,
    metrics: MetricsFeed,
    requests: mpsc::UnboundedSender<WriteRequest>,
    /// Whether this replica leads: a follower keeps its caches current and decides nothing.
    leading: watch::Receiver<bool>,
    /// Whether this replica led at the last pass.
    led: bool,
}

impl AdmissionLoop {
    pub fn new(
        state: ClusterState,
        events: EventSink,
        metrics: MetricsFeed,
        requests: mpsc::UnboundedSender<WriteRequest>,
        ready: Ready,
        wait_for_pods_ready: Option<WaitForPodsReady>,
        leading: watch::Receiver<bool>,
    ) -> Self {
        let block_admission = wait_for_pods_ready
            .as_ref()
            .is_some_and(|w| w.block_admission);
        AdmissionLoop {
            led: false,
            leading,
            state,
            workloads: ReadWorkloads::default(),
            queues: QueueObjects::default(),
            synced: BTreeSet::new(),
            ready,
            dirty: BTreeSet::new(),
            assumed: BTreeMap::new(),
            held: BTreeSet::new(),
            release_failed: false,
            in_flight: BTreeMap::new(),
            stale: BTreeMap::new(),
            retries: BTreeMap::new(),
            unconfirmed: BTreeMap::new(),
            backoff: BTreeMap::new(),
            placements: BTreeMap::new(),
            unready: pods_ready::Unready::new(block_admission),
            wait_for_pods_ready,
            deactivating: BTreeSet::new(),
            execution_deadlines: BTreeMap::new(),
            queue_writes_in_flight: BTreeMap::new(),
            queue_pacer: Pacer::new(
                QUEUE_STATUS_PERIOD,
                QUEUE_STATUS_WRITES_PER_SECOND,
                QUEUE_STATUS_BURST,
            ),
            waiting_reasons: WaitingReasons::default(),
            finalizing: BTreeMap::new(),
            failed_nodes: BTreeMap::new(),
            recovered: BTreeSet::new(),
            replacing: BTreeMap::new(),
            report_due: true,
            last_report: None,
            events,
            metrics,
            requests,
        }
    }

    /// Runs until the watches stop. `failures` brings what the node-health loop finds.
    pub async fn run(
        mut self,
        mut inputs: mpsc::Receiver<Input>,
        mut done: mpsc::Receiver<Written>,
        mut failures: mpsc::Receiver<NodeFailures>,
    ) {
        let mut tick = tokio::time::interval(REPORT_PERIOD);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut elected = self.leading.clone();
        let mut election_open = true;
        loop {
            tokio::select! {
                input = inputs.recv() => match input {
                    Some(input) => self.take(input),
                    None => return,
                },
                Some(written) = done.recv() => self.written(written),
                Some(report) = failures.recv() => self.node_failures(report),
                _ = tick.tick() => if self.led {
                    self.due_retries();
                    self.due_waiting_reasons();
                },
                changed = elected.changed(), if election_open => {
                    election_open = changed.is_ok();
                }
            }
            // Coalesce a burst: everything already delivered goes into one pass.
            while let Ok(input) = inputs.try_recv() {
                self.take(input);
            }
            while let Ok(written) = done.try_recv() {
                self.written(written);
            }
            while let Ok(report) = failures.try_recv() {
                self.node_failures(report);
            }
            self.pass();
        }
    }

    /// Decides on everything taken in so far and asks for the writes; nothing before every
    /// cache holds its first full list.
    fn pass(&mut self) {
        if self.synced.len() < Kind::ALL.len() || !self.leads() {
            return;
        }
        self.deactivations();
        let now = Time(k8s_openapi::jiff::Timestamp::now());
        self.pods_ready_timeouts(&now);
        self.execution_times_run_out(&now);
        // Before the cycles: a replacement takes its capacity ahead of new admissions.
        self.replace_failed_nodes(&now);
        if self.unready.blocks() {
            tracing::debug!("admission waits until every admitted workload's pods are ready");
        } else {
            self.decide();
        }
        self.flush();
        self.report();
    }

    /// Whether this replica leads now. A replica that has just been elected looks at every
    /// workload and queue again: while it followed, it only kept its caches current.
    fn leads(&mut self) -> bool {
        let leading = *self.leading.borrow();
        if leading && !self.led {
            tracing::info!("leading: every workload and queue is looked at again");
            self.metrics.elected();
            self.dirty.extend(self.workloads.keys());
            self.report_due = true;
        }
        self.led = leading;
        leading
    }

    fn take(&mut self, input: Input) {
        let kind = input.kind();
        if input.is_reset() && self.synced.insert(kind) {
            tracing::info!(%kind, "first full list read");
            if self.synced.len() == Kind::ALL.len() {
                tracing::info!("every cache is synced; admission starts");
                self.ready.0.store(true, Ordering::Relaxed);
            }
        }
        match input {
            Input::Workload(change) => self.workload_change(change),
            other => {
                inputs::apply(&mut self.state, &mut self.queues, other);
                self.report_due = true;
            }
        }
    }

    fn workload_change(&mut self, change: Change<SharedWorkload>) {
        self.report_due = true;
        match change {
            Change::Apply(workload) => self.seen(*workload),
            Change::Delete(workload) => self.gone(&key_of(&workload)),
            Change::Reset(list) => {
                let listed: BTreeSet<String> = list.iter().map(|w| key_of(w)).collect();
                let missing: BTreeSet<String> = self
                    .workloads
                    .keys()
                    .filter(|k| !listed.contains(k))
                    .collect();
                for key in missing {
                    self.gone(&key);
                }
                for workload in list {
                    self.seen(workload);
                }
            }
        }
    }

    /// A Workload read from the API (a watch event or a write's answer).
    fn seen(&mut self, workload: SharedWorkload) {
        let key = key_of(&workload);
        if let Some(known) = self.workloads.get(&key)
            && is_older(
                workload.metadata.resource_version.as_deref(),
                known.metadata.resource_version.as_deref(),
            )
        {
            return;
        }
        self.track_deactivation(&key, &workload);
        self.track_execution_time(&key, &workload);
        self.confirm(&key, &workload);
        if let Some(previous) = self.workloads.get(&key) {
            self.metrics.watched(
                previous,
                &workload,
                &Time(k8s_openapi::jiff::Timestamp::now()),
                self.state.engine().structure(),
                &self.queues.local_queues,
            );
        }
        if self
            .stale
            .get(&key)
            .is_some_and(|rv| *rv != workload.metadata.resource_version)
        {
            self.stale.remove(&key);
        }
        // An eviction being written that starts a backoff keeps the Workload out already.
        let assumed_backoff = self
            .assumed
            .get(&key)
            .filter(|a| a.status.requeue_state.is_some())
            .map(|a| {
                let mut view = (*workload).clone();
                view.status = Some(a.status.clone());
                view
            });
        if let Some(until) = waiting_until(assumed_backoff.as_ref().unwrap_or(&*workload)).cloned()
        {
            let wk = workload_key(&key);
            self.state.delete_workload(&wk.namespace, &wk.name);
            self.workloads.insert(workload);
            self.backoff.insert(key, until);
            return;
        }
        self.backoff.remove(&key);
        self.unready.seen(&key, &workload);
        let seen = self.may_show(&key, workload.clone());
        match self.assumed.get(&key) {
            Some(assumption) => self
                .state
                .apply_workload(&overlay(&seen, assumption), fallback()),
            None => self.state.apply_workload(&seen, fallback()),
        }
        self.workloads.insert(workload);
        self.dirty.insert(key);
    }

    /// A Workload deleted: its quota is free for real, whatever was decided about it.
    fn gone(&mut self, key: &str) {
        if self.workloads.remove(key).is_none() {
            return;
        }
        self.assumed.remove(key);
        self.held.remove(key);
        self.stale.remove(key);
        self.unconfirmed.remove(key);
        self.backoff.remove(key);
        self.placements.remove(key);
        self.failed_nodes.remove(key);
        self.recovered.remove(key);
        self.replacing.remove(key);
        self.unready.gone(key);
        self.deactivating.remove(key);
        self.execution_deadlines.remove(key);
        self.dirty.remove(key);
        self.waiting_reasons.forget(key);
        let wk = workload_key(key);
        self.state.delete_workload(&wk.namespace, &wk.name);
        self.resolve_held();
    }

    /// Runs cycles until one changes nothing and marks every workload they touched.
    fn decide(&mut self) {
        let started = Instant::now();
        let mut evaluated = false;
        let mut admitted_any = false;
        // Reservations are made at this time, in whole seconds as the API keeps it: their
        // `QuotaReserved` conditions show exactly the time the engine orders preemption
        // candidates by.
        let now = k8s_openapi::jiff::Timestamp::now().as_second();
        self.state.engine().set_now(now.saturating_mul(1000));
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
            for key in touched {
                self.dirty.insert(key.to_string());
                evaluated = true;
            }
            for preemption in &out.preempted {
                self.metrics.preemption_issued(
                    preemption,
                    self.workloads.get(&preemption.preemptor.to_string()),
                    self.state.engine().structure(),
                );
            }
            let changed = out.changed_anything();
            for admitted in out.admitted {
                if !admitted.placement_quality.is_empty() {
                    self.placements
                        .insert(admitted.workload.to_string(), admitted.placement_quality);
                }
                admitted_any = true;
            }
            if !changed {
                break;
            }
        }
        // The engine's event log is not needed: each decision is read from its state.
        self.state.engine().take_events();
        if evaluated {
            self.report_due = true;
            self.metrics
                .admission_attempt(admitted_any, started.elapsed().as_secs_f64());
        }
    }

    /// Plans and starts the writes of every dirty workload.
    fn flush(&mut self) {
        // Claims held behind writes that have settled since (a newer version read) go now.
        if !self.held.is_empty() {
            self.resolve_held();
        }
        let now = Time(k8s_openapi::jiff::Timestamp::now());
        let mut claims = Vec::new();
        // Claims decided for workloads that cannot be written yet (a write in flight, a retry
        // not due): they wait like held claims when a release is outstanding.
        let mut unsent_claims = Vec::new();
        let mut others = Vec::new();
        let mut waiting = Vec::new();
        let mut dropped_release = false;
        for key in std::mem::take(&mut self.dirty) {
            let Some(read) = self.as_api_may_show(&key) else {
                continue;
            };
            let Some(state) = self.state.engine().state(&workload_key(&key)) else {
                continue;
            };
            if self.in_flight.contains_key(&key) {
                if self.reassume_in_flight(&key, &state, &now) {
                    unsent_claims.push(key.clone());
                }
                self.dirty.insert(key);
                continue;
            }
            let Some(planned) = self.planned(&key, &read, &state, &now) else {
                self.assumed.remove(&key);
                continue;
            };
            if self.retries.contains_key(&key) {
                // Written again once the retry is due; until then the decision holds in memory.
                if planned.effect != Effect::Update {
                    self.assume(&key, &planned);
                }
                if planned.effect == Effect::Claim {
                    unsent_claims.push(key);
                }
                continue;
            }
            if self
                .stale
                .get(&key)
                .is_some_and(|rv| *rv == read.metadata.resource_version)
            {
                // The decision rests on an object that has changed: undo it until the newer
                // version is read.
                if planned.effect != Effect::Update {
                    self.assumed.remove(&key);
                    self.state.restore_workload(&read, fallback());
                }
                // The claims decided with this quota free must not be written either: the
                // workload still holds it in the API until its release lands.
                dropped_release |= self.frees(&key, &planned);
                continue;
            }
            match planned.effect {
                Effect::Update => {
                    self.assumed.remove(&key);
                    if planned.annotations.is_none()
                        && only_waiting_reason(read.status.as_ref(), &planned.status)
                    {
                        // Planned again if this period's budget lets it through.
                        waiting.push(key);
                    } else {
                        others.push((key, planned));
                    }
                }
                Effect::Release => {
                    self.assume(&key, &planned);
                    others.push((key, planned));
                }
                Effect::Claim => {
                    self.assume(&key, &planned);
                    claims.push((key, planned));
                }
            }
        }
        for (key, planned) in others {
            self.send(key, planned);
        }
        self.send_waiting_reasons(waiting, &now);
        self.send_claims(claims, unsent_claims, dropped_release);
    }

    /// The write `key` needs as read and decided now, if any.
    fn plan_write(&mut self, key: &str, now: &Time) -> Option<Planned> {
        let state = self.state.engine().state(&workload_key(key))?;
        let read = self.as_api_may_show(key)?;
        self.planned(key, &read, &state, now)
    }

    fn planned(
        &self,
        key: &str,
        seen: &Workload,
        state: &WorkloadState,
        now: &Time,
    ) -> Option<Planned> {
        // Planned on the object as the API may show it, so that leaving an admission that may be
        // stored is a release. Keeping that admission needs no write there: it is written again,
        // planned on the object as read.
        let on_view = plan(seen, state, now);
        let keeps_unconfirmed = self.unconfirmed.contains_key(key)
            && matches!(state.status, EngineStatus::Admitted(_))
            && on_view.as_ref().is_none_or(|p| p.effect != Effect::Claim);
        let mut planned = match self.workloads.get(key) {
            Some(as_read) if keeps_unconfirmed => plan(as_read, state, now),
            _ => on_view,
        }?;
        if self.replacing.contains_key(key) {
            // The new assignment leaves the failed nodes behind.
            planned.status.unhealthy_nodes.clear();
        }
        Some(planned)
    }
}

#[cfg(test)]
mod tests;
