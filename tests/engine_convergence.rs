//! Runs that Kueue's rules alone would never settle, found by the property tests and kept here as
//! fixed examples: every one must reach a stable state with no workload pair evicting each other.

mod engine_support;

use engine_support::*;
use kuota::engine::model::*;
use kuota::engine::{Engine, RunOutcome};

fn policy(
    within: WithinClusterQueue,
    reclaim: ReclaimWithinCohort,
    borrow: BorrowWithinCohortPolicy,
) -> PreemptionPolicy {
    PreemptionPolicy {
        within_cluster_queue: within,
        reclaim_within_cohort: reclaim,
        borrow_within_cohort: BorrowWithinCohort {
            policy: borrow,
            max_priority_threshold: None,
        },
    }
}

fn settles(s: &Snapshot, fair: bool) -> RunOutcome {
    let config = EngineConfig {
        fair_sharing: if fair {
            FairSharingConfig::enabled()
        } else {
            FairSharingConfig::default()
        },
        max_cycles: 50,
        ..Default::default()
    };
    let run = Engine::new(s, config).unwrap().run_until_stable();
    assert!(run.stable, "{:#?}", preemptions(&run));
    let pairs = preemptions(&run);
    for (victim, preemptor, _) in &pairs {
        assert!(
            !pairs.iter().any(|(v, p, _)| v == preemptor && p == victim),
            "{pairs:?}"
        );
    }
    run
}

#[test]
fn borrowing_preemptor_does_not_push_the_victims_cohort_under_its_quota() {
    // q3's cohort c1 holds 2 of its own; w3 uses 4 there. w101 borrows everything it uses. Taking
    // w3 would leave c1 under its quota, so c1 could reclaim it straight back.
    use BorrowWithinCohortPolicy as B;
    use ReclaimWithinCohort as R;
    use WithinClusterQueue as W;
    let mut q1 = cq(
        "q1",
        Some("root"),
        vec![cpu_group("f0", quota_limits("cpu", "0", None, Some("0")))],
    );
    q1.preemption = policy(W::LowerPriority, R::Any, B::LowerPriority);
    let mut q2 = cq(
        "q2",
        Some("c0"),
        vec![cpu_group(
            "f0",
            quota_limits("cpu", "4", Some("2"), Some("1")),
        )],
    );
    q2.queueing_strategy = QueueingStrategy::StrictFifo;
    q2.preemption = policy(W::Never, R::LowerPriority, B::LowerPriority);
    q2.preemption.borrow_within_cohort.max_priority_threshold = Some(2);
    let mut q3 = cq("q3", Some("c1"), vec![cpu_group("f0", quota("cpu", "0"))]);
    q3.preemption = policy(W::LowerPriority, R::Any, B::LowerPriority);
    let mut w3 = admitted(wl("w3", "q3", 1, 3, "2", 2), "q3", "f0");
    w3.pod_sets[0].min_count = Some(1);
    let s = snapshot(
        vec![flavor("f0")],
        vec![q1, q2, q3],
        vec![
            cohort("root", None, vec![cpu_group("f0", quota("cpu", "1"))]),
            cohort(
                "c0",
                Some("root"),
                vec![cpu_group("f0", quota_limits("cpu", "2", Some("3"), None))],
            ),
            cohort("c1", Some("c0"), vec![cpu_group("f0", quota("cpu", "2"))]),
        ],
        vec![
            admitted(wl("w0", "q2", 0, 0, "1", 1), "q2", "f0"),
            admitted(wl("w1", "q2", 0, 1, "1", 1), "q2", "f0"),
            admitted(wl("w2", "q2", 0, 2, "1", 1), "q2", "f0"),
            w3,
            wl("w100", "q3", 0, 100, "2", 1),
            wl("w101", "q1", 2, 101, "2", 2),
        ],
    );
    let run = settles(&s, false);
    assert!(is_admitted(&run, "w3"));
    assert!(preemptions(&run).is_empty());
}

#[test]
fn a_borrower_with_an_infinite_share_never_preempts_by_fair_sharing() {
    // Both queues borrow with weight 0, so both shares are infinite, before and after the
    // preemption; Kueue compares +Inf <= +Inf and lets a borrower with an infinite share evict.
    use BorrowWithinCohortPolicy as B;
    use ReclaimWithinCohort as R;
    use WithinClusterQueue as W;
    let mut q1 = cq("q1", Some("pool"), vec![cpu_group("f0", quota("cpu", "2"))]);
    q1.preemption = policy(W::LowerPriority, R::Never, B::Never);
    q1.fair_sharing_weight = Some(q("0"));
    let mut q2 = q1.clone();
    q2.name = "q2".into();
    q2.preemption.reclaim_within_cohort = R::Any;
    let s = snapshot(
        vec![flavor("f0")],
        vec![q1, q2],
        vec![cohort(
            "pool",
            None,
            vec![cpu_group("f0", quota("cpu", "4"))],
        )],
        vec![
            admitted(wl("first", "q1", 0, 0, "3", 1), "q1", "f0"),
            admitted(wl("first-b", "q1", 0, 0, "3", 1), "q1", "f0"),
            wl("second", "q2", 0, 1, "3", 1),
        ],
    );
    let run = settles(&s, true);
    assert!(is_admitted(&run, "first"));
    assert!(preemptions(&run).is_empty());
}

#[test]
fn fair_sharing_does_not_keep_a_victim_whose_reason_was_minimised_away() {
    // Once, w100 (q0) took w101's place by fair sharing; w101 then evicted its own w103, which put
    // q1 within nominal and so justified reclaiming w100; minimising dropped w103 but kept w100,
    // whose eviction was then no longer justified, and the two took turns.
    use BorrowWithinCohortPolicy as B;
    use ReclaimWithinCohort as R;
    use WithinClusterQueue as W;
    let two = |f0: ResourceQuota, f1: &str| {
        vec![group(
            &["cpu"],
            vec![("f0", vec![f0]), ("f1", vec![quota("cpu", f1)])],
        )]
    };
    let mut q0 = cq("q0", Some("c0"), two(quota("cpu", "3"), "1"));
    q0.preemption = policy(W::LowerOrNewerEqualPriority, R::Any, B::LowerPriority);
    let mut q1 = cq(
        "q1",
        Some("c0"),
        two(quota_limits("cpu", "2", None, Some("0")), "5"),
    );
    q1.preemption = policy(W::LowerPriority, R::Any, B::LowerPriority);
    let mut c0 = cohort(
        "c0",
        Some("root"),
        vec![cpu_group("f0", quota_limits("cpu", "2", Some("1"), None))],
    );
    c0.fair_sharing_weight = Some(q("2"));
    let partial = |mut w: Workload| {
        w.pod_sets[0].min_count = Some(1);
        w
    };
    let s = snapshot(
        vec![flavor("f0"), flavor("f1")],
        vec![q0, q1],
        vec![
            cohort("root", None, vec![cpu_group("f0", quota("cpu", "1"))]),
            c0,
        ],
        vec![
            admitted(wl("w0", "q0", 3, 0, "2", 1), "q0", "f0"),
            admitted(wl("w1", "q1", 0, 1, "2", 1), "q1", "f0"),
            admitted(wl("w2", "q1", 3, 2, "1", 1), "q1", "f0"),
            wl("w100", "q0", 3, 100, "4", 1),
            wl("w101", "q1", 3, 101, "2", 2),
            wl("w102", "q0", 1, 102, "2", 2),
            partial(wl("w103", "q1", 0, 103, "1", 2)),
            partial(wl("w104", "q1", 2, 104, "1", 2)),
            wl("w105", "q0", 0, 105, "4", 2),
        ],
    );
    settles(&s, true);
}

#[test]
fn a_chain_of_preemptions_through_several_queues_ends() {
    // Without the preemption credit this went round for ever: w104 (q1) takes w101's place by fair
    // sharing, w101 evicts the newer w102 of equal priority in q0, w102 comes back evicting w105 and
    // w100 (q1), w100 evicts w104, and so on.
    let mut q0 = cq(
        "q0",
        Some("root"),
        vec![cpu_group(
            "f0",
            quota_limits("cpu", "6", Some("3"), Some("3")),
        )],
    );
    q0.queueing_strategy = QueueingStrategy::StrictFifo;
    q0.preemption.within_cluster_queue = WithinClusterQueue::LowerOrNewerEqualPriority;
    q0.preemption.reclaim_within_cohort = ReclaimWithinCohort::Any;
    q0.fair_sharing_weight = Some(q("2"));
    let mut q1 = cq(
        "q1",
        Some("root"),
        vec![group(
            &["cpu"],
            vec![
                ("f0", vec![quota_limits("cpu", "0", Some("4"), Some("0"))]),
                ("f1", vec![quota("cpu", "4")]),
            ],
        )],
    );
    q1.preemption.within_cluster_queue = WithinClusterQueue::LowerOrNewerEqualPriority;
    q1.preemption.reclaim_within_cohort = ReclaimWithinCohort::Any;
    let partial = |mut w: Workload| {
        w.pod_sets[0].min_count = Some(1);
        w
    };
    let s = snapshot(
        vec![flavor("f0"), flavor("f1")],
        vec![q0, q1],
        vec![cohort(
            "root",
            None,
            vec![cpu_group("f0", quota("cpu", "3"))],
        )],
        vec![
            admitted(wl("w0", "q1", 3, 0, "4", 1), "q1", "f0"),
            wl("w100", "q1", 1, 100, "2", 1),
            wl("w101", "q0", 2, 101, "1", 1),
            partial(wl("w102", "q0", 2, 102, "4", 2)),
            partial(wl("w103", "q1", 3, 103, "4", 2)),
            partial(wl("w104", "q1", 1, 104, "1", 2)),
            wl("w105", "q0", 1, 105, "3", 2),
        ],
    );
    settles(&s, true);
}

#[test]
fn a_queue_borrowing_only_for_this_cycles_admissions_is_not_reclaimed_from() {
    // w101 (q2) took w2's place by reclaiming from q1. w0 (q2) then came back in the same cycle that
    // w2 reclaimed, borrowing for q2; w0 was no candidate (admitted this cycle), so w2 evicted the
    // older w101 and the two had evicted each other.
    let two = |f0: ResourceQuota, f1: &str| {
        vec![group(
            &["cpu"],
            vec![("f0", vec![f0]), ("f1", vec![quota("cpu", f1)])],
        )]
    };
    let mut q0 = cq(
        "q0",
        Some("c0"),
        vec![cpu_group("f0", quota_limits("cpu", "5", Some("0"), None))],
    );
    q0.preemption.reclaim_within_cohort = ReclaimWithinCohort::LowerPriority;
    let mut q1 = cq(
        "q1",
        Some("c1"),
        two(quota_limits("cpu", "4", Some("2"), None), "4"),
    );
    q1.preemption = policy(
        WithinClusterQueue::LowerPriority,
        ReclaimWithinCohort::Any,
        BorrowWithinCohortPolicy::Never,
    );
    let mut q2 = cq(
        "q2",
        Some("c1"),
        two(quota_limits("cpu", "0", Some("1"), None), "5"),
    );
    q2.queueing_strategy = QueueingStrategy::StrictFifo;
    q2.preemption = policy(
        WithinClusterQueue::LowerPriority,
        ReclaimWithinCohort::LowerPriority,
        BorrowWithinCohortPolicy::LowerPriority,
    );
    q2.preemption.borrow_within_cohort.max_priority_threshold = Some(0);
    let mut w2 = admitted(wl("w2", "q1", 1, 2, "3", 2), "q1", "f1");
    w2.pod_sets[0].min_count = Some(1);
    let s = snapshot(
        vec![flavor("f0"), flavor("f1")],
        vec![q0, q1, q2],
        vec![
            cohort("root", None, vec![cpu_group("f0", quota("cpu", "3"))]),
            cohort(
                "c0",
                Some("root"),
                vec![cpu_group(
                    "f0",
                    quota_limits("cpu", "0", Some("0"), Some("4")),
                )],
            ),
            cohort("c1", Some("root"), vec![cpu_group("f0", quota("cpu", "2"))]),
        ],
        vec![
            admitted(wl("w0", "q2", 0, 0, "2", 1), "q2", "f1"),
            wl("w1", "q1", 1, 1, "4", 2),
            w2,
            admitted(wl("w3", "q1", 3, 3, "3", 2), "q1", "f0"),
            admitted(wl("w4", "q1", 0, 4, "1", 1), "q1", "f1"),
            wl("w100", "q2", 0, 100, "1", 1),
            wl("w101", "q2", 2, 101, "4", 1),
        ],
    );
    let run = settles(&s, false);
    assert!(is_admitted(&run, "w101"));
}
