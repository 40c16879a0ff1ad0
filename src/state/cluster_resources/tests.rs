//! LimitRanges and RuntimeClasses in the state: a Workload is counted with them whether they
//! arrive before or after it, while it waits; an admitted one keeps what it was admitted with.

use k8s_openapi::api::core::v1::{LimitRange, Namespace as K8sNamespace};
use k8s_openapi::api::node::v1::RuntimeClass;
use serde::de::DeserializeOwned;

use crate::api;
use crate::engine::decision::PendingReason;
use crate::engine::model::EngineConfig;
use crate::engine::quantity::Quantity;
use crate::engine::{WorkloadKey, WorkloadStatus};
use crate::state::{ClusterState, Fallback};

fn parse<T: DeserializeOwned>(yaml: &str) -> T {
    yaml_serde::from_str(yaml).unwrap_or_else(|e| panic!("test manifest: {e}\n{yaml}"))
}

/// ClusterQueue `q` of 2 cpu and LocalQueue `team/lq`.
fn state() -> ClusterState {
    let mut state = ClusterState::new(EngineConfig::default());
    state.apply_namespace(&parse::<K8sNamespace>("metadata: {name: team}"));
    state.apply_resource_flavor(&parse(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}",
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
    - name: default
      resources: [{name: cpu, nominalQuota: \"2\"}]",
    ));
    state.apply_local_queue(&parse(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: team}
spec: {clusterQueue: q}",
    ));
    state
}

/// Workload `name` of one pod whose container is `container` (YAML flow mapping), with `extra`
/// (YAML, under the pod spec) and `status` (YAML) when given.
fn workload(name: &str, container: &str, extra: &str, status: &str) -> api::Workload {
    parse(&format!(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {{name: {name}, namespace: team, uid: uid-{name}, creationTimestamp: \"2026-01-01T00:00:0{}Z\"}}
spec:
  queueName: lq
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers: [{container}]
        {extra}
{status}",
        name.len() % 10
    ))
}

fn no_requests(name: &str) -> api::Workload {
    workload(name, "{name: c}", "", "")
}

fn limit_range(limits: &str) -> LimitRange {
    parse(&format!(
        "metadata: {{name: defaults, namespace: team}}
spec: {{limits: [{limits}]}}"
    ))
}

const DEFAULT_ONE_CPU: &str = "{type: Container, defaultRequest: {cpu: \"1\"}}";

fn runtime_class(overhead: &str) -> RuntimeClass {
    parse(&format!(
        "metadata: {{name: kata}}
handler: kata
overhead: {{podFixed: {{cpu: {overhead}}}}}"
    ))
}

fn fallback() -> Fallback {
    Fallback {
        creation: 0,
        uid: String::new(),
    }
}

fn status(state: &mut ClusterState, name: &str) -> WorkloadStatus {
    let key = WorkloadKey::new("team", name);
    let held = state.engine().state(&key);
    held.unwrap_or_else(|| panic!("no workload {name}")).status
}

fn cpu(state: &mut ClusterState, name: &str) -> Option<Quantity> {
    let key = WorkloadKey::new("team", name);
    let held = state.engine().workload(&key).expect("held");
    held.pod_sets[0].requests.get("cpu").copied()
}

fn admitted(state: &mut ClusterState, names: &[&str]) -> Vec<String> {
    names
        .iter()
        .filter(|n| matches!(status(state, n), WorkloadStatus::Admitted(_)))
        .map(|n| n.to_string())
        .collect()
}

/// Three Jobs without requests under a LimitRange defaulting 1 cpu: two fit a queue of 2 cpu,
/// whether the LimitRange was there first or came while they waited.
#[test]
fn a_limit_range_default_request_is_charged_before_or_after_the_workloads() {
    let names = ["a1", "a22", "a333"];
    for limit_range_first in [true, false] {
        let mut state = state();
        if limit_range_first {
            state.apply_limit_range(&limit_range(DEFAULT_ONE_CPU));
        }
        for name in names {
            state.apply_workload(&no_requests(name), fallback());
        }
        if !limit_range_first {
            assert_eq!(cpu(&mut state, "a1"), None);
            state.apply_limit_range(&limit_range(DEFAULT_ONE_CPU));
        }
        assert_eq!(cpu(&mut state, "a1"), Some("1".parse().unwrap()));
        state.engine().run_until_stable();
        assert_eq!(admitted(&mut state, &names), ["a1", "a22"]);
    }
}

/// A Workload admitted before the LimitRange keeps the quota its admission records; the waiting
/// ones are counted with the new default, and read again it is still admitted once.
#[test]
fn an_admitted_workload_keeps_what_it_was_admitted_with() {
    let mut state = state();
    state.apply_workload(&no_requests("a1"), fallback());
    state.engine().run_until_stable();
    assert!(matches!(
        status(&mut state, "a1"),
        WorkloadStatus::Admitted(_)
    ));
    state.apply_workload(&no_requests("a22"), fallback());
    state.apply_limit_range(&limit_range(
        "{type: Container, defaultRequest: {cpu: \"2\"}}",
    ));
    assert_eq!(cpu(&mut state, "a1"), None);
    assert_eq!(cpu(&mut state, "a22"), Some("2".parse().unwrap()));
    state.engine().run_until_stable();
    assert_eq!(admitted(&mut state, &["a1", "a22"]), ["a1", "a22"]);
    let report = state.engine().queue_report();
    assert_eq!(report.cluster_queue("q").map(|q| q.admitted), Some(2));
}

/// The RuntimeClass's overhead counts per pod, also when the class comes after the Workloads,
/// and no longer for a waiting one once it is deleted.
#[test]
fn runtime_class_overhead_is_charged_and_follows_the_class() {
    let mut state = state();
    let kata = |name| {
        workload(
            name,
            "{name: c, resources: {requests: {cpu: \"1\"}}}",
            "runtimeClassName: kata",
            "",
        )
    };
    state.apply_workload(&kata("a1"), fallback());
    state.apply_workload(&kata("a22"), fallback());
    assert_eq!(cpu(&mut state, "a22"), Some("1".parse().unwrap()));
    state.apply_runtime_class(&runtime_class("500m"));
    assert_eq!(cpu(&mut state, "a22"), Some("1500m".parse().unwrap()));
    state.engine().run_until_stable();
    assert_eq!(admitted(&mut state, &["a1", "a22"]), ["a1"]);
    // Without the class the waiting one asks for 1 cpu; the admitted one still holds 1500m.
    state.delete_runtime_class("kata");
    assert_eq!(cpu(&mut state, "a22"), Some("1".parse().unwrap()));
    assert_eq!(cpu(&mut state, "a1"), Some("1500m".parse().unwrap()));
    state.engine().run_until_stable();
    assert_eq!(admitted(&mut state, &["a1", "a22"]), ["a1"]);
}

/// Above the LimitRange max the Workload waits as Kueue leaves it, Misconfigured with the
/// broken rule; without the LimitRange it is admitted.
#[test]
fn a_workload_outside_the_limit_range_waits_misconfigured() {
    let mut state = state();
    state.apply_limit_range(&limit_range("{type: Container, max: {cpu: 500m}}"));
    let big = workload(
        "a1",
        "{name: c, resources: {requests: {cpu: \"1\"}}}",
        "",
        "",
    );
    state.apply_workload(&big, fallback());
    state.engine().run_until_stable();
    assert_eq!(
        status(&mut state, "a1"),
        WorkloadStatus::Pending {
            reason: PendingReason::Misconfigured,
            message: "resources didn't satisfy LimitRange constraints: \
                      spec.podSets[0].template.spec.containers[0]: Invalid value: [\"cpu\"]: \
                      requests must not be above the limitRange max"
                .into(),
        }
    );
    state.delete_limit_range(&crate::api::ObjectKey::new("team", "defaults"));
    state.engine().run_until_stable();
    assert_eq!(admitted(&mut state, &["a1"]), ["a1"]);
}

/// Requests above limits are Kueue's invalid resources, LimitRange or not.
#[test]
fn requests_above_limits_wait_misconfigured() {
    let mut state = state();
    let invalid = workload(
        "a1",
        "{name: c, resources: {requests: {cpu: \"2\"}, limits: {cpu: \"1\"}}}",
        "",
        "",
    );
    state.apply_workload(&invalid, fallback());
    state.engine().run_until_stable();
    let WorkloadStatus::Pending { reason, message } = status(&mut state, "a1") else {
        panic!("a1 must wait");
    };
    assert_eq!(reason, PendingReason::Misconfigured);
    assert_eq!(
        message,
        "resources validation failed: spec.podSets[0].template.spec.containers[0]: \
         Invalid value: [\"cpu\"]: requests must not exceed its limits"
    );
}

/// As in Kueue, a Workload outside its LimitRange stays in its queue: at the head of a
/// StrictFIFO queue the ones behind it wait; a BestEffortFIFO queue admits them.
#[test]
fn a_misconfigured_head_holds_a_strict_fifo_queue() {
    for strict in [true, false] {
        let mut state = state();
        if strict {
            state.apply_cluster_queue(&parse(
                "apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  queueingStrategy: StrictFIFO
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: \"2\"}]",
            ));
        }
        state.apply_limit_range(&limit_range("{type: Container, max: {cpu: 500m}}"));
        let big = workload(
            "a1",
            "{name: c, resources: {requests: {cpu: \"1\"}}}",
            "",
            "",
        );
        let small = workload(
            "a22",
            "{name: c, resources: {requests: {cpu: 100m}}}",
            "",
            "",
        );
        state.apply_workload(&big, fallback());
        state.apply_workload(&small, fallback());
        state.engine().run_until_stable();
        assert!(matches!(
            status(&mut state, "a1"),
            WorkloadStatus::Pending {
                reason: PendingReason::Misconfigured,
                ..
            }
        ));
        let expected: &[&str] = if strict { &[] } else { &["a22"] };
        assert_eq!(admitted(&mut state, &["a22"]), expected, "strict: {strict}");
        let report = state.engine().queue_report();
        assert_eq!(
            report.cluster_queue("q").map(|q| q.pending),
            Some(2 - expected.len())
        );
    }
}
