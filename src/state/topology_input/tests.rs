//! Conversions of Nodes, Pods, Topologies, TAS flavors and admitted assignments.

use super::*;
use crate::api::topology_assignment::TopologyAssignment;
use crate::engine::features::FeatureGates;
use crate::engine::model::{Admission, PodSet, PodSetAssignment};
use crate::engine::topology::encode;
use crate::engine::topology::model::{DomainAssignment, DomainList, HOSTNAME_LABEL};

fn yaml<T: serde::de::DeserializeOwned>(text: &str) -> T {
    yaml_serde::from_str(text).unwrap()
}

#[test]
fn a_node_keeps_labels_taints_allocatable_and_readiness() {
    let n: K8sNode = yaml(
        r#"
metadata:
  name: host-1
  labels: {kubernetes.io/hostname: host-1, rack: r1}
spec:
  unschedulable: true
  taints: [{key: gpu, value: "true", effect: NoSchedule}]
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
"#,
    );
    let converted = node(&n).unwrap();
    assert_eq!(converted.name, "host-1");
    assert_eq!(converted.labels["rack"], "r1");
    assert_eq!(converted.taints[0].key, "gpu");
    assert!(converted.unschedulable);
    assert!(converted.ready);
    assert_eq!(converted.allocatable["cpu"], Quantity::from_units(8));
    assert_eq!(converted.allocatable["pods"], Quantity::from_units(110));

    let not_ready: K8sNode = yaml(
        r#"
metadata: {name: host-2}
status:
  conditions: [{type: Ready, status: "Unknown"}]
"#,
    );
    assert!(!node(&not_ready).unwrap().ready);
    let no_conditions: K8sNode = yaml("metadata: {name: host-3}");
    assert!(!node(&no_conditions).unwrap().ready);
}

#[test]
fn a_bad_allocatable_names_the_node_and_field() {
    let n: K8sNode = yaml(
        r#"
metadata: {name: host-1}
status:
  allocatable: {cpu: "eight"}
"#,
    );
    let error = node(&n).unwrap_err().to_string();
    assert!(
        error.starts_with("Node \"host-1\": field status.allocatable.cpu:"),
        "{error}"
    );
}

#[test]
fn bound_pods_carry_requests_phase_and_tas_marking() {
    let pod: Pod = yaml(
        r#"
metadata:
  namespace: team
  name: daemon
spec:
  nodeName: host-1
  containers:
  - name: c
    resources: {requests: {cpu: 500m}}
  overhead: {cpu: 100m}
status: {phase: Running}
"#,
    );
    let bound = bound_pod(&pod).unwrap().unwrap();
    assert_eq!(bound.node_name, "host-1");
    assert_eq!(bound.requests["cpu"], Quantity::from_milli(600));
    assert_eq!(bound.phase, PodPhase::Running);
    assert!(!bound.tas);

    let tas: Pod = yaml(
        r#"
metadata:
  name: worker-0
  annotations: {kueue.x-k8s.io/podset-required-topology: rack}
spec:
  nodeName: host-1
  containers: [{name: c}]
status: {phase: Succeeded}
"#,
    );
    let bound = bound_pod(&tas).unwrap().unwrap();
    assert!(bound.tas);
    assert!(bound.phase.is_terminal());

    let unbound: Pod = yaml("metadata: {name: p}\nspec: {containers: [{name: c}]}");
    assert_eq!(bound_pod(&unbound).unwrap(), None);

    let odd: Pod = yaml(
        "metadata: {name: p}\nspec: {nodeName: h, containers: [{name: c}]}\nstatus: {phase: Lost}",
    );
    let error = bound_pod(&odd).unwrap_err().to_string();
    assert!(error.contains("field status.phase"), "{error}");
}

#[test]
fn topologies_and_tas_flavors() {
    let t: ApiTopology = yaml(
        r#"
metadata: {name: default}
spec:
  levels: [{nodeLabel: block}, {nodeLabel: kubernetes.io/hostname}]
"#,
    );
    assert_eq!(
        topology(&t),
        Ok(Topology {
            name: "default".into(),
            levels: vec!["block".into(), HOSTNAME_LABEL.into()]
        })
    );
    let hostname_first: ApiTopology = yaml(
        r#"
metadata: {name: bad}
spec:
  levels: [{nodeLabel: kubernetes.io/hostname}, {nodeLabel: block}]
"#,
    );
    let error = topology(&hostname_first).unwrap_err().to_string();
    assert!(error.contains("spec.levels[0].nodeLabel"), "{error}");
    let f: ResourceFlavor = yaml(
        r#"
metadata: {name: tas}
spec:
  nodeLabels: {pool: tas}
  topologyName: default
  tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]
"#,
    );
    let converted = tas_flavor(&f).unwrap();
    assert_eq!(converted.topology_name, "default");
    assert_eq!(converted.node_labels["pool"], "tas");
    assert_eq!(converted.tolerations.len(), 1);
    let plain: ResourceFlavor = yaml("metadata: {name: plain}");
    assert_eq!(tas_flavor(&plain), None);
}

fn admitted(assignment: Option<TopologyAssignment>) -> Workload {
    Workload {
        namespace: "team".into(),
        name: "wl".into(),
        pod_sets: vec![PodSet {
            name: "main".into(),
            count: 3,
            requests: [("cpu".to_string(), Quantity::from_units(2))].into(),
            ..PodSet::default()
        }],
        admission: Some(Admission {
            cluster_queue: "cq".into(),
            pod_set_assignments: vec![PodSetAssignment {
                name: "main".into(),
                flavors: [("cpu".to_string(), "tas".to_string())].into(),
                count: 3,
                topology_assignment: assignment,
                ..PodSetAssignment::default()
            }],
        }),
        ..Workload::default()
    }
}

#[test]
fn an_admitted_assignment_becomes_tas_usage() {
    let list = DomainList {
        levels: vec![HOSTNAME_LABEL.into()],
        domains: vec![
            DomainAssignment {
                values: vec!["host-1".into()],
                count: 2,
            },
            DomainAssignment {
                values: vec!["host-2".into()],
                count: 1,
            },
        ],
    };
    let workload = admitted(Some(encode(&list, &FeatureGates::default())));
    let usage = admitted_tas_usage(&workload, |f| f == "tas")
        .unwrap()
        .unwrap();
    assert_eq!(usage.workload, crate::api::ObjectKey::new("team", "wl"));
    assert_eq!(usage.pod_sets[0].flavor, "tas");
    assert_eq!(usage.pod_sets[0].per_pod["cpu"], Quantity::from_units(2));
    assert_eq!(usage.pod_sets[0].assignment, list);

    assert_eq!(admitted_tas_usage(&admitted(None), |_| true).unwrap(), None);

    let error = admitted_tas_usage(&workload, |_| false)
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "Workload \"team/wl\": field status.admission.podSetAssignments[0].flavors: no TAS flavor for the topologyAssignment"
    );
    let broken = admitted(Some(TopologyAssignment::default()));
    let error = admitted_tas_usage(&broken, |_| true)
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with(
            "Workload \"team/wl\": field status.admission.podSetAssignments[0]: topologyAssignment.levels"
        ),
        "{error}"
    );
}
