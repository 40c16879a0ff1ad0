//! The reference's admission examples on the engine's model: borrowing, limits, queueing strategies,
//! flavor fallback, hierarchical cohorts, partial admission and misconfiguration.

mod engine_support;

use engine_support::*;
use kuota::engine::features::Feature;
use kuota::engine::model::*;
use kuota::engine::{Engine, run_until_stable};

#[test]
fn borrowing_from_the_cohort_is_reported() {
    let s = two_queues(
        quota("cpu", "10"),
        quota("cpu", "10"),
        vec![
            wl("a1", "a", 0, 1, "14", 1),
            wl("b1", "b", 0, 2, "6", 1),
            wl("b2", "b", 0, 3, "1", 1),
        ],
    );
    let mut engine = Engine::new(&s, EngineConfig::default()).unwrap();
    let first = engine.cycle();
    // Workloads that fit inside their own nominal quota go first (borrowing level 0).
    let admitted: Vec<(String, bool)> = first
        .admitted
        .iter()
        .map(|a| (a.workload.name.clone(), a.borrowing))
        .collect();
    assert_eq!(
        admitted,
        vec![("b1".to_string(), false), ("a1".to_string(), true)]
    );
    let run = engine.run_until_stable();
    assert_eq!(
        pending(&run, "b2"),
        (
            "WaitingForQuota".into(),
            "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 1 more needed".into()
        )
    );
}

#[test]
fn borrowing_limit_caps_what_a_queue_takes() {
    let s = two_queues(
        quota_limits("cpu", "10", Some("2"), None),
        quota("cpu", "10"),
        vec![
            wl("a1", "a", 0, 1, "12", 1),
            wl("a2", "a", 0, 2, "1", 1),
            wl("a3", "a", 0, 3, "13", 1),
        ],
    );
    let run = settle(&s);
    assert!(is_admitted(&run, "a1"));
    assert_eq!(pending(&run, "a2").0, "WaitingForQuota");
    assert_eq!(
        pending(&run, "a3"),
        (
            "ExceedsMaxQuota".into(),
            "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default, request > maximum capacity (13 > 12)".into()
        )
    );
}

#[test]
fn lending_limit_keeps_part_of_the_quota_private() {
    // a lends at most 4 of its 10; b has no quota of its own and already uses those 4.
    let s = two_queues(
        quota_limits("cpu", "10", None, Some("4")),
        quota("cpu", "0"),
        vec![
            admitted(wl("b-running", "b", 0, 0, "4", 1), "b", "default"),
            wl("b1", "b", 0, 1, "5", 1),
            wl("a1", "a", 0, 2, "7", 1),
            wl("a2", "a", 0, 3, "6", 1),
        ],
    );
    let run = settle(&s);
    let (reason, message) = pending(&run, "b1");
    assert_eq!(reason, "ExceedsMaxQuota");
    assert!(message.contains("(5 > 4)"), "{message}");
    let (reason, message) = pending(&run, "a1");
    assert_eq!(reason, "WaitingForQuota");
    // a2 took the private 6, so nothing is left for a1.
    assert!(message.ends_with("7 more needed"), "{message}");
    assert!(is_admitted(&run, "a2"));
}

fn fifo(strategy: QueueingStrategy) -> kuota::engine::RunOutcome {
    let mut queue = cq("a", None, vec![cpu_group("default", quota("cpu", "10"))]);
    queue.queueing_strategy = strategy;
    let s = snapshot(
        vec![flavor("default")],
        vec![queue],
        vec![],
        vec![
            admitted(wl("running", "a", 0, 0, "6", 1), "a", "default"),
            wl("big", "a", 0, 1, "6", 1),
            wl("small", "a", 0, 2, "2", 1),
        ],
    );
    settle(&s)
}

#[test]
fn best_effort_fifo_lets_smaller_workloads_pass_a_blocked_head() {
    let run = fifo(QueueingStrategy::BestEffortFifo);
    assert_eq!(pending(&run, "big").0, "WaitingForQuota");
    assert!(is_admitted(&run, "small"));
}

#[test]
fn strict_fifo_blocks_behind_the_head() {
    let run = fifo(QueueingStrategy::StrictFifo);
    assert_eq!(pending(&run, "big").0, "WaitingForQuota");
    let (reason, message) = pending(&run, "small");
    assert_eq!(reason, "PendingEvaluation");
    assert!(message.contains("default/big"), "{message}");
}

#[test]
fn ordering_is_priority_then_creation_then_uid() {
    let s = snapshot(
        vec![flavor("default")],
        vec![cq("a", None, vec![cpu_group("default", quota("cpu", "2"))])],
        vec![],
        vec![
            wl("old-low", "a", 0, 1, "1", 1),
            wl("new-high", "a", 5, 9, "1", 1),
            wl("tie-b", "a", 1, 3, "1", 1),
            wl("tie-a", "a", 1, 3, "1", 1),
        ],
    );
    let run = settle(&s);
    assert!(is_admitted(&run, "new-high"));
    assert!(is_admitted(&run, "tie-a"));
    assert!(!is_admitted(&run, "tie-b"));
    assert!(!is_admitted(&run, "old-low"));
}

fn two_flavor_queue(fungibility: FlavorFungibility, workloads: Vec<Workload>) -> Snapshot {
    let mut a = cq(
        "a",
        Some("pool"),
        vec![group(
            &["cpu"],
            vec![
                ("on-demand", vec![quota("cpu", "4")]),
                ("spot", vec![quota("cpu", "10")]),
            ],
        )],
    );
    a.flavor_fungibility = fungibility;
    let lender = cq(
        "lender",
        Some("pool"),
        vec![group(
            &["cpu"],
            vec![
                ("on-demand", vec![quota("cpu", "10")]),
                ("spot", vec![quota("cpu", "0")]),
            ],
        )],
    );
    snapshot(
        vec![flavor("on-demand"), tainted_flavor("spot", "spot", "true")],
        vec![a, lender],
        vec![],
        workloads,
    )
}

#[test]
fn flavor_fallback_follows_fungibility() {
    let mut tolerant = wl("tolerant", "a", 0, 2, "3", 1);
    tolerant.pod_sets[0].tolerations = vec![toleration("spot", "true")];
    let s = two_flavor_queue(
        FlavorFungibility::default(),
        vec![
            wl("first", "a", 0, 1, "3", 1),
            tolerant.clone(),
            wl("intolerant", "a", 0, 3, "12", 1),
        ],
    );
    let run = settle(&s);
    assert_eq!(
        placement(&run, "first"),
        Some(("a".into(), "on-demand".into()))
    );
    // MayStopSearch: on-demand fits by borrowing from the lender, so the search stops there.
    assert_eq!(
        placement(&run, "tolerant"),
        Some(("a".into(), "on-demand".into()))
    );
    let (reason, message) = pending(&run, "intolerant");
    assert_eq!(reason, "WaitingForQuota");
    assert!(
        message.contains("untolerated taint {spot true NoSchedule} in flavor spot"),
        "{message}"
    );
    assert!(
        message.contains("in flavor on-demand, 4 more needed"),
        "{message}"
    );

    let try_next = FlavorFungibility {
        when_can_borrow: FungibilityPolicy::TryNextFlavor,
        ..Default::default()
    };
    let s = two_flavor_queue(try_next, vec![wl("first", "a", 0, 1, "3", 1), tolerant]);
    let run = settle(&s);
    // TryNextFlavor: borrowing on on-demand is worse than a plain fit on spot.
    assert_eq!(
        placement(&run, "tolerant"),
        Some(("a".into(), "spot".into()))
    );
}

#[test]
fn node_selector_excludes_flavors_with_other_labels() {
    let mut zone_a = flavor("zone-a");
    zone_a.node_labels.insert("zone".into(), "a".into());
    let mut zone_b = flavor("zone-b");
    zone_b.node_labels.insert("zone".into(), "b".into());
    let queue = cq(
        "a",
        None,
        vec![group(
            &["cpu"],
            vec![
                ("zone-a", vec![quota("cpu", "10")]),
                ("zone-b", vec![quota("cpu", "10")]),
            ],
        )],
    );
    let mut pinned = wl("pinned", "a", 0, 1, "1", 1);
    pinned.pod_sets[0]
        .node_selector
        .insert("zone".into(), "b".into());
    let mut nowhere = wl("nowhere", "a", 0, 2, "1", 1);
    nowhere.pod_sets[0]
        .node_selector
        .insert("zone".into(), "c".into());
    let run = settle(&snapshot(
        vec![zone_a, zone_b],
        vec![queue],
        vec![],
        vec![pinned, nowhere],
    ));
    assert_eq!(
        placement(&run, "pinned"),
        Some(("a".into(), "zone-b".into()))
    );
    let (reason, message) = pending(&run, "nowhere");
    assert_eq!(reason, "NoMatchingFlavor");
    assert!(
        message.contains("flavor zone-a doesn't match node affinity"),
        "{message}"
    );
}

#[test]
fn hierarchical_cohorts_pool_quota_up_the_tree() {
    let s = snapshot(
        vec![flavor("default")],
        vec![
            cq(
                "a",
                Some("team-a"),
                vec![cpu_group("default", quota("cpu", "2"))],
            ),
            cq(
                "b",
                Some("team-b"),
                vec![cpu_group("default", quota("cpu", "2"))],
            ),
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
        vec![
            wl("a1", "a", 0, 1, "6", 1),
            wl("a2", "a", 0, 2, "2", 1),
            wl("a3", "a", 0, 3, "1", 1),
            wl("too-big", "a", 0, 4, "9", 1),
        ],
    );
    let run = settle(&s);
    // team-a holds 2 + 4; the org adds b's 2: a may use 8 in total.
    assert!(is_admitted(&run, "a1"));
    assert!(is_admitted(&run, "a2"));
    assert_eq!(pending(&run, "a3").0, "WaitingForQuota");
    let (reason, message) = pending(&run, "too-big");
    assert_eq!(reason, "ExceedsMaxQuota");
    assert!(message.contains("(9 > 8)"), "{message}");
}

#[test]
fn partial_admission_admits_the_largest_count_that_fits() {
    let mut w = wl("elastic", "a", 0, 1, "1", 10);
    w.pod_sets[0].min_count = Some(4);
    let s = snapshot(
        vec![flavor("default")],
        vec![cq("a", None, vec![cpu_group("default", quota("cpu", "6"))])],
        vec![],
        vec![w],
    );
    let run = settle(&s);
    match status(&run, "elastic") {
        kuota::engine::WorkloadStatus::Admitted(a) => {
            assert_eq!(a.pod_set_assignments[0].count, 6);
            assert_eq!(a.pod_set_assignments[0].resource_usage["cpu"], q("6"));
        }
        other => panic!("{other:?}"),
    }
    let mut config = EngineConfig::default();
    config.features.set(Feature::PartialAdmission, false);
    let run = run_until_stable(&s, config).unwrap();
    assert_eq!(pending(&run, "elastic").0, "ExceedsMaxQuota");
}

#[test]
fn pods_quota_counts_pods() {
    let queue = cq(
        "a",
        None,
        vec![group(
            &["cpu", "pods"],
            vec![("default", vec![quota("cpu", "10"), quota("pods", "3")])],
        )],
    );
    let s = snapshot(
        vec![flavor("default")],
        vec![queue],
        vec![],
        vec![
            wl("two", "a", 0, 1, "1", 2),
            wl("two-more", "a", 0, 2, "1", 2),
        ],
    );
    let run = settle(&s);
    match status(&run, "two") {
        kuota::engine::WorkloadStatus::Admitted(a) => {
            assert_eq!(a.pod_set_assignments[0].flavors["pods"], "default");
            assert_eq!(a.pod_set_assignments[0].resource_usage["pods"], q("2"));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        pending(&run, "two-more")
            .1
            .contains("insufficient unused quota for pods in flavor default, 1 more needed")
    );
}

#[test]
fn undeclared_resources_block_unless_ignored() {
    let mut w = wl("gpu", "a", 0, 1, "1", 1);
    w.pod_sets[0]
        .requests
        .insert("nvidia.com/gpu".into(), q("1"));
    let s = snapshot(
        vec![flavor("default")],
        vec![cq("a", None, vec![cpu_group("default", quota("cpu", "4"))])],
        vec![],
        vec![w],
    );
    let (reason, message) = pending(&settle(&s), "gpu");
    assert_eq!(reason, "ExceedsMaxQuota");
    assert!(
        message.contains("resource nvidia.com/gpu unavailable in ClusterQueue"),
        "{message}"
    );
    let config = EngineConfig {
        quota_check: QuotaCheckStrategy::IgnoreUndeclared,
        ..Default::default()
    };
    assert!(is_admitted(&run_until_stable(&s, config).unwrap(), "gpu"));
}

/// Amounts in messages read as `kubectl` shows them: memory in binary units, not raw bytes.
#[test]
fn messages_print_memory_in_binary_units() {
    let memory = |nominal: &str| quota("memory", nominal);
    let s = snapshot(
        vec![flavor("default")],
        vec![cq(
            "a",
            None,
            vec![group(&["memory"], vec![("default", vec![memory("16Gi")])])],
        )],
        vec![],
        ["running", "waiting", "huge"]
            .iter()
            .zip(["8Gi", "16Gi", "32Gi"])
            .enumerate()
            .map(|(i, (name, amount))| {
                let mut w = wl(name, "a", 0, i as i64, "1", 1);
                w.pod_sets[0].requests = [("memory".to_string(), q(amount))].into();
                w
            })
            .collect(),
    );
    let run = settle(&s);
    assert!(is_admitted(&run, "running"));
    let (_, message) = pending(&run, "waiting");
    assert!(
        message.ends_with("memory in flavor default, 8Gi more needed"),
        "{message}"
    );
    let (_, message) = pending(&run, "huge");
    assert!(message.ends_with("(32Gi > 16Gi)"), "{message}");
}
