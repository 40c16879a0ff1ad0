//! Workloads in the state: finished ones are kept without their pod sets, and class changes,
//! restores and queue reports still see them as they are; reclaimable pods give quota back.

use k8s_openapi::api::core::v1::Namespace as K8sNamespace;
use serde::de::DeserializeOwned;

use crate::api;
use crate::engine::model::EngineConfig;
use crate::engine::{PendingReason, WorkloadKey, WorkloadStatus};
use crate::state::{ClusterState, Fallback};

fn parse<T: DeserializeOwned>(yaml: &str) -> T {
    yaml_serde::from_str(yaml).unwrap_or_else(|e| panic!("test manifest: {e}\n{yaml}"))
}

/// One ClusterQueue `q` of 1 cpu in flavor `good`, LocalQueue `team/lq`, and the
/// WorkloadPriorityClass `high` of value 10, with the default gates.
fn state() -> ClusterState {
    state_with(EngineConfig::default())
}

/// [`state`] under `config`.
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
    state.apply_workload_priority_class(&class(10));
    state
}

fn class(value: i32) -> api::WorkloadPriorityClass {
    parse(&format!(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {{name: high}}
value: {value}
"
    ))
}

/// Workload `name` of 1 cpu taking its priority from `high`, with `status` (YAML) when given.
fn workload(name: &str, status: &str) -> api::Workload {
    parse(&format!(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {{name: {name}, namespace: team, uid: uid-{name}}}
spec:
  queueName: lq
  priorityClassRef: {{group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: high}}
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]
{status}"
    ))
}

/// What the controller reads back once the Workload ran to its end: its admission, with the
/// conditions it was admitted and finished with.
const FINISHED: &str = "status:
  admission:
    clusterQueue: q
    podSetAssignments:
    - {name: main, flavors: {cpu: good}, resourceUsage: {cpu: \"1\"}, count: 1}
  conditions:
  - {type: QuotaReserved, status: \"True\", reason: QuotaReserved, message: m, lastTransitionTime: \"2026-01-01T00:00:00Z\"}
  - {type: Admitted, status: \"True\", reason: Admitted, message: m, lastTransitionTime: \"2026-01-01T00:00:00Z\"}
  - {type: Finished, status: \"True\", reason: Succeeded, message: done, lastTransitionTime: \"2026-01-01T00:01:00Z\"}
";

fn fallback() -> Fallback {
    Fallback {
        creation: 1,
        uid: String::new(),
    }
}

fn status(state: &mut ClusterState, name: &str) -> WorkloadStatus {
    let key = WorkloadKey::new("team", name);
    let held = state.engine().state(&key);
    held.unwrap_or_else(|| panic!("no workload {name}")).status
}

/// A Workload that finished frees its quota for the next one and stays Finished through a class
/// change, a restore and being read again; the queue reports count it nowhere.
#[test]
fn a_finished_workload_stays_finished_without_its_pod_sets() {
    let mut state = state();
    state.apply_workload(&workload("done", ""), fallback());
    state.apply_workload(&workload("next", ""), fallback());
    state.engine().run_until_stable();
    assert!(matches!(
        status(&mut state, "done"),
        WorkloadStatus::Admitted(_)
    ));

    let done = workload("done", FINISHED);
    state.apply_workload(&done, fallback());
    let key = WorkloadKey::new("team", "done");
    let held = state
        .engine()
        .workload(&key)
        .expect("a finished Workload is held");
    assert!(held.finished && held.pod_sets.is_empty() && held.admission.is_none());
    state.engine().run_until_stable();
    assert!(matches!(
        status(&mut state, "next"),
        WorkloadStatus::Admitted(_)
    ));

    state.apply_workload_priority_class(&class(20));
    assert_eq!(state.engine().workload(&key).map(|w| w.priority), Some(20));
    state.restore_workload(&done, fallback());
    state.apply_workload(&done, fallback());
    assert!(!state.engine().cycle().changed_anything());
    assert_eq!(status(&mut state, "done"), WorkloadStatus::Finished);
    assert_eq!(state.engine().workload(&key).map(|w| w.priority), Some(20));
    assert_eq!(state.engine().table_len(), 2);

    let report = state.engine().queue_report();
    let q = report.cluster_queue("q").expect("q is reported");
    assert_eq!((q.pending, q.admitted), (0, 1));
    assert_eq!(report.local_queues[0].admitted, 1);
}

/// A class change reaches a waiting Workload as before: it moves ahead of an older one of lower
/// priority when quota frees up.
#[test]
fn a_class_change_still_reorders_waiting_workloads() {
    let mut state = state();
    state.apply_workload(&workload("holder", ""), fallback());
    state.engine().run_until_stable();
    let mut older: api::Workload = workload("older", "");
    older.spec.priority_class_ref = None;
    older.spec.priority = Some(15);
    state.apply_workload(&older, fallback());
    state.apply_workload(&workload("waiting", ""), fallback());
    state.engine().run_until_stable();
    state.apply_workload_priority_class(&class(20));
    state.apply_workload(&workload("holder", FINISHED), fallback());
    state.engine().run_until_stable();
    assert!(matches!(
        status(&mut state, "waiting"),
        WorkloadStatus::Admitted(_)
    ));
    assert!(matches!(
        status(&mut state, "older"),
        WorkloadStatus::Pending { .. }
    ));
}

/// Workload `name` of four pods of 250m cpu, with `status` (YAML) when given.
fn four_pods(name: &str, status: &str) -> api::Workload {
    parse(&format!(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {{name: {name}, namespace: team, uid: uid-{name}}}
spec:
  queueName: lq
  podSets:
  - name: main
    count: 4
    template:
      spec:
        containers: [{{name: c, resources: {{requests: {{cpu: 250m}}}}}}]
{status}"
    ))
}

/// Admitted for its four pods, three of which Kueue's Job integration marked reclaimable.
const THREE_RECLAIMABLE: &str = "status:
  admission:
    clusterQueue: q
    podSetAssignments:
    - {name: main, flavors: {cpu: good}, resourceUsage: {cpu: \"1\"}, count: 4}
  reclaimablePods: [{name: main, count: 3}]
  conditions:
  - {type: QuotaReserved, status: \"True\", reason: QuotaReserved, message: m, lastTransitionTime: \"2026-01-01T00:00:00Z\"}
  - {type: Admitted, status: \"True\", reason: Admitted, message: m, lastTransitionTime: \"2026-01-01T00:00:00Z\"}
";

/// Reclaimable pods give their quota back while the Workload stays admitted: the queue's whole
/// cpu is held until three of four pods are reclaimable, then 750m of it go to the next Workload.
/// Without the gate the Workload holds all of it to the end, as in Kueue.
#[test]
fn reclaimable_pods_give_their_quota_back_early() {
    for gate in [true, false] {
        let mut state = state_with(EngineConfig {
            features: format!("ReclaimablePods={gate}").parse().unwrap(),
            ..EngineConfig::default()
        });
        state.apply_workload(&four_pods("running", ""), fallback());
        state.engine().run_until_stable();
        state.apply_workload(&four_pods("next", ""), fallback());
        state.engine().run_until_stable();
        assert!(matches!(
            status(&mut state, "next"),
            WorkloadStatus::Pending { .. }
        ));

        let mut smaller = four_pods("next", "");
        smaller.spec.pod_sets[0].count = 3;
        state.apply_workload(&smaller, fallback());
        state.apply_workload(&four_pods("running", THREE_RECLAIMABLE), fallback());
        state.engine().run_until_stable();
        let next = status(&mut state, "next");
        assert_eq!(
            matches!(next, WorkloadStatus::Admitted(_)),
            gate,
            "gate {gate}: {next:?}"
        );
        let report = state.engine().queue_report();
        let q = report.cluster_queue("q").expect("q is reported");
        let total = q.usage[0].resources[0].total;
        assert_eq!(
            total.to_string(),
            "1",
            "gate {gate}: 250m held by the running Workload and 750m by the next, or 1 cpu by the running one"
        );
    }
}

/// A waiting Workload with reclaimable pods (a job evicted after some of its pods succeeded)
/// asks only for the pods still needed, and is admitted for that many.
#[test]
fn a_waiting_workload_asks_only_for_the_pods_still_needed() {
    let mut state = state();
    let mut holder = four_pods("holder", "");
    holder.spec.pod_sets[0].count = 3;
    state.apply_workload(&holder, fallback());
    state.engine().run_until_stable();
    let back = four_pods(
        "back",
        "status:\n  reclaimablePods: [{name: main, count: 3}]\n",
    );
    state.apply_workload(&back, fallback());
    state.engine().run_until_stable();
    let WorkloadStatus::Admitted(admission) = status(&mut state, "back") else {
        panic!("250m for the one pod still needed fits");
    };
    assert_eq!(admission.pod_set_assignments[0].count, 1);
}

/// Workload `name` carrying `kueue.x-k8s.io/admission-gated-by: gates`.
fn gated(name: &str, gates: &str) -> api::Workload {
    let mut workload = workload(name, "");
    workload.metadata.annotations = Some(
        [(
            "kueue.x-k8s.io/admission-gated-by".to_string(),
            gates.to_string(),
        )]
        .into(),
    );
    workload
}

/// A Workload read with `admission-gated-by` waits with Kueue's reason while the gate
/// `AdmissionGatedBy` is on (the default); an empty value gates nothing, as in Kueue.
#[test]
fn an_admission_gated_workload_waits_with_the_gates_named() {
    let mut state = state();
    state.apply_workload(&gated("gated", "example.com/check"), fallback());
    state.apply_workload(&gated("empty", ""), fallback());
    state.engine().run_until_stable();
    assert_eq!(
        status(&mut state, "gated"),
        WorkloadStatus::Pending {
            reason: PendingReason::AdmissionGated,
            message: "Admission is gated by: example.com/check".into(),
        }
    );
    assert!(matches!(
        status(&mut state, "empty"),
        WorkloadStatus::Admitted(_)
    ));

    let mut off = state_with(EngineConfig {
        features: "AdmissionGatedBy=false".parse().unwrap(),
        ..Default::default()
    });
    off.apply_workload(&gated("gated", "example.com/check"), fallback());
    off.engine().run_until_stable();
    assert!(matches!(
        status(&mut off, "gated"),
        WorkloadStatus::Admitted(_)
    ));
}

/// A Workload an integration put on hold (`QuotaReserved=False`, `OnHold`, a StatefulSet scaled
/// to zero) waits with that reason and message and is never admitted; taken off hold, it is.
#[test]
fn a_workload_on_hold_waits_until_the_hold_comes_off() {
    let mut state = state();
    let condition = |reason: &str, message: &str| {
        format!(
            "status:\n  conditions:\n  - {{type: QuotaReserved, status: \"False\", reason: {reason}, \
             message: \"{message}\", lastTransitionTime: \"2026-01-01T00:00:00Z\"}}\n"
        )
    };
    let held = workload(
        "held",
        &condition("OnHold", "StatefulSet scaled to zero; workload on hold"),
    );
    state.apply_workload(&held, fallback());
    state.engine().run_until_stable();
    assert_eq!(
        status(&mut state, "held"),
        WorkloadStatus::Pending {
            reason: PendingReason::OnHold,
            message: "The workload is on hold".into(),
        }
    );
    let released = workload("held", &condition("PendingEvaluation", "no longer on hold"));
    state.apply_workload(&released, fallback());
    state.engine().run_until_stable();
    assert!(matches!(
        status(&mut state, "held"),
        WorkloadStatus::Admitted(_)
    ));
}
