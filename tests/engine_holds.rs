//! C.1 step 5: a workload that needs preemption but finds no victims holds the quota its
//! ClusterQueue is owed for the rest of the cycle when the queue cannot always reclaim it, so lower
//! workloads of other queues cannot take it; the hold never outlives the cycle.

mod engine_support;

use engine_support::*;
use kuota::engine::model::*;
use kuota::engine::{Engine, RunOutcome};

/// Cohort `pool`: a and b own 4 CPUs each, c owns none. b runs `b-1` (6 CPUs, priority 1000), so 2
/// CPUs are free. `a-1` (4 CPUs, priority 100) may reclaim only lower priorities: no victims.
/// `c-1` (2 CPUs) would fit by borrowing.
fn pool(
    reclaim: ReclaimWithinCohort,
    strategy: QueueingStrategy,
    extra: Vec<Workload>,
) -> Snapshot {
    let mut a = cq(
        "a",
        Some("pool"),
        vec![cpu_group("default", quota("cpu", "4"))],
    );
    a.preemption.reclaim_within_cohort = reclaim;
    a.queueing_strategy = strategy;
    let b = cq(
        "b",
        Some("pool"),
        vec![cpu_group("default", quota("cpu", "4"))],
    );
    let c = cq(
        "c",
        Some("pool"),
        vec![cpu_group("default", quota("cpu", "0"))],
    );
    let mut workloads = vec![
        admitted(wl("b-1", "b", 1000, 0, "2", 3), "b", "default"),
        wl("a-1", "a", 100, 1, "1", 4),
        wl("c-1", "c", 0, 2, "1", 2),
    ];
    workloads.extend(extra);
    snapshot(vec![flavor("default")], vec![a, b, c], vec![], workloads)
}

fn settle(s: &Snapshot) -> (Engine, RunOutcome) {
    let mut engine = Engine::new(s, EngineConfig::default()).unwrap();
    let run = engine.run_until_stable();
    assert!(run.stable);
    (engine, run)
}

#[test]
fn a_queue_that_may_not_reclaim_holds_its_nominal_quota_from_other_queues() {
    let (_, run) = settle(&pool(
        ReclaimWithinCohort::LowerPriority,
        QueueingStrategy::StrictFifo,
        vec![],
    ));
    assert_eq!(pending(&run, "a-1").0, "WaitingForQuota");
    assert_eq!(pending(&run, "c-1").0, "WaitingForQuota");
    assert!(is_admitted(&run, "b-1"));
}

#[test]
fn a_queue_that_can_always_reclaim_holds_nothing() {
    // a runs a-0 (2 CPUs), b runs b-1 at its nominal 4, c borrows 1 for c-0: 1 CPU is free. a-1
    // (4 CPUs) could take back c-0, but that frees only 2: no victims. c-2 (1 CPU) fits in the free
    // CPU unless a holds it.
    let scenario = |reclaim| {
        let mut a = cq(
            "a",
            Some("pool"),
            vec![cpu_group("default", quota("cpu", "4"))],
        );
        a.preemption.reclaim_within_cohort = reclaim;
        a.queueing_strategy = QueueingStrategy::StrictFifo;
        let b = cq(
            "b",
            Some("pool"),
            vec![cpu_group("default", quota("cpu", "4"))],
        );
        let c = cq(
            "c",
            Some("pool"),
            vec![cpu_group("default", quota("cpu", "0"))],
        );
        let workloads = vec![
            admitted(wl("a-0", "a", 1000, 0, "2", 1), "a", "default"),
            admitted(wl("b-1", "b", 1000, 0, "4", 1), "b", "default"),
            admitted(wl("c-0", "c", 0, 0, "1", 1), "c", "default"),
            wl("a-1", "a", 100, 1, "4", 1),
            wl("c-2", "c", 0, 2, "1", 1),
        ];
        settle(&snapshot(
            vec![flavor("default")],
            vec![a, b, c],
            vec![],
            workloads,
        ))
        .1
    };
    let any = scenario(ReclaimWithinCohort::Any);
    assert_eq!(pending(&any, "a-1").0, "WaitingForQuota");
    assert!(is_admitted(&any, "c-2"), "Any: nothing is held");
    let lower = scenario(ReclaimWithinCohort::LowerPriority);
    assert_eq!(pending(&lower, "a-1").0, "WaitingForQuota");
    assert_eq!(pending(&lower, "c-2").0, "WaitingForQuota");
    assert!(is_admitted(&lower, "c-0"));
}

#[test]
fn the_hold_ends_with_the_cycle() {
    let (mut engine, run) = settle(&pool(
        ReclaimWithinCohort::LowerPriority,
        QueueingStrategy::StrictFifo,
        vec![],
    ));
    assert!(!is_admitted(&run, "c-1"));
    // Once a-1 is gone nothing holds the 2 free CPUs: c-1 gets them in the next cycle.
    assert!(engine.finish(&key("a-1")));
    engine.requeue_inadmissible();
    let outcome = engine.cycle();
    let admitted: Vec<String> = outcome
        .admitted
        .iter()
        .map(|a| a.workload.name.clone())
        .collect();
    assert_eq!(admitted, ["c-1"]);
}

#[test]
fn a_hold_does_not_keep_out_the_queues_own_later_workloads() {
    // Best-effort: a-2 (2 CPUs) queues behind a-1 in the same queue and fits in the free 2 CPUs;
    // Kueue would admit it in a later cycle, once a-1 is inadmissible and its hold gone.
    let (_, run) = settle(&pool(
        ReclaimWithinCohort::LowerPriority,
        QueueingStrategy::BestEffortFifo,
        vec![wl("a-2", "a", 100, 3, "1", 2)],
    ));
    assert_eq!(pending(&run, "a-1").0, "WaitingForQuota");
    assert!(is_admitted(&run, "a-2"));
    assert_eq!(pending(&run, "c-1").0, "WaitingForQuota");
}
