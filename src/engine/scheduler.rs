//! The [`Engine`]: owns the indexed state, runs admission cycles, and keeps quota bookkeeping
//! (admit, evict, finish) and the event log consistent.

use std::sync::Arc;

use super::admission_checks;
use super::compile::{Compiled, compile_valid};
use super::decision::{
    AdmissionDecision, CarriedState, CycleOutcome, Event, EvictionDecision, EvictionReason,
    EvictionRecord, PendingDecision, PendingReason, PreemptionDecision, PreemptionReason,
    RunOutcome, WorkloadKey, WorkloadState, WorkloadStatus,
};
use super::error::ModelError;
use super::flavor::Assignment;
use super::model::{
    Admission, BorrowWithinCohortPolicy, ClusterQueue, EngineConfig, PodSetAssignment, Snapshot,
    Workload,
};
use super::quota::NodeId;
use super::state::{Holding, WorkloadSlot};
use super::structure::Structure;
use super::topology_placer::{NoTopologyConstraints, TopologyPlacer};

/// The admission engine over one snapshot. Deterministic: the same snapshot and configuration give
/// the same decisions in the same order.
pub struct Engine {
    pub(super) config: EngineConfig,
    pub(super) compiled: Compiled,
    pub(super) placer: Box<dyn TopologyPlacer + Send>,
    /// Per tree root: bumps whenever usage in the tree changes.
    pub(super) generations: Vec<u64>,
    /// Per tree root: bumps whenever usage in the tree is released.
    pub(super) releases: Vec<u64>,
    /// Per tree root: the tree's last cycle changed nothing and nothing touched the tree since, so
    /// the next cycle would change nothing there either and skips it.
    pub(super) settled: Vec<bool>,
    pub(super) cycle: u64,
    pub(super) events: Vec<Event>,
    /// The quota objects, kept by name so each can be replaced on its own.
    pub(super) structure: Structure,
    /// Quota objects changed since the last re-index.
    pub(super) structure_changed: bool,
    /// Slots of removed workloads not yet reclaimed by a re-index.
    pub(super) removed_slots: usize,
    /// The last cycle changed nothing and no input changed since: the next cycle would change
    /// nothing either, so it is skipped.
    pub(super) quiet: bool,
    /// The next cycle's prelude looks at every workload (after construction or a re-index)...
    pub(super) prelude_all: bool,
    /// ...or only at these, added or replaced since the last cycle.
    pub(super) prelude_pending: Vec<u32>,
    /// Workloads evicted under `requeue_evicted_next_pass` since [`Engine::requeue_evicted`]
    /// was last called.
    pub(super) evicted_unqueued: Vec<WorkloadKey>,
    /// The time admissions are reserved at (see [`Engine::set_now`]).
    pub(super) now: i64,
}

impl Engine {
    /// An engine without topology constraints (copies the snapshot; see [`Engine::from_snapshot`]).
    pub fn new(snapshot: &Snapshot, config: EngineConfig) -> Result<Self, ModelError> {
        Self::with_placer(snapshot.clone(), config, Box::new(NoTopologyConstraints))
    }

    /// An engine without topology constraints that takes the snapshot over instead of copying it,
    /// so a large snapshot is held once.
    pub fn from_snapshot(snapshot: Snapshot, config: EngineConfig) -> Result<Self, ModelError> {
        Self::with_placer(snapshot, config, Box::new(NoTopologyConstraints))
    }

    /// An engine that asks `placer` about topology for TAS pod sets and flavors.
    pub fn with_placer(
        snapshot: Snapshot,
        config: EngineConfig,
        placer: Box<dyn TopologyPlacer + Send>,
    ) -> Result<Self, ModelError> {
        super::validate::snapshot(&snapshot)?;
        Ok(Self::from_valid(snapshot, config, placer))
    }

    /// An engine with no objects yet, fed one change at a time (see the `upsert_*` and
    /// `remove_*` methods).
    pub fn empty(config: EngineConfig, placer: Box<dyn TopologyPlacer + Send>) -> Self {
        Self::from_valid(Snapshot::default(), config, placer)
    }

    fn from_valid(
        snapshot: Snapshot,
        config: EngineConfig,
        placer: Box<dyn TopologyPlacer + Send>,
    ) -> Self {
        for cq in &snapshot.cluster_queues {
            warn_ignored_borrowing(&config, cq);
        }
        let structure = Structure::from_snapshot(&snapshot);
        let compiled = compile_valid(snapshot);
        let nodes = compiled.node_names.len();
        Engine {
            config,
            compiled,
            placer,
            generations: vec![0; nodes],
            releases: vec![0; nodes],
            settled: vec![false; nodes],
            cycle: 0,
            events: Vec::new(),
            structure,
            structure_changed: false,
            removed_slots: 0,
            quiet: false,
            prelude_all: true,
            prelude_pending: Vec::new(),
            evicted_unqueued: Vec::new(),
            now: 0,
        }
    }

    /// Sets the time the next admissions are reserved at, in milliseconds on `creation`'s clock.
    /// The engine keeps no clock: the caller gives the time the API will show as the
    /// `QuotaReserved` condition's `lastTransitionTime`, so whole seconds, and a restarted engine
    /// reads the same reservation times back from those conditions. Preemption candidates are
    /// ordered by this time (most recent first) and then by UID, as Kueue orders them, so
    /// reservations made within one second tie and fall to the UID in both.
    pub fn set_now(&mut self, now: i64) {
        self.now = now;
    }

    /// The placer, for callers that keep its topology inputs up to date.
    pub fn placer_mut(&mut self) -> &mut (dyn TopologyPlacer + Send) {
        self.placer.as_mut()
    }

    /// Runs cycles until one changes nothing (or `max_cycles` is reached).
    pub fn run_until_stable(&mut self) -> RunOutcome {
        let mut stable = false;
        let start = self.cycle;
        while self.cycle - start < self.config.max_cycles {
            if !self.cycle().changed_anything() {
                stable = true;
                break;
            }
        }
        RunOutcome {
            workloads: self.states(),
            events: self.events.clone(),
            cycles: self.cycle - start,
            stable,
        }
    }

    /// Marks a workload finished: its quota is released and it leaves every queue. Returns whether
    /// the workload was known and not already finished.
    pub fn finish(&mut self, workload: &WorkloadKey) -> bool {
        let Some(index) = self.compiled.slot_of(workload) else {
            return false;
        };
        if self.compiled.workloads[index as usize].finished {
            return false;
        }
        self.quiet = false;
        self.release(index);
        let w = &mut self.compiled.workloads[index as usize];
        w.finished = true;
        // As for a workload added finished: it never queues again, so its pod sets go.
        w.model.pod_sets = Vec::new();
        w.per_pod = Vec::new();
        if let Some(cq) = w.cq {
            let key = w.queue_key(index);
            self.compiled.queues[cq as usize].pending.remove(&key);
            let root = self.root_of(cq);
            self.settled[root] = false;
        }
        true
    }

    /// Every workload's current state, in input order.
    pub fn states(&self) -> Vec<WorkloadState> {
        self.compiled
            .workloads
            .iter()
            .filter(|w| !w.removed)
            .map(|w| self.state_of(w))
            .collect()
    }

    /// Every workload waiting for quota and why, in input order: the queue gauges count these at
    /// every report, so nothing is copied.
    pub fn pending(&self) -> impl Iterator<Item = (&Workload, PendingReason)> {
        self.compiled
            .workloads
            .iter()
            .filter(|w| !w.removed && !w.finished && w.holding.is_none())
            .map(|w| (&w.model, w.pending.0))
    }

    /// Every finished workload the engine still holds (until its Workload is deleted), in input
    /// order: the queue gauges count these as Kueue's `finished_workloads`.
    pub fn finished(&self) -> impl Iterator<Item = &Workload> {
        self.compiled
            .workloads
            .iter()
            .filter(|w| !w.removed && w.finished)
            .map(|w| &w.model)
    }

    /// The feature gates the engine decides under.
    pub fn features(&self) -> &super::features::FeatureGates {
        &self.config.features
    }

    /// Which time orders a Workload requeued after a PodsReady timeout.
    pub fn requeuing_timestamp(&self) -> super::model::RequeuingTimestamp {
        self.config.requeuing_timestamp
    }

    /// One workload's current state, when the engine holds it.
    pub fn state(&self, key: &WorkloadKey) -> Option<WorkloadState> {
        let index = self.compiled.slot_of(key)?;
        Some(self.state_of(&self.compiled.workloads[index as usize]))
    }

    fn state_of(&self, w: &WorkloadSlot) -> WorkloadState {
        WorkloadState {
            workload: w.key(),
            uid: w.uid.to_string(),
            status: if w.finished {
                WorkloadStatus::Finished
            } else if let Some(h) = &w.holding {
                WorkloadStatus::Admitted(h.admission.clone())
            } else {
                WorkloadStatus::Pending {
                    reason: w.pending.0,
                    message: w.pending.1.to_string(),
                }
            },
            last_eviction: w.last_eviction.as_deref().cloned(),
            active: w.model.active,
            carried: self.carried(w),
            admission_checks: self.checks_of(w),
        }
    }

    /// The AdmissionChecks `w`'s status must list (see [`WorkloadState::admission_checks`]).
    fn checks_of(&self, w: &WorkloadSlot) -> Vec<String> {
        if w.finished {
            return Vec::new();
        }
        let cq = |index: Option<u32>| index.and_then(|i| self.compiled.cqs.get(i as usize));
        match &w.holding {
            Some(holding) => cq(holding.cq).map_or_else(Vec::new, |info| {
                admission_checks::for_admission(&info.checks, &holding.admission)
            }),
            None => cq(w.cq).map_or_else(Vec::new, |info| {
                if info.checks.is_empty() {
                    return Vec::new();
                }
                let flavors: Vec<&str> = info
                    .groups
                    .iter()
                    .flat_map(|g| &g.flavors)
                    .map(|f| self.compiled.names.flavor_name(*f))
                    .collect();
                admission_checks::for_every_flavor(&info.checks, &flavors)
            }),
        }
    }

    pub(super) fn carried(&self, w: &WorkloadSlot) -> CarriedState {
        CarriedState {
            quota_reserved_at: w.holding.as_ref().map(|h| h.reserved_at),
            preemption_credit_spent: w.preemption_credit_spent,
            fair_share_shield: w
                .holding
                .iter()
                .flat_map(|h| &h.fair_share_shield)
                .map(|cq| self.compiled.cqs[*cq as usize].name.clone())
                .collect(),
        }
    }

    /// The ordered event log so far.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Hands over the event log and starts a new one, so a long-running caller keeps memory
    /// proportional to live state rather than history.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    /// Makes every inadmissible workload eligible again in the next cycle, for changes the engine
    /// cannot see in quota (topology capacity freed, nodes added), like Kueue's requeue on cluster
    /// events.
    pub fn requeue_inadmissible(&mut self) {
        for generation in &mut self.generations {
            *generation += 1;
        }
        self.unsettle_all();
    }

    /// Cycles run so far.
    pub fn cycles(&self) -> u64 {
        self.cycle
    }

    pub(super) fn root_of(&self, cq: u32) -> usize {
        self.compiled.tree.root(NodeId(cq)).index()
    }

    /// Records a new pending reason; reports it only when it changed.
    pub(super) fn set_pending(
        &mut self,
        index: u32,
        reason: PendingReason,
        message: &Arc<str>,
        out: &mut CycleOutcome,
    ) {
        let w = &mut self.compiled.workloads[index as usize];
        if w.pending.0 == reason
            && (Arc::ptr_eq(&w.pending.1, message) || *w.pending.1 == **message)
        {
            return;
        }
        w.pending = (reason, message.clone());
        out.pending.push(PendingDecision {
            workload: w.key(),
            reason,
            message: message.to_string(),
        });
    }

    fn bump(&mut self, cq: u32, released: bool) {
        let root = self.root_of(cq);
        self.generations[root] += 1;
        self.settled[root] = false;
        if released {
            self.releases[root] += 1;
        }
    }

    /// Every tree is looked at again in the next cycle.
    pub(super) fn unsettle_all(&mut self) {
        self.settled.fill(false);
        self.quiet = false;
    }

    /// Takes away a workload's quota, if it holds any. Returns the admission it held.
    pub(super) fn release(&mut self, index: u32) -> Option<Admission> {
        let holding = self.compiled.workloads[index as usize].holding.take()?;
        if let Some(cq) = holding.cq {
            for (fr, amount) in &holding.usage {
                self.compiled.tree.add_usage(NodeId(cq), *fr, -*amount);
            }
            self.compiled.queues[cq as usize].admitted.remove(&index);
            self.bump(cq, true);
        }
        let key = self.compiled.workloads[index as usize].key();
        self.placer.release(&key, &holding.admission);
        // Topology capacity is shared by every cohort tree: what it frees may fit anywhere.
        if holding
            .admission
            .pod_set_assignments
            .iter()
            .any(|a| a.topology_assignment.is_some())
        {
            self.unsettle_all();
        }
        Some(holding.admission)
    }

    /// Evicts an admitted workload: releases its quota at once and queues it again (with
    /// `requeue_evicted_next_pass`, at the next [`Engine::requeue_evicted`]).
    pub(super) fn evict(
        &mut self,
        index: u32,
        reason: EvictionReason,
        preemption: Option<(PreemptionReason, u32)>,
        message: String,
        out: &mut CycleOutcome,
    ) {
        if self.release(index).is_none() {
            return;
        }
        let cycle = self.cycle;
        let w = &mut self.compiled.workloads[index as usize];
        w.last_eviction = Some(Box::new(EvictionRecord {
            reason,
            message: message.clone(),
            preemption: preemption.map(|p| p.0),
        }));
        w.pending = (
            PendingReason::PendingEvaluation,
            Arc::from("evicted and queued again"),
        );
        let key = w.key();
        if self.config.requeue_evicted_next_pass {
            self.evicted_unqueued.push(key.clone());
        } else if w.blocked.is_none()
            && let Some(cq) = w.cq
        {
            let queue_key = w.queue_key(index);
            self.compiled.queues[cq as usize].pending.insert(queue_key);
        }
        if let Some((preemption_reason, preemptor)) = preemption {
            let preemptor = self.compiled.workloads[preemptor as usize].key();
            self.events.push(Event::Preempted {
                cycle,
                victim: key.clone(),
                preemptor: preemptor.clone(),
                reason: preemption_reason,
                message: message.clone(),
            });
            out.preempted.push(PreemptionDecision {
                victim: key.clone(),
                preemptor,
                reason: preemption_reason,
                message: message.clone(),
            });
        } else {
            out.evicted.push(EvictionDecision {
                workload: key.clone(),
                reason,
                message: message.clone(),
            });
        }
        self.events.push(Event::Evicted {
            cycle,
            workload: key,
            reason,
            message,
        });
    }

    /// `/root/…/cq` for a ClusterQueue.
    pub(super) fn path_of(&self, cq: u32) -> String {
        let path = self.compiled.tree.path(NodeId(cq));
        path.iter()
            .rev()
            .map(|n| format!("/{}", self.compiled.node_names[n.index()]))
            .collect()
    }

    /// Admits a workload with a flavor assignment.
    pub(super) fn admit(
        &mut self,
        index: u32,
        cq: u32,
        assignment: Assignment,
        preempted: Vec<WorkloadKey>,
        out: &mut CycleOutcome,
    ) {
        let node = NodeId(cq);
        let borrowing = assignment.usage.iter().any(|(fr, q)| {
            self.compiled.tree.usage(node, *fr) + *q > self.compiled.tree.nominal(node, *fr)
        });
        let w = &self.compiled.workloads[index as usize];
        let placement_quality: Vec<_> = w
            .model
            .pod_sets
            .iter()
            .zip(&assignment.pod_sets)
            .filter_map(|(ps, choice)| {
                let placement = choice.topology.as_ref()?;
                Some((ps.name.clone(), placement.quality.clone()))
            })
            .collect();
        let pod_set_assignments = w
            .model
            .pod_sets
            .iter()
            .zip(assignment.pod_sets)
            .map(|(ps, choice)| PodSetAssignment {
                name: ps.name.clone(),
                flavors: choice
                    .flavors
                    .iter()
                    .map(|(r, f)| {
                        (
                            self.compiled.names.resource_name(*r).to_string(),
                            self.compiled.names.flavor_name(*f).to_string(),
                        )
                    })
                    .collect(),
                resource_usage: choice
                    .usage
                    .iter()
                    .map(|(r, q)| (self.compiled.names.resource_name(*r).to_string(), *q))
                    .collect(),
                count: choice.count,
                topology_assignment: choice.topology.map(|p| p.assignment),
            })
            .collect();
        let admission = Admission {
            cluster_queue: self.compiled.cqs[cq as usize].name.clone(),
            pod_set_assignments,
        };
        for (fr, amount) in &assignment.usage {
            self.compiled.tree.add_usage(node, *fr, *amount);
        }
        let key = w.key();
        let queue_key = w.queue_key(index);
        self.bump(cq, false);
        self.compiled.queues[cq as usize].pending.remove(&queue_key);
        self.compiled.queues[cq as usize].admitted.insert(index);
        self.placer.reserve(&key, &admission);
        let w = &mut self.compiled.workloads[index as usize];
        w.holding = Some(Box::new(Holding {
            cq: Some(cq),
            usage: assignment.usage,
            admission: admission.clone(),
            reserved_at: self.now,
            cycle: self.cycle,
            fair_share_shield: Vec::new(),
        }));
        w.last_eviction = None;
        self.events.push(Event::Admitted {
            cycle: self.cycle,
            workload: key.clone(),
            cluster_queue: admission.cluster_queue.clone(),
        });
        out.admitted.push(AdmissionDecision {
            workload: key,
            admission,
            borrowing,
            preempted,
            placement_quality,
        });
    }
}

/// Builds an engine for `snapshot` and runs it until nothing changes.
pub fn run_until_stable(
    snapshot: &Snapshot,
    config: EngineConfig,
) -> Result<RunOutcome, ModelError> {
    Ok(Engine::new(snapshot, config)?.run_until_stable())
}

/// Kueue ignores `borrowWithinCohort` while fair sharing is on; say so for the queue that sets it.
pub(super) fn warn_ignored_borrowing(config: &EngineConfig, cq: &ClusterQueue) {
    if config.fair_sharing.enabled
        && cq.preemption.borrow_within_cohort.policy != BorrowWithinCohortPolicy::Never
    {
        tracing::warn!(
            cluster_queue = %cq.name,
            "spec.preemption.borrowWithinCohort is ignored while fair sharing is enabled"
        );
    }
}
