//! Random cases for the engine's property tests: a cohort tree with quotas, limits, policies and
//! weights, ClusterQueues in it, and two waves of workloads.

use kuota::engine::model::*;
use kuota::engine::quantity::Quantity;
use proptest::prelude::*;

use super::*;

#[derive(Clone, Debug)]
pub struct Case {
    pub first: Snapshot,
    pub second_wave: Vec<Workload>,
    pub config: EngineConfig,
}

fn within_policy() -> impl Strategy<Value = WithinClusterQueue> {
    prop_oneof![
        Just(WithinClusterQueue::Never),
        Just(WithinClusterQueue::LowerPriority),
        Just(WithinClusterQueue::LowerOrNewerEqualPriority)
    ]
}

fn reclaim_policy() -> impl Strategy<Value = ReclaimWithinCohort> {
    prop_oneof![
        Just(ReclaimWithinCohort::Never),
        Just(ReclaimWithinCohort::LowerPriority),
        Just(ReclaimWithinCohort::Any)
    ]
}

fn limits(nominal: i64, has_parent: bool) -> impl Strategy<Value = ResourceQuota> {
    (
        proptest::option::of(0..5i64),
        proptest::option::of(0..=nominal),
    )
        .prop_map(move |(b, l)| ResourceQuota {
            name: "cpu".into(),
            nominal_quota: Quantity::from_units(nominal),
            borrowing_limit: b.filter(|_| has_parent).map(Quantity::from_units),
            lending_limit: l.filter(|_| has_parent).map(Quantity::from_units),
        })
}

/// Per cohort below the root: (nested under the previous one, own nominal, borrowing limit,
/// lending limit, fair-sharing weight).
type CohortSpec = (bool, i64, Option<i64>, Option<i64>, Option<i64>);

fn cohort_strategy() -> impl Strategy<Value = Vec<CohortSpec>> {
    proptest::collection::vec(
        (
            any::<bool>(),
            0..4i64,
            proptest::option::of(0..4i64),
            proptest::option::of(0..6i64),
            proptest::option::of(0..3i64),
        ),
        0..3,
    )
}

fn queue_strategy(cohorts: usize) -> impl Strategy<Value = ClusterQueue> {
    (
        0..=cohorts + 1,
        0..8i64,
        any::<bool>(),
        within_policy(),
        reclaim_policy(),
        any::<bool>(),
        proptest::option::of(0..3i32),
        (any::<bool>(), proptest::option::of(0..3i64)),
    )
        .prop_flat_map(
            move |(attach, nominal, two_flavors, within, reclaim, borrow, threshold, strict)| {
                let has_parent = attach <= cohorts;
                (
                    limits(nominal, has_parent),
                    0..6i64,
                    Just((
                        attach,
                        two_flavors,
                        within,
                        reclaim,
                        borrow,
                        threshold,
                        strict,
                    )),
                )
            },
        )
        .prop_map(
            move |(q0, spot, (attach, two_flavors, within, reclaim, borrow, threshold, strict))| {
                let (strict, weight) = strict;
                let cohort = if attach == 0 {
                    Some("root".to_string())
                } else if attach <= cohorts {
                    Some(format!("c{}", attach - 1))
                } else {
                    None
                };
                let mut flavors = vec![("f0", vec![q0])];
                if two_flavors {
                    flavors.push(("f1", vec![quota("cpu", &spot.to_string())]));
                }
                let mut queue = cq("placeholder", None, vec![group(&["cpu"], flavors)]);
                queue.cohort = cohort;
                queue.preemption = PreemptionPolicy {
                    within_cluster_queue: within,
                    reclaim_within_cohort: reclaim,
                    borrow_within_cohort: BorrowWithinCohort {
                        policy: if borrow && reclaim != ReclaimWithinCohort::Never {
                            BorrowWithinCohortPolicy::LowerPriority
                        } else {
                            BorrowWithinCohortPolicy::Never
                        },
                        max_priority_threshold: threshold,
                    },
                };
                queue.fair_sharing_weight = weight.map(Quantity::from_units);
                if queue.cohort.is_none() {
                    queue.preemption.reclaim_within_cohort = ReclaimWithinCohort::Never;
                    queue.preemption.borrow_within_cohort = BorrowWithinCohort::default();
                }
                queue.queueing_strategy = if strict {
                    QueueingStrategy::StrictFifo
                } else {
                    QueueingStrategy::BestEffortFifo
                };
                queue
            },
        )
}

pub fn workload_strategy(queues: usize, base: i64) -> impl Strategy<Value = Vec<Workload>> {
    proptest::collection::vec((0..queues, 0..4i32, 1..5i64, 1..3i32, any::<bool>()), 1..9).prop_map(
        move |specs| {
            specs
                .into_iter()
                .enumerate()
                .map(|(i, (queue, priority, cpu, count, partial))| {
                    let mut w = wl(
                        &format!("w{}", base + i as i64),
                        &format!("q{queue}"),
                        priority,
                        base + i as i64,
                        &cpu.to_string(),
                        count,
                    );
                    if partial && count > 1 {
                        w.pod_sets[0].min_count = Some(1);
                    }
                    w
                })
                .collect()
        },
    )
}

pub fn case_strategy() -> impl Strategy<Value = Case> {
    cohort_strategy()
        .prop_flat_map(|cohorts| {
            let n = cohorts.len();
            (
                Just(cohorts),
                proptest::collection::vec(queue_strategy(n), 2..5),
                0..4i64,
                any::<bool>(),
            )
        })
        .prop_flat_map(|(cohorts, queues, root_quota, fair)| {
            let n = queues.len();
            (
                Just((cohorts, queues, root_quota, fair)),
                workload_strategy(n, 0),
                workload_strategy(n, 100),
            )
        })
        .prop_map(
            |((cohort_specs, mut queues, root_quota, fair), first, second_wave)| {
                for (i, queue) in queues.iter_mut().enumerate() {
                    queue.name = format!("q{i}");
                }
                let mut cohorts = vec![cohort(
                    "root",
                    None,
                    vec![group(
                        &["cpu"],
                        vec![("f0", vec![quota("cpu", &root_quota.to_string())])],
                    )],
                )];
                for (i, (nested, own, borrowing, lending, weight)) in
                    cohort_specs.iter().enumerate()
                {
                    let parent = if *nested && i > 0 {
                        format!("c{}", i - 1)
                    } else {
                        "root".to_string()
                    };
                    let limits = ResourceQuota {
                        name: "cpu".into(),
                        nominal_quota: Quantity::from_units(*own),
                        borrowing_limit: borrowing.map(Quantity::from_units),
                        lending_limit: lending.map(Quantity::from_units),
                    };
                    let mut c = cohort(
                        &format!("c{i}"),
                        Some(&parent),
                        vec![cpu_group("f0", limits)],
                    );
                    c.fair_sharing_weight = weight.map(Quantity::from_units);
                    cohorts.push(c);
                }
                let first = snapshot(vec![flavor("f0"), flavor("f1")], queues, cohorts, first);
                let config = EngineConfig {
                    fair_sharing: if fair {
                        FairSharingConfig::enabled()
                    } else {
                        FairSharingConfig::default()
                    },
                    max_cycles: 200,
                    ..Default::default()
                };
                Case {
                    first,
                    second_wave,
                    config,
                }
            },
        )
}
