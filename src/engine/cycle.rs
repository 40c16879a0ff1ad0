//! One admission cycle as Kueue's scheduler runs it, better than Kueue's where Kueue is slow: instead of one head per
//! ClusterQueue per cycle, a cycle runs rounds. Each round takes the next workload of every active
//! ClusterQueue, orders them as Kueue orders heads (classic: borrowing level, priority, creation;
//! fair sharing: the tournament), and processes them against the running quota tree. Rounds go on
//! until every queue is exhausted or blocked, so a deep queue drains as fast as quota allows.
//! Quota held for a workload that needs preemption but found no victims (Kueue keeps it from other
//! ClusterQueues for the cycle) lasts the whole cycle and keeps out only other
//! queues.
//!
//! A workload found inadmissible is remembered by equivalence class for the rest of the cycle (gate
//! `SchedulingEquivalenceHashing`): identical workloads (same ClusterQueue, priority and pod-set
//! shapes) are not evaluated again while no quota was released in the cohort tree. Within a cycle
//! usage only grows and workloads admitted in the cycle are never preemption candidates, so the
//! cached answer stays right. Unlike Kueue, which parks an inadmissible workload until its cohort
//! changes, every cycle that runs evaluates every waiting workload again (a cycle runs only when
//! something changed): what a cycle decides then depends only on the objects, never on which cycle
//! last looked at a workload, so a restarted controller decides exactly as the one before it.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::sync::Arc;

use super::compile::Compiled;
use super::decision::{CycleOutcome, EvictionReason, PendingReason, PreemptionReason};
use super::fair_sharing::{Contender, tournament_winner};
use super::features::Feature;
use super::flavor::{self, Assigned, Assignment, Mode};
use super::holds::Holds;
use super::model::QueueingStrategy;
use super::preemption::{self, Preemptor, Target};
use super::quota::{NodeId, QuotaTree};
use super::scheduler::Engine;
use super::state::World;

/// What one evaluation of a workload concluded.
enum Nomination {
    Fit(Assignment),
    Preempt(Assignment, Vec<Target>),
    /// Not admissible now. With an assignment when it needs preemption but found no victims: the
    /// quota it is owed may be held for it, as Kueue holds it for the rest of the cycle.
    NoFit(PendingReason, Arc<str>, Option<Assignment>),
}

/// Why an evaluation failed, with the assignment that needed preemption but found no victims.
type Failure = (PendingReason, String, Option<Assignment>);

struct Entry {
    index: u32,
    cq: u32,
    generation: u64,
    nomination: Nomination,
}

impl Entry {
    fn assignment(&self) -> Option<&Assignment> {
        match &self.nomination {
            Nomination::Fit(a) | Nomination::Preempt(a, _) | Nomination::NoFit(_, _, Some(a)) => {
                Some(a)
            }
            Nomination::NoFit(_, _, None) => None,
        }
    }
}

/// Per-cycle bookkeeping.
struct CycleState {
    /// Each ClusterQueue's pending workloads, in queue order, as the cycle started.
    lists: Vec<Vec<u32>>,
    cursor: Vec<usize>,
    done: Vec<bool>,
    /// Equivalence class → (release generation of its tree, reason, message).
    inadmissible: HashMap<u32, (u64, PendingReason, Arc<str>)>,
    /// Quota held this cycle for waiting workloads.
    holds: Holds,
}

fn preemption_cause(reason: PreemptionReason) -> &'static str {
    match reason {
        PreemptionReason::InClusterQueue => "prioritization in the ClusterQueue",
        PreemptionReason::InCohortReclamation => "reclamation within the cohort",
        PreemptionReason::InCohortFairSharing => "Fair Sharing within the cohort",
        PreemptionReason::InCohortReclaimWhileBorrowing => {
            "reclamation within the cohort while borrowing"
        }
    }
}

impl Engine {
    /// Splits the engine into a read-only view and the quota tree the simulation mutates.
    fn split(&mut self) -> (World<'_>, &mut QuotaTree) {
        let Compiled {
            names,
            flavors,
            cqs,
            queues,
            workloads,
            tree,
            cohort_weights,
            tree_cqs,
            ..
        } = &mut self.compiled;
        let world = World {
            names,
            flavors,
            cqs,
            queues,
            workloads,
            config: &self.config,
            placer: self.placer.as_ref(),
            cohort_weights,
            tree_cqs_by_root: tree_cqs,
            cycle: self.cycle,
        };
        (world, tree)
    }

    /// Runs one admission cycle.
    pub fn cycle(&mut self) -> CycleOutcome {
        self.cycle += 1;
        let mut out = CycleOutcome {
            cycle: self.cycle,
            ..Default::default()
        };
        if self.quiet {
            return out;
        }
        self.restructure();
        self.prelude(&mut out);
        let n = self.compiled.cqs.len();
        let generations_before = self.generations.clone();
        let lists = (0..n)
            .map(|cq| {
                let settled = self.settled[self.root_of(cq as u32)];
                match self.compiled.cqs[cq].inactive {
                    Some(_) => Vec::new(),
                    None if settled => Vec::new(),
                    None => self.compiled.queues[cq]
                        .pending
                        .iter()
                        .map(|k| k.index)
                        .collect(),
                }
            })
            .collect();
        let mut st = CycleState {
            lists,
            cursor: vec![0; n],
            done: vec![false; n],
            inadmissible: HashMap::new(),
            holds: Holds::default(),
        };
        loop {
            let mut entries = Vec::new();
            for cq in 0..n as u32 {
                if let Some(index) = self.next_head(cq, &mut st, &mut out) {
                    let generation = self.generations[self.root_of(cq)];
                    let nomination = self.nominate_unheld(index, cq, &st);
                    entries.push(Entry {
                        index,
                        cq,
                        generation,
                        nomination,
                    });
                }
            }
            if entries.is_empty() {
                break;
            }
            if self.config.fair_sharing.enabled {
                self.process_tournament(entries, &mut st, &mut out);
            } else {
                self.order_classic(&mut entries);
                for entry in entries {
                    self.process(entry, &mut st, &mut out);
                }
            }
        }
        st.holds.release(&mut self.compiled.tree);
        for (settled, (now, before)) in self
            .settled
            .iter_mut()
            .zip(self.generations.iter().zip(&generations_before))
        {
            *settled = now == before;
        }
        self.quiet = !out.changed_anything();
        out
    }

    /// Nominates with every hold lifted: holds keep workloads out, they never change what a
    /// workload would need.
    fn nominate_unheld(&mut self, index: u32, cq: u32, st: &CycleState) -> Nomination {
        st.holds.apply(&mut self.compiled.tree, None, -1);
        let nomination = self.nominate(index, cq);
        st.holds.apply(&mut self.compiled.tree, None, 1);
        nomination
    }

    /// The next workload of `cq` to evaluate this cycle, answering cached equivalents on the way.
    fn next_head(&mut self, cq: u32, st: &mut CycleState, out: &mut CycleOutcome) -> Option<u32> {
        let c = cq as usize;
        let root = self.root_of(cq);
        let strict = self.compiled.cqs[c].strategy == QueueingStrategy::StrictFifo;
        while !st.done[c] {
            let Some(&index) = st.lists[c].get(st.cursor[c]) else {
                st.done[c] = true;
                break;
            };
            st.cursor[c] += 1;
            let w = &self.compiled.workloads[index as usize];
            if w.holding.is_some() || w.finished {
                continue;
            }
            let cached = st.inadmissible.get(&w.eq_class).cloned();
            match cached {
                Some((released, reason, message)) if released == self.releases[root] => {
                    self.set_pending(index, reason, &message, out);
                    if strict {
                        self.block_rest(cq, index, st, out);
                    }
                }
                _ => return Some(index),
            }
        }
        None
    }

    /// StrictFIFO: the head could not be admitted, so nothing behind it is this cycle.
    fn block_rest(&mut self, cq: u32, head: u32, st: &mut CycleState, out: &mut CycleOutcome) {
        let c = cq as usize;
        st.done[c] = true;
        let message: Arc<str> = Arc::from(format!(
            "waiting behind workload {}, the head of StrictFIFO ClusterQueue {}",
            self.compiled.workloads[head as usize].key(),
            self.compiled.cqs[c].name
        ));
        let rest: Vec<u32> = st.lists[c][st.cursor[c]..].to_vec();
        for index in rest {
            let w = &self.compiled.workloads[index as usize];
            if w.holding.is_none() && !w.finished {
                self.set_pending(index, PendingReason::PendingEvaluation, &message, out);
            }
        }
    }

    /// Evaluates a workload: full counts first, then (gate `PartialAdmission`) the largest count of
    /// its `minCount` pod set that fits, by bisection.
    fn nominate(&mut self, index: u32, cq: u32) -> Nomination {
        // Kueue queues a workload whose resources break their rules and finds it inadmissible
        // when it is the head: a StrictFIFO queue waits behind it.
        if let Some(message) = &self.compiled.workloads[index as usize]
            .model
            .invalid_resources
        {
            let message = Arc::from(message.as_str());
            return Nomination::NoFit(PendingReason::Misconfigured, message, None);
        }
        let counts: Vec<i32> = self.compiled.workloads[index as usize]
            .model
            .pod_sets
            .iter()
            .map(|p| p.count)
            .collect();
        let (reason, message, hold) = match self.try_counts(index, cq, &counts) {
            Ok(nomination) => return nomination,
            Err(failure) => failure,
        };
        let partial = self.compiled.workloads[index as usize]
            .model
            .pod_sets
            .iter()
            .enumerate()
            .find_map(|(i, p)| p.min_count.filter(|m| *m < p.count).map(|m| (i, m)));
        if let (true, Some((i, min))) = (
            self.config.features.enabled(Feature::PartialAdmission),
            partial,
        ) {
            let with = |engine: &mut Engine, count: i32| {
                let mut reduced = counts.clone();
                reduced[i] = count;
                engine.try_counts(index, cq, &reduced).ok()
            };
            if let Some(mut best) = with(self, min) {
                let (mut lo, mut hi) = (min, counts[i] - 1);
                while lo < hi {
                    let mid = lo + (hi - lo + 1) / 2;
                    match with(self, mid) {
                        Some(nomination) => {
                            best = nomination;
                            lo = mid;
                        }
                        None => hi = mid - 1,
                    }
                }
                return best;
            }
        }
        Nomination::NoFit(reason, Arc::from(message), hold)
    }

    fn try_counts(&mut self, index: u32, cq: u32, counts: &[i32]) -> Result<Nomination, Failure> {
        let (world, tree) = self.split();
        let wl = &world.workloads[index as usize];
        match flavor::assign(&world, tree, cq, wl, counts) {
            Assigned::NoFit { reason, message } => Err((reason, message, None)),
            Assigned::Ok(a) if a.mode == Mode::Fit => Ok(Nomination::Fit(a)),
            Assigned::Ok(a) if a.mode == Mode::NoCandidates => {
                Err((PendingReason::WaitingForQuota, a.shortfall.clone(), Some(a)))
            }
            Assigned::Ok(a) => {
                let needs = a.topology_needs();
                let p = Preemptor::new(cq, wl, &a.usage, &needs);
                let targets = preemption::find_targets(&world, tree, &p);
                if targets.is_empty() {
                    Err((PendingReason::WaitingForQuota, a.shortfall.clone(), Some(a)))
                } else {
                    Ok(Nomination::Preempt(a, targets))
                }
            }
        }
    }

    /// Classic order across ClusterQueues: lower borrowing level, higher priority (gate
    /// `PrioritySortingWithinCohort`), earlier creation, uid. Entries that cannot be admitted go last.
    fn order_classic(&self, entries: &mut [Entry]) {
        let by_priority = self
            .config
            .features
            .enabled(Feature::PrioritySortingWithinCohort);
        entries.sort_by_cached_key(|e| {
            let w = &self.compiled.workloads[e.index as usize];
            (
                e.assignment().map_or(u32::MAX, |a| a.level),
                Reverse(if by_priority { w.model.priority } else { 0 }),
                w.model.creation,
                w.uid.clone(),
            )
        });
    }

    /// Fair sharing: repeatedly let each cohort tree's tournament pick the next entry.
    fn process_tournament(
        &mut self,
        entries: Vec<Entry>,
        st: &mut CycleState,
        out: &mut CycleOutcome,
    ) {
        let (viable, failed): (Vec<Entry>, Vec<Entry>) =
            entries.into_iter().partition(|e| e.assignment().is_some());
        for entry in failed {
            self.process(entry, st, out);
        }
        let mut remaining = viable;
        while !remaining.is_empty() {
            let root = self.root_of(remaining[0].cq);
            let (world, tree) = self.split();
            let members: Vec<usize> = (0..remaining.len())
                .filter(|i| tree.root(NodeId(remaining[*i].cq)).index() == root)
                .collect();
            let contenders: Vec<Contender<'_>> = members
                .iter()
                .filter_map(|&i| {
                    let e = &remaining[i];
                    let w = &world.workloads[e.index as usize];
                    e.assignment().map(|a| Contender {
                        cq: e.cq,
                        priority: w.model.priority,
                        creation: w.model.creation,
                        usage: &a.usage,
                    })
                })
                .collect();
            let pick = tournament_winner(&world, tree, NodeId(root as u32), &contenders)
                .map_or(members[0], |winner| members[winner]);
            let entry = remaining.remove(pick);
            self.process(entry, st, out);
        }
    }

    fn process(&mut self, entry: Entry, st: &mut CycleState, out: &mut CycleOutcome) {
        let Entry {
            index,
            cq,
            generation,
            nomination,
        } = entry;
        let root = self.root_of(cq);
        let nomination = if generation == self.generations[root] {
            nomination
        } else {
            self.nominate_unheld(index, cq, st)
        };
        st.holds.apply(&mut self.compiled.tree, Some(cq), -1);
        match self.blocked_by_holds(cq, &nomination, st) {
            Some(message) => {
                let reason = PendingReason::WaitingForQuota;
                self.reject(index, cq, reason, Arc::from(message), st, out);
            }
            None => self.process_lifted(index, cq, nomination, st, out),
        }
        st.holds.apply(&mut self.compiled.tree, Some(cq), 1);
    }

    /// Why an admission or preemption must wait for quota held for other queues' workloads: it does
    /// not fit beside the holds (after its victims go). Nothing is evicted for it then.
    fn blocked_by_holds(
        &mut self,
        cq: u32,
        nomination: &Nomination,
        st: &CycleState,
    ) -> Option<String> {
        let node = NodeId(cq);
        if !st
            .holds
            .any_in(&self.compiled.tree, self.compiled.tree.root(node))
        {
            return None;
        }
        let (assignment, targets) = match nomination {
            Nomination::Fit(a) => (a, &[][..]),
            Nomination::Preempt(a, targets) => (a, targets.as_slice()),
            Nomination::NoFit(..) => return None,
        };
        let (world, tree) = self.split();
        targets
            .iter()
            .for_each(|t| preemption::apply(&world, tree, t.workload, -1));
        let blocked = (!preemption::fits(tree, node, &assignment.usage, true)).then(|| {
            st.holds
                .blocked_message(tree, world.names, world.cqs, node, &assignment.usage)
        });
        targets
            .iter()
            .for_each(|t| preemption::apply(&world, tree, t.workload, 1));
        blocked
    }

    /// Acts on a nomination while `cq`'s own holds are lifted.
    fn process_lifted(
        &mut self,
        index: u32,
        cq: u32,
        nomination: Nomination,
        st: &mut CycleState,
        out: &mut CycleOutcome,
    ) {
        match nomination {
            Nomination::Fit(assignment) => {
                self.admit_checked(index, cq, assignment, Vec::new(), st, out)
            }
            Nomination::Preempt(assignment, targets) => {
                let preemptor = &self.compiled.workloads[index as usize];
                let uid = preemptor.uid.clone();
                let job_uid = preemptor
                    .model
                    .job_uid
                    .as_deref()
                    .unwrap_or("UNKNOWN")
                    .to_string();
                let preemptor_path = self.path_of(cq);
                let mut victims = Vec::with_capacity(targets.len());
                let mut shield = Vec::new();
                let priority = self.compiled.workloads[index as usize].model.priority;
                if targets.iter().any(|t| {
                    self.compiled.workloads[t.workload as usize].model.priority >= priority
                }) {
                    self.compiled.workloads[index as usize].preemption_credit_spent = true;
                }
                for target in targets {
                    let victim = &self.compiled.workloads[target.workload as usize];
                    let victim_path = victim
                        .holding
                        .as_ref()
                        .and_then(|h| h.cq)
                        .map(|c| self.path_of(c))
                        .unwrap_or_default();
                    victims.push(victim.key());
                    if target.reason == PreemptionReason::InCohortFairSharing
                        && let Some(victim_cq) = victim.holding.as_ref().and_then(|h| h.cq)
                    {
                        shield.push(victim_cq);
                    }
                    let message = format!(
                        "Preempted to accommodate a workload (UID: {uid}, JobUID: {job_uid}) due to {}; preemptor path: {preemptor_path}; preemptee path: {victim_path}",
                        preemption_cause(target.reason)
                    );
                    self.evict(
                        target.workload,
                        EvictionReason::Preempted,
                        Some((target.reason, index)),
                        message,
                        out,
                    );
                }
                self.admit_checked(index, cq, assignment, victims, st, out);
                if let Some(h) = self.compiled.workloads[index as usize].holding.as_mut() {
                    h.fair_share_shield = shield;
                }
            }
            Nomination::NoFit(reason, message, hold) => {
                if let Some(assignment) = &hold {
                    st.holds.add(
                        &self.compiled.tree,
                        &self.compiled.cqs[cq as usize],
                        cq,
                        assignment,
                    );
                }
                self.reject(index, cq, reason, message, st, out)
            }
        }
    }

    /// Admits after re-checking, at the single point where quota is granted, that the assignment
    /// fits every level of the tree right now.
    fn admit_checked(
        &mut self,
        index: u32,
        cq: u32,
        assignment: Assignment,
        victims: Vec<super::decision::WorkloadKey>,
        st: &mut CycleState,
        out: &mut CycleOutcome,
    ) {
        if preemption::fits(&self.compiled.tree, NodeId(cq), &assignment.usage, true) {
            self.admit(index, cq, assignment, victims, out);
        } else {
            let message = Arc::from("waiting for preempted workloads to release quota");
            self.reject(
                index,
                cq,
                PendingReason::WaitingForPreemptedWorkloads,
                message,
                st,
                out,
            );
        }
    }

    fn reject(
        &mut self,
        index: u32,
        cq: u32,
        reason: PendingReason,
        message: Arc<str>,
        st: &mut CycleState,
        out: &mut CycleOutcome,
    ) {
        let root = self.root_of(cq);
        self.set_pending(index, reason, &message, out);
        let class = self.compiled.workloads[index as usize].eq_class;
        st.inadmissible
            .insert(class, (self.releases[root], reason, message));
        if self.compiled.cqs[cq as usize].strategy == QueueingStrategy::StrictFifo {
            self.block_rest(cq, index, st, out);
        }
    }
}
