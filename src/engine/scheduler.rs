//! The [`Engine`]: owns the indexed state, runs admission cycles, and keeps quota bookkeeping
//! (admit, evict, finish) and the event log consistent.

use std::sync::Arc;

use super::compile::{Compiled, compile};
use super::decision::{
    AdmissionDecision, CycleOutcome, Event, EvictionDecision, EvictionReason, EvictionRecord,
    PendingDecision, PendingReason, PreemptionDecision, PreemptionReason, RunOutcome, WorkloadKey,
    WorkloadState, WorkloadStatus,
};
use super::error::ModelError;
use super::flavor::Assignment;
use super::model::{
    Admission, BorrowWithinCohortPolicy, EngineConfig, PodSetAssignment, Snapshot, StopPolicy,
    Workload,
};
use super::quota::NodeId;
use super::state::Holding;
use super::topology_seam::{NoTopologyConstraints, TopologyPlacer};
use super::validate::check_new_workload;

/// The admission engine over one snapshot. Deterministic: the same snapshot and configuration give
/// the same decisions in the same order.
pub struct Engine {
    pub(super) config: EngineConfig,
    pub(super) c: Compiled,
    pub(super) placer: Box<dyn TopologyPlacer + Send>,
    /// Per tree root: bumps whenever usage in the tree changes.
    pub(super) generations: Vec<u64>,
    /// Per tree root: bumps whenever usage in the tree is released.
    pub(super) releases: Vec<u64>,
    pub(super) cycle: u64,
    pub(super) events: Vec<Event>,
    pub(super) needs_prelude: bool,
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
        if config.fair_sharing.enabled {
            let ignored = snapshot.cluster_queues.iter().filter(|cq| {
                cq.preemption.borrow_within_cohort.policy != BorrowWithinCohortPolicy::Never
            });
            for cq in ignored {
                tracing::warn!(
                    cluster_queue = %cq.name,
                    "spec.preemption.borrowWithinCohort is ignored while fair sharing is enabled"
                );
            }
        }
        let c = compile(snapshot)?;
        let nodes = c.node_names.len();
        Ok(Engine {
            config,
            c,
            placer,
            generations: vec![0; nodes],
            releases: vec![0; nodes],
            cycle: 0,
            events: Vec::new(),
            needs_prelude: true,
        })
    }

    /// Adds a workload after construction (for callers that feed the engine incrementally).
    pub fn add_workload(&mut self, workload: Workload) -> Result<(), ModelError> {
        check_new_workload(&self.c, &workload)?;
        self.c.add_workload(workload);
        self.needs_prelude = true;
        Ok(())
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
        let Some(&index) = self.c.by_key.get(workload) else {
            return false;
        };
        if self.c.workloads[index as usize].finished {
            return false;
        }
        self.release(index);
        let w = &mut self.c.workloads[index as usize];
        w.finished = true;
        if let Some(cq) = w.cq {
            let key = w.queue_key(index);
            self.c.queues[cq as usize].pending.remove(&key);
        }
        true
    }

    /// Every workload's current state, in input order.
    pub fn states(&self) -> Vec<WorkloadState> {
        self.c
            .workloads
            .iter()
            .map(|w| WorkloadState {
                workload: w.key.clone(),
                uid: w.model.uid.clone(),
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
                last_eviction: w.last_eviction.clone(),
            })
            .collect()
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
    }

    /// Cycles run so far.
    pub fn cycles(&self) -> u64 {
        self.cycle
    }

    pub(super) fn root_of(&self, cq: u32) -> usize {
        self.c.tree.root(NodeId(cq)).index()
    }

    /// Records a new pending reason; reports it only when it changed.
    pub(super) fn set_pending(
        &mut self,
        index: u32,
        reason: PendingReason,
        message: &Arc<str>,
        out: &mut CycleOutcome,
    ) {
        let w = &mut self.c.workloads[index as usize];
        if w.pending.0 == reason
            && (Arc::ptr_eq(&w.pending.1, message) || *w.pending.1 == **message)
        {
            return;
        }
        w.pending = (reason, message.clone());
        out.pending.push(PendingDecision {
            workload: w.key.clone(),
            reason,
            message: message.to_string(),
        });
    }

    /// Prelude of a cycle: evict what stop policies or deactivation drain, and report workloads that
    /// cannot queue.
    pub(super) fn prelude(&mut self, out: &mut CycleOutcome) {
        if !std::mem::take(&mut self.needs_prelude) {
            return;
        }
        for index in 0..self.c.workloads.len() as u32 {
            let w = &self.c.workloads[index as usize];
            if w.finished {
                continue;
            }
            if let Some(h) = &w.holding {
                let cq_drains = h.cq.is_some_and(|cq| {
                    self.c.cqs[cq as usize].stop_policy == StopPolicy::HoldAndDrain
                });
                let eviction = if !w.model.active {
                    Some((EvictionReason::Deactivated, "The workload is deactivated"))
                } else if cq_drains {
                    Some((
                        EvictionReason::ClusterQueueStopped,
                        "The ClusterQueue is stopped",
                    ))
                } else if w.local_queue_stop == StopPolicy::HoldAndDrain {
                    Some((
                        EvictionReason::LocalQueueStopped,
                        "The LocalQueue is stopped",
                    ))
                } else {
                    None
                };
                if let Some((reason, message)) = eviction {
                    self.evict(index, reason, None, message.to_string(), out);
                }
            }
            let w = &self.c.workloads[index as usize];
            if w.holding.is_none()
                && let Some((reason, message)) = w.blocked.clone()
            {
                self.set_pending(index, reason, &message, out);
            }
        }
        for cq in 0..self.c.cqs.len() {
            let Some(message) = self.c.cqs[cq].inactive.clone() else {
                continue;
            };
            let pending: Vec<u32> = self.c.queues[cq].pending.iter().map(|k| k.index).collect();
            for index in pending {
                self.set_pending(index, PendingReason::Suspended, &message, out);
            }
        }
    }

    fn bump(&mut self, cq: u32, released: bool) {
        let root = self.root_of(cq);
        self.generations[root] += 1;
        if released {
            self.releases[root] += 1;
        }
    }

    /// Takes away a workload's quota, if it holds any. Returns the admission it held.
    fn release(&mut self, index: u32) -> Option<Admission> {
        let holding = self.c.workloads[index as usize].holding.take()?;
        if let Some(cq) = holding.cq {
            for (fr, amount) in &holding.usage {
                self.c.tree.add_usage(NodeId(cq), *fr, -*amount);
            }
            self.c.queues[cq as usize].admitted.remove(&index);
            self.bump(cq, true);
        }
        let key = self.c.workloads[index as usize].key.clone();
        self.placer.release(&key, &holding.admission);
        Some(holding.admission)
    }

    /// Evicts an admitted workload: releases its quota at once and queues it again.
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
        let w = &mut self.c.workloads[index as usize];
        w.last_eviction = Some(EvictionRecord {
            reason,
            message: message.clone(),
            preemption: preemption.map(|p| p.0),
        });
        w.inadmissible_at = None;
        w.pending = (
            PendingReason::PendingEvaluation,
            Arc::from("evicted and queued again"),
        );
        let key = w.key.clone();
        if w.blocked.is_none()
            && let Some(cq) = w.cq
        {
            let queue_key = w.queue_key(index);
            self.c.queues[cq as usize].pending.insert(queue_key);
        }
        if let Some((preemption_reason, preemptor)) = preemption {
            let preemptor = self.c.workloads[preemptor as usize].key.clone();
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
        let path = self.c.tree.path(NodeId(cq));
        path.iter()
            .rev()
            .map(|n| format!("/{}", self.c.node_names[n.index()]))
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
        let borrowing = assignment
            .usage
            .iter()
            .any(|(fr, q)| self.c.tree.usage(node, *fr) + *q > self.c.tree.nominal(node, *fr));
        let w = &self.c.workloads[index as usize];
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
                            self.c.names.resource_name(*r).to_string(),
                            self.c.names.flavor_name(*f).to_string(),
                        )
                    })
                    .collect(),
                resource_usage: choice
                    .usage
                    .iter()
                    .map(|(r, q)| (self.c.names.resource_name(*r).to_string(), *q))
                    .collect(),
                count: choice.count,
                topology_assignment: choice.topology,
            })
            .collect();
        let admission = Admission {
            cluster_queue: self.c.cqs[cq as usize].name.clone(),
            pod_set_assignments,
        };
        for (fr, amount) in &assignment.usage {
            self.c.tree.add_usage(node, *fr, *amount);
        }
        let key = w.key.clone();
        let queue_key = w.queue_key(index);
        self.bump(cq, false);
        self.c.clock += 1;
        self.c.queues[cq as usize].pending.remove(&queue_key);
        self.c.queues[cq as usize].admitted.insert(index);
        self.placer.reserve(&key, &admission);
        let w = &mut self.c.workloads[index as usize];
        w.holding = Some(Holding {
            cq: Some(cq),
            usage: assignment.usage,
            admission: admission.clone(),
            reserved_at: self.c.clock,
            cycle: self.cycle,
            fair_share_shield: Vec::new(),
        });
        w.last_eviction = None;
        w.inadmissible_at = None;
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
