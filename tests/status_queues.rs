//! ClusterQueue, LocalQueue and Cohort status computed from engines built on model snapshots:
//! counts, usage and borrowing, the `Active` condition with Kueue's reasons, the fair-sharing
//! weighted share, and the merge into a previous status.

mod engine_support;

use engine_support::*;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kuota::api::Condition;
use kuota::api::common::FairSharingStatus;
use kuota::api::quota::{
    FlavorUsage, LocalQueueFlavorUsage, LocalQueueResourceUsage, ResourceUsage,
};
use kuota::api::{ClusterQueueStatus, LocalQueueStatus};
use kuota::engine::Engine;
use kuota::engine::model::*;
use kuota::engine::queue_report::QueueReport;
use kuota::status::queues::{cluster_queue_status, cohort_status, local_queue_status};

fn at(text: &str) -> Time {
    Time(text.parse().unwrap())
}

fn queue_report(snapshot: &Snapshot, config: EngineConfig) -> QueueReport {
    Engine::new(snapshot, config).unwrap().queue_report()
}

fn cq_status(report: &QueueReport, name: &str) -> ClusterQueueStatus {
    let cq = report.cluster_queue(name).unwrap();
    cluster_queue_status(None, cq, &at("2026-01-01T00:00:00Z"), Some(1))
}

fn lq_status(report: &QueueReport, name: &str) -> LocalQueueStatus {
    let lq = report.local_queues.iter().find(|q| q.name == name).unwrap();
    local_queue_status(None, report, lq, &at("2026-01-01T00:00:00Z"), Some(1))
}

fn active(conditions: &[Condition]) -> (&str, &str, &str) {
    let c = conditions.iter().find(|c| c.type_ == "Active").unwrap();
    (c.status.as_str(), c.reason.as_str(), c.message.as_str())
}

fn usage(flavor: &str, resources: &[(&str, &str, &str)]) -> FlavorUsage {
    FlavorUsage {
        name: flavor.into(),
        resources: resources
            .iter()
            .map(|(name, total, borrowed)| ResourceUsage {
                name: name.to_string(),
                total: Some(K8sQuantity(total.to_string())),
                borrowed: Some(K8sQuantity(borrowed.to_string())),
            })
            .collect(),
    }
}

fn local_usage(flavor: &str, resources: &[(&str, &str)]) -> LocalQueueFlavorUsage {
    LocalQueueFlavorUsage {
        name: flavor.into(),
        resources: resources
            .iter()
            .map(|(name, total)| LocalQueueResourceUsage {
                name: name.to_string(),
                total: Some(K8sQuantity(total.to_string())),
            })
            .collect(),
    }
}

/// Cohort `pool`: `a` owns 4 CPUs and 8Gi of memory, `b` 4 CPUs. `a` runs 6 CPUs through `lq-a`
/// and 1 through `lq-a2`, and waits for 4 more; `b` runs 1.
fn pool() -> Snapshot {
    let a = cq(
        "a",
        Some("pool"),
        vec![group(
            &["memory", "cpu"],
            vec![("default", vec![quota("memory", "8Gi"), quota("cpu", "4")])],
        )],
    );
    let b = cq(
        "b",
        Some("pool"),
        vec![cpu_group("default", quota("cpu", "4"))],
    );
    let mut second_queue = admitted(wl("a-3", "a", 0, 3, "1", 1), "a", "default");
    second_queue.queue_name = "lq-a2".into();
    let mut s = snapshot(
        vec![flavor("default")],
        vec![a, b],
        vec![],
        vec![
            admitted(wl("a-1", "a", 0, 0, "3", 2), "a", "default"),
            wl("a-2", "a", 0, 1, "4", 1),
            admitted(wl("b-1", "b", 0, 2, "1", 1), "b", "default"),
            second_queue,
        ],
    );
    s.local_queues.push(LocalQueue {
        namespace: NS.into(),
        name: "lq-a2".into(),
        cluster_queue: "a".into(),
        stop_policy: StopPolicy::None,
    });
    s
}

#[test]
fn a_cluster_queue_reports_counts_usage_and_what_it_borrows() {
    let report = queue_report(&pool(), EngineConfig::default());
    let a = cq_status(&report, "a");
    assert_eq!(
        (
            a.pending_workloads,
            a.reserving_workloads,
            a.admitted_workloads
        ),
        (Some(1), Some(2), Some(2))
    );
    let expected = vec![usage("default", &[("cpu", "7", "3"), ("memory", "0", "0")])];
    assert_eq!(a.flavors_reservation, expected);
    assert_eq!(a.flavors_usage, expected);
    assert_eq!(
        active(&a.conditions),
        ("True", "Ready", "Can admit new workloads")
    );
    assert_eq!(a.conditions[0].observed_generation, Some(1));
    assert_eq!(a.fair_sharing, None);
    let b = cq_status(&report, "b");
    assert_eq!(
        (b.pending_workloads, b.admitted_workloads),
        (Some(0), Some(1))
    );
    assert_eq!(
        b.flavors_usage,
        vec![usage("default", &[("cpu", "1", "0")])]
    );
}

#[test]
fn a_cluster_queue_outside_a_cohort_borrows_nothing_even_above_its_quota() {
    let s = snapshot(
        vec![flavor("default")],
        vec![cq(
            "solo",
            None,
            vec![cpu_group("default", quota("cpu", "4"))],
        )],
        vec![],
        vec![admitted(wl("big", "solo", 0, 0, "3", 2), "solo", "default")],
    );
    let solo = cq_status(&queue_report(&s, EngineConfig::default()), "solo");
    assert_eq!(
        solo.flavors_usage,
        vec![usage("default", &[("cpu", "6", "0")])]
    );
}

#[test]
fn usage_follows_the_engine_as_it_admits() {
    let s = two_queues(
        quota("cpu", "4"),
        quota("cpu", "4"),
        vec![wl("a-1", "a", 0, 0, "3", 2), wl("a-2", "a", 0, 1, "3", 1)],
    );
    let mut engine = Engine::new(&s, EngineConfig::default()).unwrap();
    let before = engine.queue_report();
    let a = cq_status(&before, "a");
    assert_eq!(
        (a.pending_workloads, a.admitted_workloads),
        (Some(2), Some(0))
    );
    assert_eq!(
        a.flavors_usage,
        vec![usage("default", &[("cpu", "0", "0")])]
    );
    engine.run_until_stable();
    let a = cq_status(&engine.queue_report(), "a");
    assert_eq!(
        (a.pending_workloads, a.admitted_workloads),
        (Some(1), Some(1))
    );
    assert_eq!(
        a.flavors_usage,
        vec![usage("default", &[("cpu", "6", "2")])]
    );
}

#[test]
fn an_inactive_cluster_queue_names_kueues_reasons() {
    let missing = cq(
        "missing",
        None,
        vec![group(
            &["cpu"],
            vec![
                ("gpu-a", vec![quota("cpu", "1")]),
                ("default", vec![quota("cpu", "1")]),
                ("gpu-b", vec![quota("cpu", "1")]),
            ],
        )],
    );
    let mut stopped = cq(
        "stopped",
        None,
        vec![cpu_group("default", quota("cpu", "1"))],
    );
    stopped.stop_policy = StopPolicy::Hold;
    let mut stopped_and_missing = cq("both", None, vec![cpu_group("gone", quota("cpu", "1"))]);
    stopped_and_missing.stop_policy = StopPolicy::HoldAndDrain;
    let looped = cq(
        "looped",
        Some("x"),
        vec![cpu_group("default", quota("cpu", "1"))],
    );
    let mut closing = cq("closing", None, vec![cpu_group("gone", quota("cpu", "1"))]);
    closing.stop_policy = StopPolicy::Hold;
    closing.terminating = true;
    let s = snapshot(
        vec![flavor("default")],
        vec![missing, stopped, stopped_and_missing, looped, closing],
        vec![
            cohort("x", Some("y"), vec![]),
            cohort("y", Some("x"), vec![]),
        ],
        vec![wl("waits", "looped", 0, 0, "1", 1)],
    );
    let report = queue_report(&s, EngineConfig::default());
    let reason = |name: &str| {
        let status = cq_status(&report, name);
        let (state, reason, message) = active(&status.conditions);
        (state.to_string(), reason.to_string(), message.to_string())
    };
    let expect = |reason: &str, message: &str| {
        ("False".to_string(), reason.to_string(), message.to_string())
    };
    assert_eq!(
        reason("missing"),
        expect(
            "FlavorNotFound",
            "Can't admit new workloads: references missing ResourceFlavor(s): gpu-a,gpu-b."
        )
    );
    assert_eq!(
        reason("stopped"),
        expect("Stopped", "Can't admit new workloads: is stopped.")
    );
    assert_eq!(
        reason("both"),
        expect(
            "Stopped",
            "Can't admit new workloads: is stopped, references missing ResourceFlavor(s): gone."
        )
    );
    // Terminating is reported alone, whatever else is wrong with the queue.
    assert_eq!(
        reason("closing"),
        expect(
            "Terminating",
            "Can't admit new workloads; clusterQueue is terminating"
        )
    );
    assert_eq!(
        reason("looped"),
        expect(
            "CohortCycleDetected",
            "Can't admit new workloads: Cohort \"x\" has a cycle in hierarchy."
        )
    );
    // Its workload still counts as pending, as Kueue counts the workloads of an inactive queue.
    assert_eq!(cq_status(&report, "looped").pending_workloads, Some(1));
}

#[test]
fn local_queues_report_their_own_workloads_and_follow_their_cluster_queue() {
    let mut s = pool();
    let mut stopped_cq = cq(
        "stopped",
        None,
        vec![cpu_group("default", quota("cpu", "1"))],
    );
    stopped_cq.stop_policy = StopPolicy::Hold;
    s.cluster_queues.push(stopped_cq);
    let lq = |name: &str, cluster_queue: &str, stop_policy| LocalQueue {
        namespace: NS.into(),
        name: name.into(),
        cluster_queue: cluster_queue.into(),
        stop_policy,
    };
    s.local_queues.extend([
        lq("lq-nowhere", "nowhere", StopPolicy::None),
        lq("lq-inactive", "stopped", StopPolicy::None),
    ]);
    for q in &mut s.local_queues {
        if q.name == "lq-b" {
            q.stop_policy = StopPolicy::Hold;
        }
    }
    let mut waits_in_b = wl("b-2", "b", 0, 4, "1", 1);
    waits_in_b.queue_name = "lq-b".into();
    s.workloads.push(waits_in_b);
    let report = queue_report(&s, EngineConfig::default());

    let a = lq_status(&report, "lq-a");
    assert_eq!(
        active(&a.conditions),
        ("True", "Ready", "Can submit new workloads to localQueue")
    );
    assert_eq!(
        (
            a.pending_workloads,
            a.reserving_workloads,
            a.admitted_workloads
        ),
        (Some(1), Some(1), Some(1))
    );
    let expected = vec![local_usage("default", &[("cpu", "6"), ("memory", "0")])];
    assert_eq!(a.flavors_reservation, expected);
    assert_eq!(a.flavors_usage, expected);
    let a2 = lq_status(&report, "lq-a2");
    assert_eq!(
        a2.flavors_usage,
        vec![local_usage("default", &[("cpu", "1"), ("memory", "0")])]
    );

    let stopped = lq_status(&report, "lq-b");
    assert_eq!(
        active(&stopped.conditions),
        ("False", "Stopped", "LocalQueue is stopped")
    );
    assert_eq!(
        (stopped.pending_workloads, stopped.admitted_workloads),
        (Some(0), Some(1))
    );

    let nowhere = lq_status(&report, "lq-nowhere");
    assert_eq!(
        active(&nowhere.conditions),
        (
            "False",
            "ClusterQueueDoesNotExist",
            "Can't submit new workloads to clusterQueue"
        )
    );
    assert_eq!(nowhere.admitted_workloads, Some(0));
    assert!(nowhere.flavors_usage.is_empty());

    let inactive = lq_status(&report, "lq-inactive");
    assert_eq!(
        active(&inactive.conditions),
        (
            "False",
            "ClusterQueueIsInactive",
            "Can't submit new workloads to clusterQueue"
        )
    );
    assert_eq!(
        inactive.flavors_usage,
        vec![local_usage("default", &[("cpu", "0")])]
    );
}

/// Cohort `team` (under `org`) holds `a` (4 CPUs, weight 3, running 6); `org` also holds `b` (4
/// CPUs) and `c` (no quota, weight 0, running 1).
fn shares() -> Snapshot {
    let mut a = cq(
        "a",
        Some("team"),
        vec![cpu_group("default", quota("cpu", "4"))],
    );
    a.fair_sharing_weight = Some(q("3"));
    let b = cq(
        "b",
        Some("org"),
        vec![cpu_group("default", quota("cpu", "4"))],
    );
    let mut c = cq(
        "c",
        Some("org"),
        vec![cpu_group("default", quota("cpu", "0"))],
    );
    c.fair_sharing_weight = Some(q("0"));
    snapshot(
        vec![flavor("default")],
        vec![a, b, c],
        vec![cohort("team", Some("org"), vec![])],
        vec![
            admitted(wl("a-1", "a", 0, 0, "3", 2), "a", "default"),
            admitted(wl("c-1", "c", 0, 1, "1", 1), "c", "default"),
        ],
    )
}

#[test]
fn weighted_shares_are_written_only_while_fair_sharing_is_on() {
    let on = EngineConfig {
        fair_sharing: FairSharingConfig::enabled(),
        ..EngineConfig::default()
    };
    let report = queue_report(&shares(), on);
    let share = |name: &str| {
        cq_status(&report, name)
            .fair_sharing
            .map(|f| f.weighted_share)
    };
    // a borrows 2 of the 8 CPUs org can lend: 250 per mille, over weight 3, rounded up.
    assert_eq!(share("a"), Some(84));
    assert_eq!(share("b"), Some(0));
    assert_eq!(share("c"), Some(i64::MAX));
    let cohort = |name: &str| {
        let report = report.cohorts.iter().find(|c| c.name == name).unwrap();
        cohort_status(None, report)
            .fair_sharing
            .map(|f| f.weighted_share)
    };
    assert_eq!(cohort("team"), Some(250));
    assert_eq!(cohort("org"), Some(0));

    let off = queue_report(&shares(), EngineConfig::default());
    assert_eq!(cq_status(&off, "a").fair_sharing, None);
    assert!(
        off.cohorts
            .iter()
            .all(|c| cohort_status(None, c).fair_sharing.is_none())
    );
}

#[test]
fn queue_status_is_merged_into_the_previous_one() {
    let t0 = at("2026-01-01T00:00:00Z");
    let t1 = at("2026-01-01T01:00:00Z");
    let first = queue_report(&pool(), EngineConfig::default());
    let other = Condition {
        type_: "MultiKueueManagerQuotaAutomation".into(),
        status: "True".into(),
        reason: "Ready".into(),
        message: "written by another controller".into(),
        last_transition_time: t0.clone(),
        observed_generation: Some(1),
    };
    let mut old = cluster_queue_status(None, first.cluster_queue("a").unwrap(), &t0, Some(1));
    old.conditions.push(other.clone());
    let again = cluster_queue_status(Some(&old), first.cluster_queue("a").unwrap(), &t1, Some(1));
    assert_eq!(
        again, old,
        "an unchanged queue keeps its status, times included"
    );

    let mut stopped = pool();
    stopped.cluster_queues[0].stop_policy = StopPolicy::Hold;
    let second = queue_report(&stopped, EngineConfig::default());
    let flipped =
        cluster_queue_status(Some(&old), second.cluster_queue("a").unwrap(), &t1, Some(2));
    let active = &flipped.conditions[0];
    assert_eq!(
        (
            active.status.as_str(),
            &active.last_transition_time,
            active.observed_generation
        ),
        ("False", &t1, Some(2))
    );
    assert_eq!(flipped.conditions[1], other);

    // A LocalQueue's Admission Fair Sharing status belongs to another writer.
    let lq = first
        .local_queues
        .iter()
        .find(|q| q.name == "lq-a")
        .unwrap();
    let old_lq = LocalQueueStatus {
        fair_sharing: Some(FairSharingStatus {
            weighted_share: 5,
            admission_fair_sharing_status: None,
        }),
        ..Default::default()
    };
    let new_lq = local_queue_status(Some(&old_lq), &first, lq, &t1, Some(1));
    assert_eq!(new_lq.fair_sharing, old_lq.fair_sharing);
}
