use super::*;
use crate::engine::model::{AdmissionCheckState, PodSetAssignment};

fn rule(name: &str, on_flavors: &[&str]) -> QueueCheck {
    QueueCheck {
        name: name.into(),
        on_flavors: on_flavors.iter().map(|f| f.to_string()).collect(),
        state: AdmissionCheckState::Active,
    }
}

fn admitted_on(flavors: &[&str]) -> Admission {
    Admission {
        cluster_queue: "cq".into(),
        pod_set_assignments: flavors
            .iter()
            .enumerate()
            .map(|(i, flavor)| {
                let mut assigned = crate::small_map::SmallMap::default();
                assigned.insert("cpu".to_string(), flavor.to_string());
                PodSetAssignment {
                    name: format!("ps{i}"),
                    flavors: assigned,
                    ..Default::default()
                }
            })
            .collect(),
    }
}

#[test]
fn an_admission_needs_the_checks_for_every_flavor_and_for_its_own_flavors_sorted() {
    let rules = [
        rule("zeta", &[]),
        rule("spot-only", &["spot"]),
        rule("gpu-only", &["gpu"]),
        rule("alpha", &[]),
    ];
    assert_eq!(
        for_admission(&rules, &admitted_on(&["on-demand", "spot"])),
        ["alpha", "spot-only", "zeta"]
    );
    assert_eq!(
        for_admission(&rules, &admitted_on(&["on-demand"])),
        ["alpha", "zeta"]
    );
}

#[test]
fn a_waiting_workload_lists_only_the_checks_that_apply_whatever_its_flavor() {
    let rules = [
        rule("any", &[]),
        rule("both", &["spot", "on-demand"]),
        rule("spot-only", &["spot"]),
    ];
    assert_eq!(
        for_every_flavor(&rules, &["on-demand", "spot"]),
        ["any", "both"]
    );
    assert_eq!(for_every_flavor(&[], &["spot"]), Vec::<String>::new());
}

mod in_the_engine {
    use std::collections::BTreeMap;

    use crate::engine::model::*;
    use crate::engine::quantity::Quantity;
    use crate::engine::{Engine, WorkloadKey, WorkloadStatus};

    fn snapshot(checks: Vec<QueueCheck>) -> Snapshot {
        let cpu = Quantity::from_units;
        Snapshot {
            resource_flavors: ["on-demand", "spot"]
                .map(|name| ResourceFlavor {
                    name: name.into(),
                    ..Default::default()
                })
                .into(),
            cluster_queues: vec![ClusterQueue {
                name: "team".into(),
                resource_groups: vec![ResourceGroup {
                    covered_resources: vec!["cpu".into()],
                    flavors: ["on-demand", "spot"]
                        .map(|name| FlavorQuotas {
                            name: name.into(),
                            resources: vec![ResourceQuota::nominal("cpu", cpu(2))],
                        })
                        .into(),
                }],
                namespace_selector: Some(Default::default()),
                admission_checks: checks,
                ..Default::default()
            }],
            local_queues: vec![LocalQueue {
                namespace: "ns".into(),
                name: "q".into(),
                cluster_queue: "team".into(),
                stop_policy: StopPolicy::None,
            }],
            namespaces: vec![Namespace {
                name: "ns".into(),
                labels: BTreeMap::new(),
            }],
            workloads: (0..2)
                .map(|i| Workload {
                    namespace: "ns".into(),
                    name: format!("job-{i}"),
                    uid: format!("uid-{i}"),
                    queue_name: "q".into(),
                    creation: i,
                    active: true,
                    pod_sets: vec![PodSet {
                        name: "main".into(),
                        count: 1,
                        requests: [("cpu".to_string(), cpu(2))].into(),
                        ..Default::default()
                    }],
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    fn check(name: &str, on_flavors: &[&str]) -> QueueCheck {
        QueueCheck {
            name: name.into(),
            on_flavors: on_flavors.iter().map(|f| f.to_string()).collect(),
            state: AdmissionCheckState::Active,
        }
    }

    #[test]
    fn reservations_waiting_for_checks_hold_quota_but_count_as_admitted_only_once_admitted() {
        let checks = vec![check("everywhere", &[]), check("spot-only", &["spot"])];
        let mut engine = Engine::new(&snapshot(checks), EngineConfig::default()).unwrap();
        let run = engine.run_until_stable();
        let first = &run.workloads[0];
        assert!(matches!(first.status, WorkloadStatus::Admitted(_)));
        assert_eq!(first.admission_checks, ["everywhere"]);
        let second = &run.workloads[1];
        assert!(matches!(second.status, WorkloadStatus::Admitted(_)));
        assert_eq!(second.admission_checks, ["everywhere", "spot-only"]);

        let report = engine.queue_report();
        let cq = report.cluster_queue("team").unwrap();
        assert_eq!((cq.reserving, cq.admitted), (2, 0));
        let total = |usage: &[crate::engine::queue_report::FlavorUsage]| -> Vec<Quantity> {
            usage.iter().map(|u| u.resources[0].total).collect()
        };
        let two = Quantity::from_units(2);
        assert_eq!(total(&cq.reservation), [two, two]);
        assert_eq!(total(&cq.usage), [Quantity::ZERO, Quantity::ZERO]);

        // `Admitted=True` read back for the first: its quota counts as used.
        let key = WorkloadKey::new("ns", "job-0");
        let mut read = engine.workload(&key).unwrap();
        read.shown = Shown::Admitted;
        engine.upsert_workload(read).unwrap();
        let report = engine.queue_report();
        let cq = report.cluster_queue("team").unwrap();
        assert_eq!((cq.reserving, cq.admitted), (2, 1));
        assert_eq!(total(&cq.usage), [two, Quantity::ZERO]);
        let lq = &report.local_queues[0];
        assert_eq!((lq.reserving, lq.admitted), (2, 1));
    }

    #[test]
    fn without_checks_every_reservation_is_admitted_and_a_waiting_workload_lists_none() {
        let mut snapshot = snapshot(Vec::new());
        snapshot.workloads[1].pod_sets[0].requests =
            [("cpu".to_string(), Quantity::from_units(3))].into();
        let mut engine = Engine::new(&snapshot, EngineConfig::default()).unwrap();
        let run = engine.run_until_stable();
        assert!(matches!(
            run.workloads[1].status,
            WorkloadStatus::Pending { .. }
        ));
        assert!(run.workloads[1].admission_checks.is_empty());
        let report = engine.queue_report();
        let cq = report.cluster_queue("team").unwrap();
        assert_eq!((cq.reserving, cq.admitted), (1, 1));
        assert_eq!(cq.usage, cq.reservation);
    }
}
