//! The reference's preemption examples on the engine's model: each withinClusterQueue,
//! reclaimWithinCohort and borrowWithinCohort policy, hierarchical reclaim, minimal victim sets, and
//! fair sharing (tournament and both preemption strategies).

mod engine_support;

use engine_support::*;
use kuota::engine::model::*;
use kuota::engine::{Engine, RunOutcome, run_until_stable};

fn settle(s: &Snapshot, config: EngineConfig) -> RunOutcome {
    let out = run_until_stable(s, config).unwrap();
    assert!(out.stable);
    out
}

fn classic(s: &Snapshot) -> RunOutcome {
    settle(s, EngineConfig::default())
}

fn fair(s: &Snapshot) -> RunOutcome {
    settle(
        s,
        EngineConfig {
            fair_sharing: FairSharingConfig::enabled(),
            ..Default::default()
        },
    )
}

fn single_queue(within: WithinClusterQueue, workloads: Vec<Workload>) -> Snapshot {
    let mut queue = cq("a", None, vec![cpu_group("default", quota("cpu", "10"))]);
    queue.preemption.within_cluster_queue = within;
    snapshot(vec![flavor("default")], vec![queue], vec![], workloads)
}

#[test]
fn within_cluster_queue_lower_priority() {
    let workloads = vec![
        admitted(wl("low", "a", 0, 1, "8", 1), "a", "default"),
        wl("high", "a", 10, 2, "6", 1),
        wl("same", "a", 0, 3, "6", 1),
    ];
    let run = classic(&single_queue(
        WithinClusterQueue::LowerPriority,
        workloads.clone(),
    ));
    assert_eq!(
        preemptions(&run),
        vec![("low".into(), "high".into(), "InClusterQueue".into())]
    );
    assert!(is_admitted(&run, "high"));
    assert_eq!(pending(&run, "low").0, "WaitingForQuota");
    let victim = run
        .workloads
        .iter()
        .find(|w| w.workload == key("low"))
        .unwrap();
    let eviction = victim.last_eviction.as_ref().unwrap();
    assert_eq!(eviction.reason.as_str(), "Preempted");
    assert_eq!(
        eviction.message,
        "Preempted to accommodate a workload (UID: uid-high, JobUID: UNKNOWN) due to prioritization in the ClusterQueue; preemptor path: /a; preemptee path: /a"
    );

    let run = classic(&single_queue(WithinClusterQueue::Never, workloads));
    assert!(preemptions(&run).is_empty());
    assert_eq!(pending(&run, "high").0, "WaitingForQuota");
}

#[test]
fn within_cluster_queue_lower_or_newer_equal_priority() {
    let workloads = vec![
        admitted(wl("newer", "a", 0, 5, "8", 1), "a", "default"),
        wl("older", "a", 0, 1, "6", 1),
    ];
    let run = classic(&single_queue(
        WithinClusterQueue::LowerOrNewerEqualPriority,
        workloads.clone(),
    ));
    assert_eq!(
        preemptions(&run),
        vec![("newer".into(), "older".into(), "InClusterQueue".into())]
    );
    let run = classic(&single_queue(WithinClusterQueue::LowerPriority, workloads));
    assert!(preemptions(&run).is_empty());
}

#[test]
fn victims_are_a_minimal_set_in_candidate_order() {
    let mut big = admitted(wl("big", "a", 0, 1, "4", 1), "a", "default");
    big.quota_reserved_at = Some(10);
    let mut mid = admitted(wl("mid", "a", 0, 2, "4", 1), "a", "default");
    mid.quota_reserved_at = Some(11);
    let mut small = admitted(wl("small", "a", 0, 3, "2", 1), "a", "default");
    small.quota_reserved_at = Some(12);
    let s = single_queue(
        WithinClusterQueue::LowerPriority,
        vec![big, mid, small, wl("urgent", "a", 5, 4, "4", 1)],
    );
    let run = classic(&s);
    // Candidates go most recently reserved first: small (not enough alone), then mid; small is
    // then found unnecessary and kept.
    assert_eq!(
        preemptions(&run),
        vec![("mid".into(), "urgent".into(), "InClusterQueue".into())]
    );
    assert!(is_admitted(&run, "small"));
}

fn cohort_pair(
    reclaim: ReclaimWithinCohort,
    borrow: BorrowWithinCohort,
    a_nominal: &str,
    workloads: Vec<Workload>,
) -> Snapshot {
    let mut a = cq(
        "a",
        Some("pool"),
        vec![cpu_group("default", quota("cpu", a_nominal))],
    );
    a.preemption.reclaim_within_cohort = reclaim;
    a.preemption.borrow_within_cohort = borrow;
    let b = cq(
        "b",
        Some("pool"),
        vec![cpu_group("default", quota("cpu", "6"))],
    );
    snapshot(vec![flavor("default")], vec![a, b], vec![], workloads)
}

#[test]
fn reclaim_within_cohort_policies() {
    let workloads = |b_priority| {
        vec![
            admitted(wl("borrower", "b", b_priority, 1, "10", 1), "b", "default"),
            wl("owner", "a", 1, 2, "4", 1),
        ]
    };
    let never = BorrowWithinCohort::default();
    let run = classic(&cohort_pair(
        ReclaimWithinCohort::Any,
        never,
        "6",
        workloads(5),
    ));
    assert_eq!(
        preemptions(&run),
        vec![(
            "borrower".into(),
            "owner".into(),
            "InCohortReclamation".into()
        )]
    );
    assert!(is_admitted(&run, "owner"));
    let message = &run
        .workloads
        .iter()
        .find(|w| w.workload == key("borrower"))
        .unwrap()
        .last_eviction
        .as_ref()
        .unwrap()
        .message;
    assert!(
        message.ends_with("preemptor path: /pool/a; preemptee path: /pool/b"),
        "{message}"
    );

    let run = classic(&cohort_pair(
        ReclaimWithinCohort::LowerPriority,
        never,
        "6",
        workloads(5),
    ));
    assert!(preemptions(&run).is_empty());
    assert_eq!(pending(&run, "owner").0, "WaitingForQuota");
    let run = classic(&cohort_pair(
        ReclaimWithinCohort::LowerPriority,
        never,
        "6",
        workloads(0),
    ));
    assert_eq!(preemptions(&run).len(), 1);
    let run = classic(&cohort_pair(
        ReclaimWithinCohort::Never,
        never,
        "6",
        workloads(0),
    ));
    assert!(preemptions(&run).is_empty());
}

#[test]
fn borrow_within_cohort_with_threshold() {
    // a (nominal 4) wants 5, so it must borrow; b (nominal 6) is borrowing 2 with a low-priority job.
    let workloads = || {
        vec![
            admitted(wl("lender-job", "b", 0, 1, "8", 1), "b", "default"),
            wl("borrower", "a", 10, 2, "5", 1),
        ]
    };
    let policy = |threshold| BorrowWithinCohort {
        policy: BorrowWithinCohortPolicy::LowerPriority,
        max_priority_threshold: threshold,
    };
    let run = classic(&cohort_pair(
        ReclaimWithinCohort::LowerPriority,
        policy(None),
        "4",
        workloads(),
    ));
    assert_eq!(
        preemptions(&run),
        vec![(
            "lender-job".into(),
            "borrower".into(),
            "InCohortReclaimWhileBorrowing".into()
        )]
    );
    let run = classic(&cohort_pair(
        ReclaimWithinCohort::LowerPriority,
        policy(Some(-1)),
        "4",
        workloads(),
    ));
    assert!(preemptions(&run).is_empty());
    let run = classic(&cohort_pair(
        ReclaimWithinCohort::LowerPriority,
        BorrowWithinCohort::default(),
        "4",
        workloads(),
    ));
    assert!(preemptions(&run).is_empty());
    assert_eq!(pending(&run, "borrower").0, "WaitingForQuota");
}

#[test]
fn hierarchical_reclaim_takes_back_lent_quota() {
    let mut b = cq(
        "b",
        Some("team-b"),
        vec![cpu_group("default", quota("cpu", "2"))],
    );
    b.preemption.reclaim_within_cohort = ReclaimWithinCohort::Any;
    let mut a_first = admitted(wl("a-first", "a", 0, 1, "6", 1), "a", "default");
    a_first.quota_reserved_at = Some(1);
    let mut a_second = admitted(wl("a-second", "a", 0, 2, "2", 1), "a", "default");
    a_second.quota_reserved_at = Some(2);
    let s = snapshot(
        vec![flavor("default")],
        vec![
            cq(
                "a",
                Some("team-a"),
                vec![cpu_group("default", quota("cpu", "2"))],
            ),
            b,
        ],
        vec![
            cohort("org", None, vec![]),
            cohort(
                "team-a",
                Some("org"),
                vec![cpu_group("default", quota("cpu", "4"))],
            ),
            cohort("team-b", Some("org"), vec![]),
        ],
        vec![a_first, a_second, wl("b-own", "b", 0, 3, "2", 1)],
    );
    let run = classic(&s);
    assert_eq!(
        preemptions(&run),
        vec![(
            "a-second".into(),
            "b-own".into(),
            "InCohortReclamation".into()
        )]
    );
    assert!(is_admitted(&run, "b-own"));
    assert!(is_admitted(&run, "a-first"));
}

fn fair_pool(a_workloads: usize, b_workloads: usize) -> Snapshot {
    let mut queues = Vec::new();
    for name in ["a", "b"] {
        let mut queue = cq(
            name,
            Some("pool"),
            vec![cpu_group("default", quota("cpu", "0"))],
        );
        queue.preemption.reclaim_within_cohort = ReclaimWithinCohort::Any;
        queues.push(queue);
    }
    let mut workloads: Vec<Workload> = (0..a_workloads)
        .map(|i| {
            let mut w = admitted(
                wl(&format!("a{i}"), "a", 0, i as i64, "2", 1),
                "a",
                "default",
            );
            w.quota_reserved_at = Some(i as i64);
            w
        })
        .collect();
    workloads.extend((0..b_workloads).map(|i| wl(&format!("b{i}"), "b", 0, 10 + i as i64, "2", 1)));
    snapshot(
        vec![flavor("default")],
        queues,
        vec![cohort(
            "pool",
            None,
            vec![cpu_group("default", quota("cpu", "8"))],
        )],
        workloads,
    )
}

#[test]
fn fair_sharing_preempts_down_to_equal_shares() {
    let run = fair(&fair_pool(4, 4));
    let reasons: Vec<String> = preemptions(&run).into_iter().map(|p| p.2).collect();
    assert_eq!(reasons, vec!["InCohortFairSharing", "InCohortFairSharing"]);
    let admitted_in = |queue: &str| {
        run.workloads.iter().filter(|w| matches!(&w.status, kuota::engine::WorkloadStatus::Admitted(a) if a.cluster_queue == queue)).count()
    };
    assert_eq!((admitted_in("a"), admitted_in("b")), (2, 2));
    // Classic preemption never takes from a queue at the same level of borrowing.
    assert!(preemptions(&classic(&fair_pool(4, 4))).is_empty());
}

#[test]
fn fair_sharing_strategies_differ_at_the_boundary() {
    // b already holds 2 of 8; a holds 6. One more for b: b's new share 500 vs a's share after losing
    // one job 500 (S2-a passes) and a's current share 750 (S2-b passes too).
    let only_initial = FairSharingConfig {
        enabled: true,
        preemption_strategies: vec![FairPreemptionStrategy::LessThanInitialShare],
    };
    let mut s = fair_pool(3, 0);
    s.workloads
        .push(admitted(wl("b-running", "b", 0, 5, "2", 1), "b", "default"));
    s.workloads.push(wl("b-next", "b", 0, 20, "2", 1));
    let run = settle(
        &s,
        EngineConfig {
            fair_sharing: only_initial.clone(),
            ..Default::default()
        },
    );
    assert_eq!(preemptions(&run).len(), 1);
    // With a and b at 4 and 4, another b job would exceed a's remaining share under either rule.
    let mut s = fair_pool(2, 0);
    s.workloads
        .push(admitted(wl("b-1", "b", 0, 5, "2", 1), "b", "default"));
    s.workloads
        .push(admitted(wl("b-2", "b", 0, 6, "2", 1), "b", "default"));
    s.workloads.push(wl("b-next", "b", 0, 20, "2", 1));
    for config in [only_initial, FairSharingConfig::enabled()] {
        let run = settle(
            &s,
            EngineConfig {
                fair_sharing: config,
                ..Default::default()
            },
        );
        assert!(preemptions(&run).is_empty());
        assert_eq!(pending(&run, "b-next").0, "WaitingForQuota");
    }
}

#[test]
fn fair_sharing_tournament_prefers_the_lower_share() {
    // The pool has 3; a already uses 2. a's pending job is older, but b has the lower share.
    let mut s = fair_pool(0, 0);
    s.cohorts[0].resource_groups = vec![cpu_group("default", quota("cpu", "3"))];
    s.workloads = vec![
        admitted(wl("a-run-1", "a", 0, 0, "1", 1), "a", "default"),
        admitted(wl("a-run-2", "a", 0, 0, "1", 1), "a", "default"),
        wl("a-next", "a", 0, 1, "1", 1),
        wl("b-next", "b", 0, 2, "1", 1),
    ];
    for queue in &mut s.cluster_queues {
        queue.preemption.reclaim_within_cohort = ReclaimWithinCohort::Never;
    }
    let run = fair(&s);
    assert!(is_admitted(&run, "b-next"));
    assert!(!is_admitted(&run, "a-next"));
    let run = classic(&s);
    assert!(is_admitted(&run, "a-next"));
    assert!(!is_admitted(&run, "b-next"));
}

#[test]
fn fair_sharing_within_nominal_reclaims() {
    let mut s = fair_pool(4, 2);
    s.cohorts[0].resource_groups.clear();
    for queue in &mut s.cluster_queues {
        queue.resource_groups = vec![cpu_group("default", quota("cpu", "4"))];
    }
    let run = fair(&s);
    let reasons: Vec<String> = preemptions(&run).into_iter().map(|p| p.2).collect();
    assert_eq!(reasons, vec!["InCohortReclamation", "InCohortReclamation"]);
}

#[test]
fn a_preemption_run_ends_and_never_swaps_back() {
    let s = cohort_pair(
        ReclaimWithinCohort::Any,
        BorrowWithinCohort::default(),
        "6",
        (0..12)
            .map(|i| {
                wl(
                    &format!("w{i}"),
                    if i % 3 == 0 { "a" } else { "b" },
                    (i % 4) as i32,
                    i,
                    "2",
                    1,
                )
            })
            .collect(),
    );
    let mut engine = Engine::new(&s, EngineConfig::default()).unwrap();
    let run = engine.run_until_stable();
    let pairs = preemptions(&run);
    for (victim, preemptor, _) in &pairs {
        assert!(!pairs.iter().any(|(v, p, _)| v == preemptor && p == victim));
    }
}

#[test]
fn fair_sharing_without_candidates_in_a_queue_without_cohort_gives_up() {
    // Regression: the fair-preemption search once kept choosing a queue with no candidates.
    let mut s = single_queue(
        WithinClusterQueue::LowerPriority,
        vec![
            admitted(wl("running", "a", 0, 1, "10", 1), "a", "default"),
            wl("same", "a", 0, 2, "2", 1),
        ],
    );
    s.cluster_queues[0].cohort = None;
    let run = fair(&s);
    assert!(preemptions(&run).is_empty());
    assert_eq!(pending(&run, "same").0, "WaitingForQuota");
}
