//! Property tests for the admission engine (issue item 5): quota limits hold at every level of the
//! cohort tree after every admission; the same snapshot gives the same decisions; every victim is
//! allowed by the policy and needed; no workload pair evicts each other back and forth.
//!
//! Each case first runs a random snapshot to stability, then turns the result into admitted input
//! workloads and adds a second wave of pending ones, often with higher priorities, so preemption is
//! exercised from a consistent starting point.

mod engine_support;

use std::collections::{BTreeMap, HashMap};

use engine_support::cases::*;
use kuota::engine::decision::{AdmissionDecision, Event};
use kuota::engine::model::*;
use kuota::engine::{Engine, PreemptionReason, WorkloadKey, WorkloadStatus};
use proptest::prelude::*;

/// The snapshot after the first run: admitted workloads become admitted input, plus the second wave.
fn second_snapshot(case: &Case) -> Snapshot {
    let run = Engine::new(&case.first, case.config.clone())
        .unwrap()
        .run_until_stable();
    let mut snapshot = case.first.clone();
    for (w, state) in snapshot.workloads.iter_mut().zip(&run.workloads) {
        if let WorkloadStatus::Admitted(a) = &state.status {
            w.admission = Some(a.clone());
            w.quota_reserved_at = Some(w.creation);
        }
    }
    snapshot.workloads.extend(case.second_wave.iter().cloned());
    snapshot
}

/// An independent statement of Kueue's hierarchical quota rules: with usage bubbling beyond each node's local
/// quota, no root uses more than its subtree quota and no node more than its subtree quota plus its
/// borrowing limit.
fn quota_violation(s: &Snapshot, admitted: &BTreeMap<WorkloadKey, Admission>) -> Option<String> {
    let mut parent: HashMap<String, Option<String>> = HashMap::new();
    let mut own: HashMap<(String, String), ResourceQuota> = HashMap::new();
    let mut record = |node: &str, groups: &[ResourceGroup]| {
        for f in groups.iter().flat_map(|g| &g.flavors) {
            for r in &f.resources {
                own.insert((node.to_string(), f.name.clone()), r.clone());
            }
        }
    };
    for c in &s.cohorts {
        parent.insert(c.name.clone(), c.parent.clone());
        record(&c.name, &c.resource_groups);
    }
    for q in &s.cluster_queues {
        parent.insert(q.name.clone(), q.cohort.clone());
        record(&q.name, &q.resource_groups);
    }
    for flavor in ["f0", "f1"] {
        let nodes: Vec<String> = parent.keys().cloned().collect();
        let children = |n: &str| {
            nodes
                .iter()
                .filter(|c| parent[*c].as_deref() == Some(n))
                .cloned()
                .collect::<Vec<_>>()
        };
        fn subtree(
            n: &str,
            flavor: &str,
            own: &HashMap<(String, String), ResourceQuota>,
            children: &dyn Fn(&str) -> Vec<String>,
            parent: &HashMap<String, Option<String>>,
        ) -> (i128, i128) {
            let q = own.get(&(n.to_string(), flavor.to_string()));
            let mut total = q.map_or(0, |q| q.nominal_quota.nanos());
            for c in children(n) {
                let (s, l) = subtree(&c, flavor, own, children, parent);
                total += s - l;
            }
            let local = match (
                q.and_then(|q| q.lending_limit),
                parent.get(n).cloned().flatten(),
            ) {
                (Some(l), Some(_)) => (total - l.nanos()).max(0),
                _ => 0,
            };
            (total, local)
        }
        fn usage(
            n: &str,
            flavor: &str,
            own: &HashMap<(String, String), ResourceQuota>,
            children: &dyn Fn(&str) -> Vec<String>,
            parent: &HashMap<String, Option<String>>,
            direct: &HashMap<String, i128>,
        ) -> i128 {
            let mut total = direct.get(n).copied().unwrap_or(0);
            for c in children(n) {
                let (_, local) = subtree(&c, flavor, own, children, parent);
                total += (usage(&c, flavor, own, children, parent, direct) - local).max(0);
            }
            total
        }
        let mut direct: HashMap<String, i128> = HashMap::new();
        for a in admitted.values() {
            for psa in &a.pod_set_assignments {
                if psa.flavors.get("cpu").map(String::as_str) == Some(flavor) {
                    *direct.entry(a.cluster_queue.clone()).or_default() +=
                        psa.resource_usage["cpu"].nanos();
                }
            }
        }
        for n in &nodes {
            let (sub, _) = subtree(n, flavor, &own, &children, &parent);
            let used = usage(n, flavor, &own, &children, &parent, &direct);
            let limit = match parent[n] {
                None => Some(sub),
                Some(_) => own
                    .get(&(n.clone(), flavor.to_string()))
                    .and_then(|q| q.borrowing_limit)
                    .map(|b| sub + b.nanos()),
            };
            if let Some(limit) = limit
                && used > limit
            {
                return Some(format!("{n} uses {used} of {flavor}, limit {limit}"));
            }
        }
    }
    None
}

fn queue_of<'a>(s: &'a Snapshot, w: &Workload) -> &'a ClusterQueue {
    let lq = s
        .local_queues
        .iter()
        .find(|q| q.name == w.queue_name)
        .unwrap();
    s.cluster_queues
        .iter()
        .find(|c| c.name == lq.cluster_queue)
        .unwrap()
}

/// Whether `queue` uses more cpu than its nominal quota in one of `flavors`.
fn cpu_over_nominal(
    s: &Snapshot,
    queue: &str,
    flavors: &[String],
    admitted: &BTreeMap<WorkloadKey, Admission>,
) -> bool {
    let q = s.cluster_queues.iter().find(|c| c.name == queue).unwrap();
    q.resource_groups[0]
        .flavors
        .iter()
        .filter(|f| flavors.contains(&f.name))
        .any(|f| {
            let used: i128 = admitted
                .values()
                .filter(|a| a.cluster_queue == queue)
                .flat_map(|a| &a.pod_set_assignments)
                .filter(|p| p.flavors.get("cpu") == Some(&f.name))
                .map(|p| p.resource_usage["cpu"].nanos())
                .sum();
            used > f.resources[0].nominal_quota.nanos()
        })
}

fn allowed(
    s: &Snapshot,
    config: &EngineConfig,
    preemptor: &Workload,
    victim: &Workload,
    reason: PreemptionReason,
) -> bool {
    let policy = queue_of(s, preemptor).preemption;
    let same = queue_of(s, preemptor).name == queue_of(s, victim).name;
    let (p, v) = (preemptor.priority, victim.priority);
    let reclaim = match policy.reclaim_within_cohort {
        ReclaimWithinCohort::Never => false,
        ReclaimWithinCohort::LowerPriority => p > v,
        ReclaimWithinCohort::Any => true,
    };
    match reason {
        PreemptionReason::InClusterQueue => {
            same && match policy.within_cluster_queue {
                WithinClusterQueue::Never => false,
                WithinClusterQueue::LowerPriority => p > v,
                WithinClusterQueue::LowerOrNewerEqualPriority => {
                    p > v || p == v && preemptor.creation < victim.creation
                }
            }
        }
        PreemptionReason::InCohortReclamation | PreemptionReason::InCohortFairSharing => {
            !same && reclaim
        }
        PreemptionReason::InCohortReclaimWhileBorrowing => {
            let b = policy.borrow_within_cohort;
            !same
                && !config.fair_sharing.enabled
                && reclaim
                && b.policy == BorrowWithinCohortPolicy::LowerPriority
                && v < p
                && b.max_priority_threshold.is_none_or(|t| v <= t)
        }
    }
}

/// Runs `snapshot` cycle by cycle, checking every property; returns the event log.
fn check_run(snapshot: &Snapshot, config: &EngineConfig) -> Result<Vec<Event>, TestCaseError> {
    let by_key: HashMap<WorkloadKey, &Workload> = snapshot
        .workloads
        .iter()
        .map(|w| (WorkloadKey::new(&w.namespace, &w.name), w))
        .collect();
    let mut state: BTreeMap<WorkloadKey, Admission> = snapshot
        .workloads
        .iter()
        .filter_map(|w| {
            w.admission
                .clone()
                .map(|a| (WorkloadKey::new(&w.namespace, &w.name), a))
        })
        .collect();
    prop_assert_eq!(quota_violation(snapshot, &state), None);
    let mut engine = Engine::new(snapshot, config.clone()).unwrap();
    let mut stable = false;
    for _ in 0..config.max_cycles {
        let before = engine.events().len();
        let outcome = engine.cycle();
        let decisions: HashMap<&WorkloadKey, &AdmissionDecision> =
            outcome.admitted.iter().map(|a| (&a.workload, a)).collect();
        let mut evicted: HashMap<WorkloadKey, Admission> = HashMap::new();
        for event in &engine.events()[before..] {
            match event {
                Event::Evicted { workload, .. } => {
                    let held = state.remove(workload);
                    prop_assert!(held.is_some(), "{workload} evicted without holding quota");
                    evicted.insert(workload.clone(), held.unwrap_or_default());
                }
                Event::Preempted {
                    victim,
                    preemptor,
                    reason,
                    ..
                } => {
                    prop_assert!(
                        allowed(snapshot, config, by_key[preemptor], by_key[victim], *reason),
                        "{preemptor} may not preempt {victim} ({reason})"
                    );
                }
                Event::Admitted { workload, .. } => {
                    let decision = decisions[workload];
                    let queue = decision.admission.cluster_queue.clone();
                    let flavors: Vec<String> = decision
                        .admission
                        .pod_set_assignments
                        .iter()
                        .filter_map(|p| p.flavors.get("cpu").cloned())
                        .collect();
                    let over_before = cpu_over_nominal(snapshot, &queue, &flavors, &state);
                    state.insert(workload.clone(), decision.admission.clone());
                    prop_assert_eq!(
                        quota_violation(snapshot, &state),
                        None,
                        "after admitting {}",
                        workload
                    );
                    let over_nominal = cpu_over_nominal(snapshot, &queue, &flavors, &state);
                    for victim in &decision.preempted {
                        let mut with_victim = state.clone();
                        with_victim.insert(victim.clone(), evicted[victim].clone());
                        let needed = quota_violation(snapshot, &with_victim).is_some()
                            || !over_nominal
                                && !over_before
                                && cpu_over_nominal(snapshot, &queue, &flavors, &with_victim);
                        prop_assert!(needed, "{} did not need to preempt {}", workload, victim);
                    }
                }
            }
        }
        if !outcome.changed_anything() {
            stable = true;
            break;
        }
    }
    prop_assert!(
        stable,
        "no stable state within {} cycles",
        config.max_cycles
    );
    Ok(engine.events().to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn quota_holds_victims_are_allowed_and_needed(case in case_strategy()) {
        check_run(&case.first, &case.config)?;
        check_run(&second_snapshot(&case), &case.config)?;
    }

    #[test]
    fn same_snapshot_same_decisions(case in case_strategy()) {
        let snapshot = second_snapshot(&case);
        let once = Engine::new(&snapshot, case.config.clone()).unwrap().run_until_stable();
        let twice = Engine::new(&snapshot, case.config.clone()).unwrap().run_until_stable();
        prop_assert_eq!(once, twice);
    }

    #[test]
    fn no_preemption_loops(case in case_strategy()) {
        let events = check_run(&second_snapshot(&case), &case.config)?;
        let pairs: Vec<(&WorkloadKey, &WorkloadKey)> = events
            .iter()
            .filter_map(|e| match e {
                Event::Preempted { victim, preemptor, .. } => Some((victim, preemptor)),
                _ => None,
            })
            .collect();
        for (i, (victim, preemptor)) in pairs.iter().enumerate() {
            prop_assert!(
                !pairs[i..].iter().any(|(v, p)| v == preemptor && p == victim),
                "{} evicted {} and was then evicted by it", preemptor, victim
            );
        }
    }
}
