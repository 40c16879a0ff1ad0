//! Round trips of the trickiest shapes: a Workload with a full status and the worked examples of
//! Kueue's compact topology assignment.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::topology_assignment::{
    TopologyAssignment, TopologyAssignmentSlice, TopologyAssignmentSliceLevelIndividualValues,
    TopologyAssignmentSliceLevelValues, TopologyAssignmentSlicePodCounts,
};
use super::workload::{PriorityClassGroup, PriorityClassKind};
use super::workload_status::{CheckState, DelayedTopologyRequestState};
use super::{Workload, WorkloadPriorityClass, WorkloadPriorityClassFields};

/// Parses YAML into `T`, checks that writing it back gives the same JSON, and returns it.
fn round_trip<T: DeserializeOwned + Serialize>(yaml: &str) -> T {
    let original: Value = yaml_serde::from_str(yaml).unwrap();
    let typed: T = serde_json::from_value(original.clone()).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), original);
    typed
}

const EXAMPLE_A: &str = r#"
levels: ["kubernetes.io/hostname"]
slices:
- domainCount: 3
  valuesPerLevel:
  - individual: {prefix: "gke-pool-", roots: ["a-node-1", "a-node-2", "b-node-7"]}
  podCounts: {individual: [2, 2, 1]}
"#;

const EXAMPLE_B: &str = r#"
levels: [cloud.provider.com/topology-block, cloud.provider.com/topology-rack]
slices:
- domainCount: 2
  valuesPerLevel:
  - universal: block-1
  - individual: {prefix: "rack-", roots: ["1", "2"]}
  podCounts: {individual: [4, 2]}
"#;

fn individual(prefix: &str, roots: &[&str]) -> TopologyAssignmentSliceLevelValues {
    TopologyAssignmentSliceLevelValues {
        universal: None,
        individual: Some(TopologyAssignmentSliceLevelIndividualValues {
            prefix: Some(prefix.to_owned()),
            suffix: None,
            roots: roots.iter().map(|r| (*r).to_owned()).collect(),
        }),
    }
}

fn counts(per_domain: &[i32]) -> TopologyAssignmentSlicePodCounts {
    TopologyAssignmentSlicePodCounts {
        universal: None,
        individual: Some(per_domain.to_vec()),
    }
}

#[test]
fn worked_example_a_round_trips() {
    let assignment: TopologyAssignment = round_trip(EXAMPLE_A);
    let expected = TopologyAssignment {
        levels: vec!["kubernetes.io/hostname".to_owned()],
        slices: vec![TopologyAssignmentSlice {
            domain_count: 3,
            values_per_level: vec![individual(
                "gke-pool-",
                &["a-node-1", "a-node-2", "b-node-7"],
            )],
            pod_counts: counts(&[2, 2, 1]),
        }],
    };
    assert_eq!(assignment, expected);
}

#[test]
fn worked_example_b_round_trips() {
    let assignment: TopologyAssignment = round_trip(EXAMPLE_B);
    assert_eq!(assignment.levels.len(), 2);
    let slice = &assignment.slices[0];
    assert_eq!(slice.domain_count, 2);
    assert_eq!(
        slice.values_per_level[0],
        TopologyAssignmentSliceLevelValues {
            universal: Some("block-1".to_owned()),
            individual: None,
        }
    );
    assert_eq!(slice.values_per_level[1], individual("rack-", &["1", "2"]));
    assert_eq!(slice.pod_counts, counts(&[4, 2]));
}

#[test]
fn the_two_slice_form_of_example_a_round_trips() {
    let assignment: TopologyAssignment = round_trip(
        r#"
levels: ["kubernetes.io/hostname"]
slices:
- domainCount: 2
  valuesPerLevel: [{individual: {prefix: "gke-pool-a-node-", roots: ["1", "2"]}}]
  podCounts: {universal: 2}
- domainCount: 1
  valuesPerLevel: [{universal: "gke-pool-b-node-7"}]
  podCounts: {universal: 1}
"#,
    );
    assert_eq!(assignment.slices[0].pod_counts.universal, Some(2));
    assert_eq!(assignment.slices[1].pod_counts.universal, Some(1));
}

#[test]
fn admitted_workload_with_topology_round_trips() {
    let workload: Workload = round_trip(&format!(
        r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {{name: job-sample-1a2b3, namespace: default}}
spec:
  queueName: tas-user-queue
  priority: 100
  priorityClassRef: {{group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: high}}
  active: true
  maximumExecutionTimeSeconds: 3600
  preemptionGates: [{{name: kueue.x-k8s.io/multikueue}}]
  podSets:
  - name: main
    count: 5
    minCount: 3
    template:
      metadata:
        annotations: {{kueue.x-k8s.io/podset-required-topology: kubernetes.io/hostname}}
      spec:
        containers:
        - name: c
          image: busybox
          resources: {{requests: {{cpu: "1", memory: 1Gi}}}}
    topologyRequest:
      required: kubernetes.io/hostname
      podIndexLabel: batch.kubernetes.io/job-completion-index
      podsetSliceRequiredTopologyConstraints: [{{topology: cloud.provider.com/topology-rack, size: 5}}]
status:
  conditions:
  - {{type: QuotaReserved, status: "True", reason: QuotaReserved, message: Quota reserved in ClusterQueue tas-cq, lastTransitionTime: "2026-01-01T00:00:00Z"}}
  - {{type: Admitted, status: "True", reason: Admitted, message: The workload is admitted, lastTransitionTime: "2026-01-01T00:00:01Z"}}
  admission:
    clusterQueue: tas-cq
    podSetAssignments:
    - name: main
      count: 5
      flavors: {{cpu: tas-flavor, memory: tas-flavor}}
      resourceUsage: {{cpu: "5", memory: 5Gi}}
      delayedTopologyRequest: Ready
      topologyAssignment:
{topology}
  admissionChecks:
  - name: prov
    state: Ready
    lastTransitionTime: "2026-01-01T00:00:01Z"
    message: ""
    retryCount: 0
    podSetUpdates:
    - name: main
      nodeSelector: {{pool: a}}
      tolerations: [{{key: spot, operator: Exists, effect: NoSchedule}}]
  requeueState: {{count: 1, requeueAt: "2026-01-01T00:00:00Z"}}
  reclaimablePods: [{{name: main, count: 1}}]
  resourceRequests: [{{name: main, resources: {{cpu: "1"}}}}]
  accumulatedPastExecutionTimeSeconds: 60
  schedulingStats:
    evictions: [{{reason: Preempted, underlyingCause: InClusterQueue, count: 1}}]
  unhealthyNodes: [{{name: gke-pool-a-node-1}}]
  preemptionGates: [{{name: kueue.x-k8s.io/multikueue, position: Open, lastTransitionTime: "2026-01-01T00:00:00Z"}}]
"#,
        topology = EXAMPLE_A
            .lines()
            .filter(|l| !l.is_empty())
            .map(|l| format!("        {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    ));
    let class = workload.spec.priority_class_ref.as_ref().unwrap();
    assert_eq!(class.group, PriorityClassGroup::Kueue);
    assert_eq!(class.kind, PriorityClassKind::WorkloadPriorityClass);
    let status = workload.status.as_ref().unwrap();
    let assignment = &status.admission.as_ref().unwrap().pod_set_assignments[0];
    assert_eq!(
        assignment.delayed_topology_request,
        Some(DelayedTopologyRequestState::Ready)
    );
    assert_eq!(
        assignment.topology_assignment.as_ref().unwrap().slices[0].domain_count,
        3
    );
    assert_eq!(status.admission_checks[0].state, CheckState::Ready);
}

#[test]
fn pod_set_defaults_apply_when_name_and_count_are_absent() {
    let workload: Workload = serde_json::from_value(serde_json::json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "w"},
        "spec": {"podSets": [{"template": {"spec": {"containers": []}}}]}
    }))
    .unwrap();
    assert_eq!(workload.spec.pod_sets[0].name, "main");
    assert_eq!(workload.spec.pod_sets[0].count, 1);
    assert!(workload.spec.is_active());
}

#[test]
fn workload_priority_class_has_no_spec_wrapper() {
    let class = WorkloadPriorityClass::new(
        "high",
        WorkloadPriorityClassFields {
            value: 1000,
            description: Some("urgent".to_owned()),
        },
    );
    assert_eq!(
        serde_json::to_value(&class).unwrap(),
        serde_json::json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
            "description": "urgent"
        })
    );
    let back: WorkloadPriorityClass = round_trip(
        "{apiVersion: kueue.x-k8s.io/v1beta2, kind: WorkloadPriorityClass, metadata: {name: high}, value: 1000, description: urgent}",
    );
    assert_eq!(back.spec.value, 1000);
}

#[test]
fn unknown_enum_values_are_rejected() {
    let error = serde_json::from_value::<super::ClusterQueueSpec>(serde_json::json!({
        "queueingStrategy": "Random"
    }))
    .unwrap_err()
    .to_string();
    assert!(error.contains("Random"), "{error}");
}

#[test]
fn the_api_version_constant_is_every_kinds_own() {
    use kube::Resource;
    for api_version in [
        super::ClusterQueue::api_version(&()),
        super::Workload::api_version(&()),
        super::AdmissionCheck::api_version(&()),
    ] {
        assert_eq!(api_version, super::keys::API_VERSION);
    }
}

/// Every Workload read is held for as long as it exists, with its pod sets and its admission,
/// while few pod sets ask for a topology, few assignments carry one, and few Workloads have a
/// priority class, a requeue backoff, eviction counts or entries in the lists most leave empty:
/// those stay out of line.
#[test]
fn what_few_workloads_have_is_held_out_of_line() {
    assert!(
        std::mem::size_of::<Workload>() <= 640,
        "{}",
        std::mem::size_of::<Workload>()
    );
    use super::workload::PodSet;
    use super::workload_status::PodSetAssignment;
    assert!(
        std::mem::size_of::<PodSet>() <= 64,
        "{}",
        std::mem::size_of::<PodSet>()
    );
    assert!(
        std::mem::size_of::<PodSetAssignment>() <= 104,
        "{}",
        std::mem::size_of::<PodSetAssignment>()
    );
}
