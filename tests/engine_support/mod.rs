//! Builders shared by the engine's integration tests: compact constructors for the input model.
#![allow(dead_code)]

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Taint, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kuota::engine::model::*;
use kuota::engine::quantity::Quantity;
use kuota::engine::{Event, RunOutcome, WorkloadKey, WorkloadStatus};
use kuota::small_map::SmallMap;

pub mod cases;

pub const NS: &str = "default";

pub fn q(s: &str) -> Quantity {
    s.parse().unwrap()
}

pub fn quota(name: &str, nominal: &str) -> ResourceQuota {
    ResourceQuota::nominal(name, q(nominal))
}

pub fn quota_limits(
    name: &str,
    nominal: &str,
    borrowing: Option<&str>,
    lending: Option<&str>,
) -> ResourceQuota {
    ResourceQuota {
        name: name.into(),
        nominal_quota: q(nominal),
        borrowing_limit: borrowing.map(q),
        lending_limit: lending.map(q),
    }
}

/// A group covering `resources` with flavors listed as (flavor, quotas in resource order).
pub fn group(resources: &[&str], flavors: Vec<(&str, Vec<ResourceQuota>)>) -> ResourceGroup {
    ResourceGroup {
        covered_resources: resources.iter().map(|r| r.to_string()).collect(),
        flavors: flavors
            .into_iter()
            .map(|(name, resources)| FlavorQuotas {
                name: name.into(),
                resources,
            })
            .collect(),
    }
}

/// A cpu-only group with one flavor.
pub fn cpu_group(flavor: &str, quota: ResourceQuota) -> ResourceGroup {
    group(&["cpu"], vec![(flavor, vec![quota])])
}

pub fn flavor(name: &str) -> ResourceFlavor {
    ResourceFlavor {
        name: name.into(),
        ..Default::default()
    }
}

pub fn tainted_flavor(name: &str, key: &str, value: &str) -> ResourceFlavor {
    ResourceFlavor {
        name: name.into(),
        node_taints: vec![Taint {
            key: key.into(),
            value: Some(value.into()),
            effect: "NoSchedule".into(),
            ..Default::default()
        }],
        ..Default::default()
    }
}

pub fn toleration(key: &str, value: &str) -> Toleration {
    Toleration {
        key: Some(key.into()),
        operator: Some("Equal".into()),
        value: Some(value.into()),
        effect: Some("NoSchedule".into()),
        ..Default::default()
    }
}

pub fn cq(name: &str, cohort: Option<&str>, groups: Vec<ResourceGroup>) -> ClusterQueue {
    ClusterQueue {
        name: name.into(),
        cohort: cohort.map(Into::into),
        resource_groups: groups,
        namespace_selector: Some(LabelSelector::default()),
        ..Default::default()
    }
}

pub fn cohort(name: &str, parent: Option<&str>, groups: Vec<ResourceGroup>) -> Cohort {
    Cohort {
        name: name.into(),
        parent: parent.map(Into::into),
        resource_groups: groups,
        fair_sharing_weight: None,
    }
}

/// A workload of `count` pods with `cpu` each, queued in LocalQueue `lq-<cq>`.
pub fn wl(name: &str, cq: &str, priority: i32, creation: i64, cpu: &str, count: i32) -> Workload {
    Workload {
        namespace: NS.into(),
        name: name.into(),
        uid: format!("uid-{name}"),
        job_uid: None,
        queue_name: format!("lq-{cq}"),
        priority,
        creation,
        active: true,
        pod_sets: vec![PodSet {
            name: "main".into(),
            count,
            requests: SmallMap::from([("cpu".to_string(), q(cpu))]),
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// Marks a workload as already admitted to `cq` on `flavor` (cpu only).
pub fn admitted(mut w: Workload, cq: &str, flavor: &str) -> Workload {
    let ps = &w.pod_sets[0];
    let total = ps.requests["cpu"].saturating_mul(ps.count as i64);
    w.admission = Some(Admission {
        cluster_queue: cq.into(),
        pod_set_assignments: vec![PodSetAssignment {
            name: ps.name.clone(),
            flavors: SmallMap::from([("cpu".to_string(), flavor.to_string())]),
            resource_usage: SmallMap::from([("cpu".to_string(), total)]),
            count: ps.count,
            topology_assignment: None,
            delayed_topology: None,
        }],
    });
    w
}

/// A snapshot with namespace `default` and one LocalQueue `lq-<cq>` per ClusterQueue.
pub fn snapshot(
    flavors: Vec<ResourceFlavor>,
    cqs: Vec<ClusterQueue>,
    cohorts: Vec<Cohort>,
    workloads: Vec<Workload>,
) -> Snapshot {
    Snapshot {
        local_queues: cqs
            .iter()
            .map(|c| LocalQueue {
                namespace: NS.into(),
                name: format!("lq-{}", c.name),
                cluster_queue: c.name.clone(),
                stop_policy: StopPolicy::None,
            })
            .collect(),
        namespaces: vec![Namespace {
            name: NS.into(),
            labels: BTreeMap::new(),
        }],
        resource_flavors: flavors,
        cluster_queues: cqs,
        cohorts,
        workloads,
    }
}

pub fn key(name: &str) -> WorkloadKey {
    WorkloadKey::new(NS, name)
}

pub fn status<'a>(run: &'a RunOutcome, name: &str) -> &'a WorkloadStatus {
    &run.workloads
        .iter()
        .find(|w| w.workload == key(name))
        .unwrap()
        .status
}

/// The ClusterQueue and cpu flavor a workload ended up admitted with, or `None` if pending.
pub fn placement(run: &RunOutcome, name: &str) -> Option<(String, String)> {
    match status(run, name) {
        WorkloadStatus::Admitted(a) => Some((
            a.cluster_queue.clone(),
            a.pod_set_assignments[0].flavors["cpu"].clone(),
        )),
        _ => None,
    }
}

pub fn is_admitted(run: &RunOutcome, name: &str) -> bool {
    matches!(status(run, name), WorkloadStatus::Admitted(_))
}

/// The (reason, message) of a pending workload.
pub fn pending(run: &RunOutcome, name: &str) -> (String, String) {
    match status(run, name) {
        WorkloadStatus::Pending { reason, message } => {
            (reason.as_str().to_string(), message.clone())
        }
        other => panic!("{name} is not pending: {other:?}"),
    }
}

/// (victim, preemptor, reason) of every preemption, in order.
pub fn preemptions(run: &RunOutcome) -> Vec<(String, String, String)> {
    run.events
        .iter()
        .filter_map(|e| match e {
            Event::Preempted {
                victim,
                preemptor,
                reason,
                ..
            } => Some((
                victim.name.clone(),
                preemptor.name.clone(),
                reason.as_str().to_string(),
            )),
            _ => None,
        })
        .collect()
}

/// Runs `s` with the default configuration until nothing changes, which it must.
pub fn settle(s: &Snapshot) -> RunOutcome {
    let out = kuota::engine::run_until_stable(s, EngineConfig::default()).unwrap();
    assert!(out.stable);
    out
}

/// Two ClusterQueues `a` and `b` in the cohort `pool`, each with one cpu quota on flavor `default`.
pub fn two_queues(a: ResourceQuota, b: ResourceQuota, workloads: Vec<Workload>) -> Snapshot {
    snapshot(
        vec![flavor("default")],
        vec![
            cq("a", Some("pool"), vec![cpu_group("default", a)]),
            cq("b", Some("pool"), vec![cpu_group("default", b)]),
        ],
        vec![],
        workloads,
    )
}
