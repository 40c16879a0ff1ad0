use super::*;
use crate::engine::model::{
    ClusterQueue, Cohort, FlavorQuotas, LocalQueue, PodSet, ResourceGroup, ResourceQuota,
};
use crate::engine::queue_report::{
    ClusterQueueReport, CohortReport, FlavorUsage, InactiveCause, LocalQueueReport, ResourceUsage,
};

fn quota(cpu: i64) -> Vec<ResourceGroup> {
    vec![ResourceGroup {
        covered_resources: vec!["cpu".into()],
        flavors: vec![FlavorQuotas {
            name: "default".into(),
            resources: vec![ResourceQuota {
                name: "cpu".into(),
                nominal_quota: Quantity::from_units(cpu),
                borrowing_limit: None,
                lending_limit: Some(Quantity::from_milli(500)),
            }],
        }],
    }]
}

fn structure() -> Structure {
    let mut s = Structure::default();
    for (name, cohort) in [("a", "child"), ("b", "root")] {
        s.cluster_queues.insert(
            name.into(),
            ClusterQueue {
                name: name.into(),
                cohort: Some(cohort.into()),
                resource_groups: quota(4),
                ..ClusterQueue::default()
            },
        );
    }
    s.cohorts.insert(
        "child".into(),
        Cohort {
            name: "child".into(),
            parent: Some("root".into()),
            resource_groups: quota(2),
            fair_sharing_weight: None,
        },
    );
    s.local_queues.insert(
        crate::api::ObjectKey::new("ns", "lq"),
        LocalQueue {
            namespace: "ns".into(),
            name: "lq".into(),
            cluster_queue: "a".into(),
            ..LocalQueue::default()
        },
    );
    s
}

fn cq_report(name: &str, used: i64, inactive: Vec<InactiveCause>) -> ClusterQueueReport {
    let usage = vec![FlavorUsage {
        flavor: "default".into(),
        resources: vec![ResourceUsage {
            resource: "cpu".into(),
            total: Quantity::from_units(used),
            nominal: Quantity::from_units(4),
        }],
    }];
    ClusterQueueReport {
        name: name.into(),
        pending: 0,
        reserving: 1,
        admitted: 1,
        reservation: usage.clone(),
        usage,
        in_cohort: true,
        inactive,
        weighted_share: None,
    }
}

fn report() -> QueueReport {
    QueueReport {
        cluster_queues: vec![
            cq_report("a", 3, Vec::new()),
            cq_report("b", 1, vec![InactiveCause::Stopped]),
            cq_report(
                "c",
                1,
                vec![InactiveCause::Terminating, InactiveCause::Stopped],
            ),
        ],
        local_queues: vec![LocalQueueReport {
            namespace: "ns".into(),
            name: "lq".into(),
            cluster_queue: "a".into(),
            stopped: false,
            pending: 2,
            reserving: 1,
            admitted: 1,
            reservation: Vec::new(),
            usage: Vec::new(),
        }],
        cohorts: ["child", "root"]
            .into_iter()
            .map(|name| CohortReport {
                name: name.into(),
                weighted_share: None,
            })
            .collect(),
    }
}

fn pending(reason: PendingReason) -> PendingWorkload<'static> {
    PendingWorkload {
        namespace: "ns",
        local_queue: "lq",
        reason,
        pod_sets: &[],
    }
}

#[test]
fn pending_workloads_count_as_active_until_evaluated() {
    let g = gauges(
        &report(),
        &structure(),
        &[
            pending(PendingReason::PendingEvaluation),
            pending(PendingReason::WaitingForQuota),
        ],
        &[],
    );
    let a = &g.cluster_queues[0];
    assert_eq!((a.pending_active, a.pending_inadmissible), (1, 1));
    assert_eq!(
        a.unadmitted
            .get(&("NoReservation".to_string(), "WaitingForQuota".to_string())),
        Some(&1)
    );
    assert_eq!(
        (
            a.status,
            g.cluster_queues[1].status,
            g.cluster_queues[2].status
        ),
        ("active", "pending", "terminating")
    );
    let lq = &g.local_queues[0];
    assert_eq!(
        (lq.pending_active, lq.pending_inadmissible, lq.active),
        (1, 1, "True")
    );
}

#[test]
fn cohorts_total_their_subtree() {
    let g = gauges(&report(), &structure(), &[], &[]);
    let cohort = |name: &str| g.cohorts.iter().find(|c| c.name == name).expect("cohort");
    let key = ("default".to_string(), "cpu".to_string());
    // child: its own 2 and a's 4; root: child's subtree and b's 4.
    assert_eq!(cohort("child").quota[&key], 6.0);
    assert_eq!(cohort("root").quota[&key], 10.0);
    assert_eq!(cohort("child").reservations[&key], 3.0);
    assert_eq!(cohort("root").reservations[&key], 4.0);
    assert_eq!(
        (
            cohort("child").parent.as_str(),
            cohort("child").root.as_str()
        ),
        ("root", "root")
    );
    assert_eq!(cohort("root").admitted_active, 2);
    let a = &g.cluster_queues[0];
    assert_eq!(
        (a.parent_cohort.as_str(), a.root_cohort.as_str()),
        ("child", "root")
    );
    assert_eq!(a.resources[0].lending_limit, Some(0.5));
    assert_eq!(a.resources[0].borrowing_limit, None);
}

/// Kueue's `cluster_queue_resource_pending`: every pod of every pending workload's pod sets, per
/// resource, with each covered resource listed at 0 while nothing waits for it; and its
/// `finished_workloads`: the finished workloads that still exist, per ClusterQueue and LocalQueue.
#[test]
fn pending_requests_and_finished_workloads_are_counted_per_queue() {
    let pod_set = |count: i32, cpu_milli: i64, gpus: i64| PodSet {
        name: "main".into(),
        count,
        requests: [
            ("cpu".to_string(), Quantity::from_milli(cpu_milli)),
            ("nvidia.com/gpu".to_string(), Quantity::from_units(gpus)),
        ]
        .into_iter()
        .collect(),
        ..PodSet::default()
    };
    let first = [pod_set(4, 500, 1), pod_set(1, 250, 0)];
    let second = [pod_set(2, 1000, 2)];
    let waiting = |pod_sets| PendingWorkload {
        pod_sets,
        ..pending(PendingReason::WaitingForQuota)
    };
    let done = FinishedWorkload {
        namespace: "ns",
        local_queue: "lq",
    };
    let g = gauges(
        &report(),
        &structure(),
        &[waiting(&first), waiting(&second)],
        &[done, done],
    );
    let a = &g.cluster_queues[0];
    assert_eq!(
        a.resource_pending,
        BTreeMap::from([
            ("cpu".to_string(), 4.25),
            ("nvidia.com/gpu".to_string(), 8.0)
        ])
    );
    assert_eq!(a.finished, 2);
    assert_eq!(g.local_queues[0].finished, 2);
    let b = &g.cluster_queues[1];
    assert_eq!(
        b.resource_pending,
        BTreeMap::from([("cpu".to_string(), 0.0)])
    );
    assert_eq!(b.finished, 0);
}
