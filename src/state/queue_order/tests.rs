//! Kueue's queue-order timestamp: an eviction by a PodsReady timeout (strategy `Eviction`) or by an
//! AdmissionCheck sends a Workload behind what was created before it was evicted.

use k8s_openapi::api::core::v1::Namespace as K8sNamespace;
use serde::de::DeserializeOwned;

use super::QueueOrdering;
use crate::api;
use crate::engine::model::{EngineConfig, RequeuingTimestamp};
use crate::engine::{WorkloadKey, WorkloadStatus as EngineStatus};
use crate::state::{ClusterState, Fallback};

fn parse<T: DeserializeOwned>(yaml: &str) -> T {
    yaml_serde::from_str(yaml).unwrap_or_else(|e| panic!("test manifest: {e}\n{yaml}"))
}

/// Milliseconds of `2026-01-01T<hh:mm>:00Z`.
fn at(hh_mm: &str) -> i64 {
    let time: k8s_openapi::jiff::Timestamp = format!("2026-01-01T{hh_mm}:00Z").parse().unwrap();
    time.as_millisecond()
}

/// A status whose only condition is `type_` True with `reason` since `hh_mm`.
fn status_with(type_: &str, reason: &str, hh_mm: &str) -> api::WorkloadStatus {
    parse(&format!(
        "conditions:
- {{type: {type_}, status: \"True\", reason: {reason}, message: m, lastTransitionTime: \"2026-01-01T{hh_mm}:00Z\"}}
"
    ))
}

fn ordering(requeuing_timestamp: RequeuingTimestamp) -> QueueOrdering {
    QueueOrdering {
        requeuing_timestamp,
        ..QueueOrdering::default()
    }
}

#[test]
fn a_pods_ready_timeout_orders_by_the_eviction_unless_the_strategy_is_creation() {
    let evicted = status_with("Evicted", "PodsReadyTimeout", "09:20");
    let created = at("09:00");
    assert_eq!(
        ordering(RequeuingTimestamp::Eviction).time(Some(&evicted), created),
        at("09:20")
    );
    assert_eq!(
        ordering(RequeuingTimestamp::Creation).time(Some(&evicted), created),
        created
    );
}

#[test]
fn an_admission_check_eviction_orders_by_the_eviction_under_either_strategy() {
    let evicted = status_with("Evicted", "AdmissionCheck", "09:20");
    for strategy in [RequeuingTimestamp::Eviction, RequeuingTimestamp::Creation] {
        assert_eq!(
            ordering(strategy).time(Some(&evicted), at("09:00")),
            at("09:20")
        );
    }
}

#[test]
fn other_evictions_and_past_ones_keep_the_creation_time() {
    let created = at("09:00");
    let ordering = QueueOrdering::default();
    for reason in [
        "Preempted",
        "ClusterQueueStopped",
        "NodeFailures",
        "Deactivated",
    ] {
        let evicted = status_with("Evicted", reason, "09:20");
        assert_eq!(ordering.time(Some(&evicted), created), created, "{reason}");
    }
    // Readmitted: Kueue turns Evicted to False, and the Workload has its creation time back.
    let mut readmitted = status_with("Evicted", "PodsReadyTimeout", "09:20");
    readmitted.conditions[0].status = "False".into();
    assert_eq!(ordering.time(Some(&readmitted), created), created);
    assert_eq!(ordering.time(None, created), created);
}

#[test]
fn reclaimed_while_borrowing_queues_behind_its_preemptor_only_without_priority_sorting() {
    let preempted = status_with("Preempted", "InCohortReclaimWhileBorrowing", "09:20");
    let created = at("09:00");
    assert_eq!(
        QueueOrdering::default().time(Some(&preempted), created),
        created
    );
    let unsorted = QueueOrdering {
        priority_sorting_within_cohort: false,
        ..QueueOrdering::default()
    };
    assert_eq!(unsorted.time(Some(&preempted), created), at("09:20") + 1);
}

/// ClusterQueue `q` of 1 cpu, LocalQueue `team/lq`, under `config`.
fn state_with(config: EngineConfig) -> ClusterState {
    let mut state = ClusterState::new(config);
    state.apply_namespace(&parse::<K8sNamespace>("metadata: {name: team}"));
    state.apply_resource_flavor(&parse(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: good}
",
    ));
    state.apply_cluster_queue(&parse(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: good
      resources: [{name: cpu, nominalQuota: \"1\"}]
",
    ));
    state.apply_local_queue(&parse(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: team}
spec: {clusterQueue: q}
",
    ));
    state
}

/// Workload `name` of 1 cpu created at `created` (`hh:mm`), with `status` (YAML) when given.
fn workload(name: &str, created: &str, status: &str) -> api::Workload {
    parse(&format!(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {{name: {name}, namespace: team, uid: uid-{name}, creationTimestamp: \"2026-01-01T{created}:00Z\"}}
spec:
  queueName: lq
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]
{status}"
    ))
}

/// Back in the queue after a PodsReady timeout at 09:20: quota released, still Evicted.
const TIMED_OUT: &str = "status:
  conditions:
  - {type: QuotaReserved, status: \"False\", reason: Pending, message: m, lastTransitionTime: \"2026-01-01T09:20:00Z\"}
  - {type: Evicted, status: \"True\", reason: PodsReadyTimeout, message: m, lastTransitionTime: \"2026-01-01T09:20:00Z\"}
  - {type: Requeued, status: \"True\", reason: BackoffFinished, message: m, lastTransitionTime: \"2026-01-01T09:21:00Z\"}
";

/// Which of two equal-priority Workloads the one cpu goes to: `first`, created at 09:00 and timed
/// out at 09:20, or `second`, created at 09:10.
fn admitted_one(strategy: RequeuingTimestamp) -> &'static str {
    let mut state = state_with(EngineConfig {
        requeuing_timestamp: strategy,
        ..EngineConfig::default()
    });
    let fallback = || Fallback {
        creation: 0,
        uid: String::new(),
    };
    state.apply_workload(&workload("first", "09:00", TIMED_OUT), fallback());
    state.apply_workload(&workload("second", "09:10", ""), fallback());
    let engine = state.engine();
    engine.run_until_stable();
    let admitted = |name: &str| {
        let held = engine.state(&WorkloadKey::new("team", name)).unwrap();
        matches!(held.status, EngineStatus::Admitted(_))
    };
    match (admitted("first"), admitted("second")) {
        (true, false) => "first",
        (false, true) => "second",
        both => panic!("exactly one fits: {both:?}"),
    }
}

#[test]
fn a_workload_timed_out_waits_behind_one_created_before_its_eviction() {
    assert_eq!(admitted_one(RequeuingTimestamp::Eviction), "second");
    assert_eq!(admitted_one(RequeuingTimestamp::Creation), "first");
}
