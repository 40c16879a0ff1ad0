use k8s_openapi::api::core::v1::{Namespace as K8sNamespace, Node as K8sNode};
use serde::de::DeserializeOwned;

use super::*;
use crate::engine::{PendingReason, WorkloadStatus};
use crate::state::Fallback;

fn parse<T: DeserializeOwned>(yaml: &str) -> T {
    yaml_serde::from_str(yaml).unwrap_or_else(|e| panic!("test manifest: {e}\n{yaml}"))
}

fn queue(name: &str, flavor: &str, cpu: &str) -> api::ClusterQueue {
    parse(&format!(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {name}}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: {flavor}
      resources: [{{name: cpu, nominalQuota: \"{cpu}\"}}]
"
    ))
}

fn local_queue(name: &str, cq: &str) -> api::LocalQueue {
    parse(&format!(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: {name}, namespace: team}}
spec: {{clusterQueue: {cq}}}
"
    ))
}

fn workload(name: &str, queue: &str) -> api::Workload {
    parse(&format!(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {{name: {name}, namespace: team, uid: uid-{name}}}
spec:
  queueName: {queue}
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]
"
    ))
}

fn flavor(name: &str, extra: &str) -> api::ResourceFlavor {
    parse(&format!(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: {name}}}
spec: {{{extra}}}
"
    ))
}

fn status_of(state: &mut ClusterState, name: &str) -> WorkloadStatus {
    state
        .engine()
        .states()
        .into_iter()
        .find(|s| s.workload.name == name)
        .map(|s| s.status)
        .unwrap_or_else(|| panic!("no workload {name}"))
}

/// An invalid ClusterQueue, an invalid flavor and an unreadable Node are set aside with their
/// reasons; the queue naming the invalid flavor waits, and the valid queue goes on admitting.
#[test]
fn invalid_objects_are_set_aside_while_other_queues_admit() {
    let mut state = ClusterState::new(EngineConfig::default());
    state.apply_namespace(&parse::<K8sNamespace>("metadata: {name: team}"));
    state.apply_resource_flavor(&flavor("good", ""));
    state.apply_resource_flavor(&flavor("bad", "topologyName: racks"));
    let mut invalid_queue = queue("broken", "good", "4");
    invalid_queue.spec.resource_groups[0].flavors[0].resources[0].lending_limit = Some(
        k8s_openapi::apimachinery::pkg::api::resource::Quantity("1".into()),
    );
    state.apply_cluster_queue(&invalid_queue);
    state.apply_cluster_queue(&queue("healthy", "good", "4"));
    state.apply_cluster_queue(&queue("on-bad-flavor", "bad", "4"));
    state.apply_node(&parse::<K8sNode>(
        "metadata: {name: n1}\nstatus: {allocatable: {cpu: lots}}",
    ));
    for (lq, cq) in [
        ("lq-healthy", "healthy"),
        ("lq-bad", "on-bad-flavor"),
        ("lq-broken", "broken"),
    ] {
        state.apply_local_queue(&local_queue(lq, cq));
    }
    for (name, lq) in [("a", "lq-healthy"), ("b", "lq-bad"), ("c", "lq-broken")] {
        let fallback = Fallback {
            creation: 0,
            uid: String::new(),
        };
        state.apply_workload(&workload(name, lq), fallback);
    }

    let set_aside: Vec<(&str, ObjectKey, String)> = state
        .set_aside()
        .into_iter()
        .map(|s| (s.kind, s.key, s.error.to_string()))
        .collect();
    assert_eq!(set_aside.len(), 3, "{set_aside:#?}");
    assert!(set_aside[0].0 == "ClusterQueue" && set_aside[0].2.contains("lendingLimit"));
    assert!(set_aside[1].0 == "Node" && set_aside[1].2.contains("status.allocatable.cpu"));
    assert!(set_aside[2].0 == "ResourceFlavor" && set_aside[2].2.contains("spec.nodeLabels"));

    state.engine().run_until_stable();
    assert!(matches!(
        status_of(&mut state, "a"),
        WorkloadStatus::Admitted(_)
    ));
    let WorkloadStatus::Pending { reason, message } = status_of(&mut state, "b") else {
        panic!("b must wait");
    };
    assert_eq!(reason, PendingReason::Suspended);
    assert!(message.contains("flavor bad not found"), "{message}");
    let WorkloadStatus::Pending { message, .. } = status_of(&mut state, "c") else {
        panic!("c must wait");
    };
    assert!(
        message.contains("ClusterQueue broken doesn't exist"),
        "{message}"
    );

    // Fixing the flavor brings its queue back.
    state.apply_resource_flavor(&flavor("bad", "nodeLabels: {pool: x}"));
    state.engine().run_until_stable();
    assert!(matches!(
        status_of(&mut state, "b"),
        WorkloadStatus::Admitted(_)
    ));
    assert!(state.set_aside().iter().all(|s| s.kind != "ResourceFlavor"));
}

/// A workload deleted releases its quota for the next one; re-applying an unchanged object
/// changes nothing.
#[test]
fn deletes_release_quota_and_unchanged_objects_are_no_ops() {
    let mut state = ClusterState::new(EngineConfig::default());
    state.apply_namespace(&parse::<K8sNamespace>("metadata: {name: team}"));
    state.apply_resource_flavor(&flavor("good", ""));
    state.apply_cluster_queue(&queue("q", "good", "1"));
    state.apply_local_queue(&local_queue("lq", "q"));
    let fallback = |n: i64| Fallback {
        creation: n,
        uid: String::new(),
    };
    state.apply_workload(&workload("first", "lq"), fallback(1));
    state.apply_workload(&workload("second", "lq"), fallback(2));
    state.engine().run_until_stable();
    assert!(matches!(
        status_of(&mut state, "first"),
        WorkloadStatus::Admitted(_)
    ));
    assert!(matches!(
        status_of(&mut state, "second"),
        WorkloadStatus::Pending { .. }
    ));
    state.apply_cluster_queue(&queue("q", "good", "1"));
    assert!(!state.engine().cycle().changed_anything());
    state.delete_workload(&ObjectKey::new("team", "first"));
    state.engine().run_until_stable();
    assert!(matches!(
        status_of(&mut state, "second"),
        WorkloadStatus::Admitted(_)
    ));
}

/// A re-list deletes what it no longer names, keeps the rest, and clears a refusal that was fixed.
#[test]
fn a_full_list_replaces_what_the_cache_holds() {
    let mut state = ClusterState::new(EngineConfig::default());
    state.apply_namespace(&parse::<K8sNamespace>("metadata: {name: team}"));
    state.reset_resource_flavors(&[flavor("good", ""), flavor("bad", "topologyName: racks")]);
    state.apply_cluster_queue(&queue("q", "good", "1"));
    state.apply_local_queue(&local_queue("lq", "q"));
    state.reset_workloads(&[workload("first", "lq"), workload("second", "lq")]);
    state.engine().run_until_stable();
    assert!(matches!(
        status_of(&mut state, "first"),
        WorkloadStatus::Admitted(_)
    ));
    assert_eq!(state.set_aside().len(), 1);

    state.reset_resource_flavors(&[flavor("good", "")]);
    assert!(
        state.set_aside().is_empty(),
        "the refused flavor is gone with the list"
    );
    state.reset_workloads(&[workload("second", "lq")]);
    state.engine().run_until_stable();
    let names: Vec<String> = state
        .engine()
        .states()
        .into_iter()
        .map(|s| s.workload.name)
        .collect();
    assert_eq!(names, vec!["second".to_string()]);
    assert!(matches!(
        status_of(&mut state, "second"),
        WorkloadStatus::Admitted(_)
    ));
}

/// A ClusterQueue naming an AdmissionCheck waits until the check exists and is active, with
/// Kueue's reason; a check without a controller is set aside.
#[test]
fn admission_checks_gate_the_queues_that_name_them() {
    let mut state = ClusterState::new(EngineConfig::default());
    state.apply_namespace(&parse::<K8sNamespace>("metadata: {name: team}"));
    state.apply_resource_flavor(&flavor("good", ""));
    let mut checked = queue("checked", "good", "4");
    checked.spec.admission_checks_strategy = Some(parse("admissionChecks: [{name: prov}]"));
    state.apply_cluster_queue(&checked);
    state.apply_local_queue(&local_queue("lq", "checked"));
    state.apply_workload(
        &workload("w", "lq"),
        Fallback {
            creation: 0,
            uid: String::new(),
        },
    );
    let report = |state: &mut ClusterState| {
        state.engine().run_until_stable();
        let report = state.engine().queue_report();
        report.cluster_queues[0].inactive.clone()
    };
    use crate::engine::queue_report::InactiveCause;
    assert_eq!(
        report(&mut state),
        vec![InactiveCause::AdmissionCheckNotFound("prov".into())]
    );
    let check = |status: &str| -> api::AdmissionCheck {
        parse(&format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {{name: prov}}
spec: {{controllerName: example.com/prov}}
status:
  conditions:
  - {{type: Active, status: \"{status}\", reason: R, message: m, lastTransitionTime: \"2026-01-01T00:00:00Z\"}}
"
        ))
    };
    state.apply_admission_check(&check("False"));
    assert_eq!(
        report(&mut state),
        vec![InactiveCause::AdmissionCheckInactive("prov".into())]
    );
    assert!(matches!(
        status_of(&mut state, "w"),
        WorkloadStatus::Pending { .. }
    ));
    state.apply_admission_check(&check("True"));
    assert_eq!(report(&mut state), vec![]);
    assert!(matches!(
        status_of(&mut state, "w"),
        WorkloadStatus::Admitted(_)
    ));

    let mut no_controller = check("True");
    no_controller.spec.controller_name.clear();
    state.apply_admission_check(&no_controller);
    assert_eq!(state.set_aside()[0].kind, "AdmissionCheck");
    assert_eq!(
        report(&mut state),
        vec![InactiveCause::AdmissionCheckNotFound("prov".into())]
    );
}

/// A ClusterQueue whose TAS flavor names a Topology that does not exist yet is inactive with
/// Kueue's TopologyNotFound, until the Topology arrives.
#[test]
fn a_missing_topology_makes_its_queues_inactive() {
    use crate::engine::queue_report::InactiveCause;
    let mut state = ClusterState::new(EngineConfig::default());
    state.apply_resource_flavor(&flavor("tas", "topologyName: racks, nodeLabels: {pool: x}"));
    state.apply_cluster_queue(&queue("q", "tas", "4"));
    let causes = |state: &mut ClusterState| {
        state.engine().queue_report().cluster_queues[0]
            .inactive
            .clone()
    };
    assert_eq!(
        causes(&mut state),
        vec![InactiveCause::TopologyNotFound("racks".into())]
    );
    state.apply_topology(&parse(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: racks}
spec: {levels: [{nodeLabel: rack}, {nodeLabel: kubernetes.io/hostname}]}
",
    ));
    assert_eq!(causes(&mut state), vec![]);
    state.delete_topology("racks");
    assert_eq!(
        causes(&mut state),
        vec![InactiveCause::TopologyNotFound("racks".into())]
    );
}

/// An empty full list of every kind leaves nothing behind: no queue, no workload, no node, no
/// refused object.
#[test]
fn empty_full_lists_clear_every_kind() {
    let mut state = ClusterState::new(EngineConfig::default());
    state.apply_namespace(&parse::<K8sNamespace>("metadata: {name: team}"));
    state.apply_resource_flavor(&flavor("good", ""));
    state.apply_cluster_queue(&queue("q", "good", "1"));
    state.apply_local_queue(&local_queue("lq", "q"));
    state.apply_workload(
        &workload("w", "lq"),
        Fallback {
            creation: 0,
            uid: String::new(),
        },
    );
    state.apply_node(&parse::<K8sNode>(
        "metadata: {name: n1}\nstatus: {allocatable: {cpu: bad}}",
    ));
    state.engine().run_until_stable();
    assert!(matches!(
        status_of(&mut state, "w"),
        WorkloadStatus::Admitted(_)
    ));
    state.reset_workloads(&[]);
    state.reset_local_queues(&[]);
    state.reset_cluster_queues(&[]);
    state.reset_cohorts(&[]);
    state.reset_admission_checks(&[]);
    state.reset_resource_flavors(&[]);
    state.reset_topologies(&[]);
    state.reset_nodes(&[]);
    state.reset_pods(&[]);
    state.reset_priority_classes(&[]);
    state.reset_workload_priority_classes(&[]);
    state.reset_namespaces(&[]);
    state.engine().run_until_stable();
    assert!(state.engine().states().is_empty());
    assert!(state.set_aside().is_empty());
    let structure = state.engine().structure();
    assert!(structure.cluster_queues.is_empty() && structure.namespaces.is_empty());
    assert!(structure.resource_flavors.is_empty() && structure.local_queues.is_empty());
}

/// A TAS admission decision says how compact its placement is: domains used at each level and
/// the lowest level every pod shares.
#[test]
fn a_tas_admission_carries_its_placement_quality() {
    let mut state = ClusterState::new(EngineConfig::default());
    state.apply_topology(&parse(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: racks}
spec: {levels: [{nodeLabel: rack}, {nodeLabel: kubernetes.io/hostname}]}
",
    ));
    state.apply_resource_flavor(&flavor("tas", "topologyName: racks, nodeLabels: {pool: x}"));
    assert_eq!(state.set_aside(), []);
    for (name, rack) in [("n1", "r1"), ("n2", "r1"), ("n3", "r2")] {
        state.apply_node(&parse::<K8sNode>(&format!(
            "apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{pool: x, rack: {rack}, kubernetes.io/hostname: {name}}}}}
status:
  allocatable: {{cpu: \"1\", pods: \"10\"}}
  conditions: [{{type: Ready, status: \"True\"}}]
"
        )));
    }
    let mut ns = K8sNamespace::default();
    ns.metadata.name = Some("team".into());
    state.apply_namespace(&ns);
    state.apply_cluster_queue(&queue("q", "tas", "8"));
    state.apply_local_queue(&local_queue("lq", "q"));
    let mut two_pods = workload("w", "lq");
    two_pods.spec.pod_sets[0].count = 2;
    std::sync::Arc::make_mut(&mut two_pods.spec.pod_sets[0].template)
        .metadata
        .get_or_insert_with(Default::default)
        .annotations = Some(
        [(
            "kueue.x-k8s.io/podset-required-topology".to_string(),
            "rack".to_string(),
        )]
        .into(),
    );
    state.apply_workload(
        &two_pods,
        Fallback {
            creation: 0,
            uid: String::new(),
        },
    );
    let out = state.engine().cycle();
    let [decision] = out.admitted.as_slice() else {
        panic!(
            "expected one admission, got {:?}",
            status_of(&mut state, "w")
        );
    };
    let [(pod_set, quality)] = decision.placement_quality.as_slice() else {
        panic!(
            "expected one TAS pod set, got {:?}",
            decision.placement_quality
        );
    };
    assert_eq!(pod_set, "main");
    assert_eq!(quality.domains_per_level, vec![1, 2]);
    assert_eq!(quality.lowest_common_level(), Some(0));
}

/// A restarted controller may list an admitted TAS Workload before its ResourceFlavor: the
/// Workload is not set aside, and once the flavor arrives its host counts as used, so another
/// Workload is not placed on it while the ClusterQueue still has quota.
#[test]
fn an_admitted_tas_workload_listed_before_its_flavor_keeps_its_host() {
    use crate::engine::features::FeatureGates;
    use crate::engine::topology::encode;
    use crate::engine::topology::model::{DomainAssignment, DomainList, HOSTNAME_LABEL};

    let mut state = ClusterState::new(EngineConfig::default());
    let mut ns = K8sNamespace::default();
    ns.metadata.name = Some("team".into());
    state.apply_namespace(&ns);
    state.apply_cluster_queue(&queue("q", "tas", "2"));
    state.apply_local_queue(&local_queue("lq", "q"));
    let on_host = |name: &str| {
        let mut w = serde_json::to_value(workload(name, "lq")).expect("a Workload serializes");
        w["spec"]["podSets"][0]["template"]["metadata"] = serde_json::json!({"annotations": {
            "kueue.x-k8s.io/podset-required-topology": HOSTNAME_LABEL,
        }});
        w
    };
    let placed = DomainList {
        levels: vec![HOSTNAME_LABEL.to_string()],
        domains: vec![DomainAssignment {
            values: vec!["n1".to_string()],
            count: 1,
        }],
    };
    let mut admitted = on_host("old");
    let condition = |type_: &str| {
        serde_json::json!({"type": type_, "status": "True", "reason": type_, "message": "",
            "lastTransitionTime": "2026-01-01T00:00:00Z"})
    };
    admitted["status"] = serde_json::json!({
        "admission": {"clusterQueue": "q", "podSetAssignments": [{
            "name": "main", "flavors": {"cpu": "tas"}, "resourceUsage": {"cpu": "1"}, "count": 1,
            "topologyAssignment": encode(&placed, &FeatureGates::default()),
        }]},
        "conditions": [condition("QuotaReserved"), condition("Admitted")],
    });
    let fallback = || Fallback {
        creation: 0,
        uid: String::new(),
    };
    state.apply_workload(&parse(&admitted.to_string()), fallback());
    assert_eq!(state.set_aside(), []);

    state.apply_topology(&parse(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: hosts}
spec: {levels: [{nodeLabel: kubernetes.io/hostname}]}
",
    ));
    state.apply_resource_flavor(&flavor("tas", "topologyName: hosts, nodeLabels: {pool: x}"));
    state.apply_node(&parse::<K8sNode>(
        "apiVersion: v1
kind: Node
metadata: {name: n1, labels: {pool: x, kubernetes.io/hostname: n1}}
status:
  allocatable: {cpu: \"1\", pods: \"10\"}
  conditions: [{type: Ready, status: \"True\"}]
",
    ));
    state.apply_workload(&parse(&on_host("new").to_string()), fallback());
    let out = state.engine().cycle();
    assert!(
        out.admitted.is_empty(),
        "admitted onto the host the earlier Workload holds: {:?}",
        out.admitted
    );
    assert!(matches!(
        status_of(&mut state, "new"),
        WorkloadStatus::Pending { .. }
    ));
}

fn admitting_state() -> ClusterState {
    let mut state = ClusterState::new(EngineConfig::default());
    state.apply_namespace(&parse::<K8sNamespace>("metadata: {name: team}"));
    state.apply_resource_flavor(&flavor("good", ""));
    state.apply_cluster_queue(&queue("q", "good", "1"));
    state.apply_local_queue(&local_queue("lq", "q"));
    state
}

fn fallback() -> Fallback {
    Fallback {
        creation: 1,
        uid: String::new(),
    }
}

/// The cache keeps no engine form of its own, yet a Workload read again unchanged still leaves the
/// engine's decision alone, and a changed one replaces it.
#[test]
fn only_a_changed_workload_replaces_what_the_engine_decided() {
    let mut state = admitting_state();
    let read = workload("w", "lq");
    state.apply_workload(&read, fallback());
    state.engine().run_until_stable();
    assert!(matches!(
        status_of(&mut state, "w"),
        WorkloadStatus::Admitted(_)
    ));
    state.apply_workload(&read, fallback());
    assert!(matches!(
        status_of(&mut state, "w"),
        WorkloadStatus::Admitted(_)
    ));
    let mut changed = read.clone();
    changed.spec.priority = Some(5);
    state.apply_workload(&changed, fallback());
    assert!(matches!(
        status_of(&mut state, "w"),
        WorkloadStatus::Pending { .. }
    ));
}

/// A WorkloadPriorityClass whose value changes re-prioritises the Workloads that name it, keeps
/// what the engine decided for them, and the same Workload read again afterwards changes nothing.
#[test]
fn a_priority_class_change_reprioritises_without_undoing_decisions() {
    let mut state = admitting_state();
    let class = |value: i32| -> api::WorkloadPriorityClass {
        parse(&format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {{name: high}}
value: {value}
"
        ))
    };
    state.apply_workload_priority_class(&class(10));
    let mut read = workload("w", "lq");
    read.spec.priority_class_ref = Some(parse(
        "{group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: high}",
    ));
    state.apply_workload(&read, fallback());
    state.engine().run_until_stable();
    let key = crate::engine::WorkloadKey::new("team", "w");
    assert_eq!(state.engine().workload(&key).map(|w| w.priority), Some(10));
    state.apply_workload_priority_class(&class(20));
    assert_eq!(state.engine().workload(&key).map(|w| w.priority), Some(20));
    assert!(matches!(
        status_of(&mut state, "w"),
        WorkloadStatus::Admitted(_)
    ));
    state.apply_workload(&read, fallback());
    assert!(matches!(
        status_of(&mut state, "w"),
        WorkloadStatus::Admitted(_)
    ));
}

/// A cached Workload is what tells a newer version apart and where its priority comes from,
/// with the rare class boxed: 40 bytes, where an inline class made it 64. The cache's
/// `ObjectKey` takes 24 bytes more per Workload than an `"ns/name"` key did, and this gives
/// them back.
#[test]
fn a_cached_workload_is_small() {
    assert!(
        std::mem::size_of::<CachedWorkload>() <= 40,
        "a cached Workload takes {} bytes",
        std::mem::size_of::<CachedWorkload>()
    );
}

/// A re-list drops the namespaced objects it does not name by namespace and name: a LocalQueue
/// or Workload of the same name in another namespace stays.
#[test]
fn a_re_list_drops_only_what_it_does_not_name_in_its_namespace() {
    let in_namespace = |namespace: &str, mut queue: api::LocalQueue| {
        queue.metadata.namespace = Some(namespace.into());
        queue
    };
    let mut state = ClusterState::new(EngineConfig::default());
    state.apply_local_queue(&local_queue("lq", "q"));
    state.apply_local_queue(&in_namespace("other", local_queue("lq", "q")));
    let mut elsewhere = workload("w", "lq");
    elsewhere.metadata.namespace = Some("other".into());
    state.reset_workloads(&[workload("w", "lq"), elsewhere.clone()]);

    state.reset_local_queues(&[in_namespace("other", local_queue("lq", "q"))]);
    state.reset_workloads(&[elsewhere]);

    let queues: Vec<&ObjectKey> = state.engine().structure().local_queues.keys().collect();
    assert_eq!(queues, [&ObjectKey::new("other", "lq")]);
    let workloads: Vec<ObjectKey> = state
        .engine()
        .states()
        .into_iter()
        .map(|s| s.workload)
        .collect();
    assert_eq!(workloads, [ObjectKey::new("other", "w")]);
}
