use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ResourceRequirements;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;

use super::*;
use crate::api::keys::annotations::PODSET_REQUIRED_TOPOLOGY;
use crate::state::topology_input::bound_pod;

fn pod() -> Pod {
    let mut pod = Pod::default();
    pod.metadata.name = Some("p".into());
    pod.metadata.namespace = Some("ns".into());
    pod.metadata.managed_fields = Some(vec![ManagedFieldsEntry::default()]);
    pod.metadata.labels = Some(BTreeMap::from([("app".to_string(), "x".to_string())]));
    pod.metadata.annotations = Some(BTreeMap::from([
        (PODSET_REQUIRED_TOPOLOGY.to_string(), "rack".to_string()),
        ("big".to_string(), "x".repeat(1000)),
    ]));
    pod.spec = Some(PodSpec {
        node_name: Some("n1".into()),
        containers: vec![Container {
            name: "c".into(),
            image: Some("busybox".into()),
            command: Some(vec!["sleep".into(), "1".into()]),
            resources: Some(ResourceRequirements {
                requests: Some(BTreeMap::from([("cpu".to_string(), Quantity("2".into()))])),
                ..ResourceRequirements::default()
            }),
            ..Container::default()
        }],
        resources: Some(ResourceRequirements {
            requests: Some(BTreeMap::from([(
                "memory".to_string(),
                Quantity("1Gi".into()),
            )])),
            ..ResourceRequirements::default()
        }),
        ..PodSpec::default()
    });
    pod.status = Some(PodStatus {
        phase: Some("Running".into()),
        host_ip: Some("10.0.0.1".into()),
        ..PodStatus::default()
    });
    pod
}

#[test]
fn a_slim_pod_keeps_what_capacity_reads_and_nothing_else() {
    let full = pod();
    let slim = slim_pod(full.clone());
    assert_eq!(bound_pod(&slim).unwrap(), bound_pod(&full).unwrap());
    assert_eq!(slim.metadata.managed_fields, None);
    assert_eq!(slim.metadata.labels, None);
    let annotations = slim.metadata.annotations.expect("TAS annotation kept");
    assert_eq!(annotations.len(), 1);
    let container = &slim.spec.expect("spec").containers[0];
    assert_eq!(container.image, None);
    assert_eq!(container.command, None);
    assert_eq!(slim.status.expect("status").host_ip, None);
}

#[test]
fn managed_fields_are_dropped() {
    let mut workload = crate::api::Workload::new("w", Default::default());
    workload.metadata.managed_fields = Some(vec![ManagedFieldsEntry::default()]);
    assert_eq!(slim(workload).metadata.managed_fields, None);
}

#[test]
fn a_decoded_workload_is_held_without_spare_list_capacity() {
    // Decoded from text, as a watch decodes: a list read that way grows by doubling.
    let text = serde_json::json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "ns", "finalizers": ["f"]},
        "spec": {"queueName": "lq", "podSets": [{"name": "main", "count": 1, "template": {}}]},
        "status": {
            "conditions": [{
                "type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
                "message": "m", "lastTransitionTime": "2026-11-27T07:40:01Z"
            }],
            "admission": {"clusterQueue": "cq", "podSetAssignments": [{
                "name": "main", "flavors": {"cpu": "default"}, "resourceUsage": {"cpu": "1"},
                "count": 1,
                "topologyAssignment": {"levels": ["rack"], "slices": [{
                    "domainCount": 1,
                    "valuesPerLevel": [{"universal": "r1"}],
                    "podCounts": {"universal": 1}
                }]}
            }]}
        }
    })
    .to_string();
    let decode =
        || -> crate::api::Workload { serde_json::from_str(&text).expect("a valid Workload") };
    // A clone would hold no spare capacity either: the object checked is the decoded one.
    let held = slim_workload(decode());
    assert_eq!(held, decode());
    let status = held.status.as_ref().expect("status");
    let assignments = &status
        .admission
        .as_ref()
        .expect("admission")
        .pod_set_assignments;
    let topology = assignments[0]
        .topology_assignment
        .as_ref()
        .expect("topology");
    let metadata_finalizers = held.metadata.finalizers.as_ref().expect("finalizers");
    for (list, len, capacity) in [
        (
            "spec.podSets",
            held.spec.pod_sets.len(),
            held.spec.pod_sets.capacity(),
        ),
        (
            "status.conditions",
            status.conditions.len(),
            status.conditions.capacity(),
        ),
        (
            "podSetAssignments",
            assignments.len(),
            assignments.capacity(),
        ),
        (
            "topology slices",
            topology.slices.len(),
            topology.slices.capacity(),
        ),
        (
            "valuesPerLevel",
            topology.slices[0].values_per_level.len(),
            topology.slices[0].values_per_level.capacity(),
        ),
        (
            "finalizers",
            metadata_finalizers.len(),
            metadata_finalizers.capacity(),
        ),
    ] {
        assert_eq!(capacity, len, "{list} keeps spare capacity");
    }
}

#[tokio::test]
async fn every_subscriber_of_a_shared_watch_gets_every_change_in_order_with_the_same_object() {
    let (first_tx, mut first) = mpsc::channel(8);
    let (second_tx, mut second) = mpsc::channel(8);
    let mut fanout = Fanout::<crate::api::Workload>::default();
    fanout.subscribe(&first_tx, |change| ("first", change));
    fanout.subscribe(&second_tx, |change| ("second", change));
    let object = Arc::new(crate::api::Workload::new("w", Default::default()));
    assert!(fanout.deliver(Change::Reset(vec![object.clone()])).await);
    assert!(
        fanout
            .deliver(Change::Apply(Box::new(object.clone())))
            .await
    );
    for (receiver, name) in [(&mut first, "first"), (&mut second, "second")] {
        let (got, reset) = receiver.recv().await.expect("the full list");
        assert_eq!(got, name);
        assert!(matches!(&reset, Change::Reset(list) if Arc::ptr_eq(&list[0], &object)));
        let (_, apply) = receiver.recv().await.expect("the change");
        assert!(matches!(&apply, Change::Apply(o) if Arc::ptr_eq(o, &object)));
    }
}

#[tokio::test]
async fn a_shared_watch_goes_on_for_the_tasks_still_running_and_stops_with_the_last() {
    let (first_tx, first) = mpsc::channel::<Change<Arc<crate::api::Workload>>>(8);
    let (second_tx, mut second) = mpsc::channel(8);
    let mut fanout = Fanout::default();
    fanout.subscribe(&first_tx, |change| change);
    fanout.subscribe(&second_tx, |change| change);
    drop(first);
    let object = Arc::new(crate::api::Workload::new("w", Default::default()));
    assert!(fanout.deliver(Change::Reset(vec![object.clone()])).await);
    assert!(matches!(second.recv().await, Some(Change::Reset(list)) if list.len() == 1));
    drop(second);
    assert!(!fanout.deliver(Change::Reset(Vec::new())).await);
}

fn named_pod(name: &str, node: Option<&str>, phase: &str) -> Arc<Pod> {
    let mut pod = Pod::default();
    pod.metadata.name = Some(name.into());
    pod.metadata.namespace = Some("ns".into());
    pod.spec = Some(PodSpec {
        node_name: node.map(str::to_owned),
        ..PodSpec::default()
    });
    pod.status = Some(PodStatus {
        phase: Some(phase.into()),
        ..PodStatus::default()
    });
    Arc::new(pod)
}

fn names(change: &Change<Arc<Pod>>) -> (&'static str, Vec<String>) {
    match change {
        Change::Apply(pod) => ("apply", vec![pod.name_any()]),
        Change::Delete(pod) => ("delete", vec![pod.name_any()]),
        Change::Reset(pods) => ("reset", pods.iter().map(|p| p.name_any()).collect()),
    }
}

#[tokio::test]
async fn a_selecting_subscriber_sees_its_objects_as_a_selector_on_its_own_watch_would() {
    let (all_tx, mut all) = mpsc::channel(16);
    let (bound_tx, mut bound) = mpsc::channel(16);
    let mut fanout = Fanout::<Pod>::default();
    fanout.subscribe(&all_tx, |change| change);
    fanout.subscribe_to(&bound_tx, |change| change, shared::uses_capacity);
    let pending = named_pod("pending", None, "Pending");
    let running = named_pod("running", Some("n1"), "Running");
    fanout
        .deliver(Change::Reset(vec![pending.clone(), running.clone()]))
        .await;
    // Bound now: it enters the selection.
    fanout
        .deliver(Change::Apply(Box::new(named_pod(
            "pending",
            Some("n1"),
            "Running",
        ))))
        .await;
    // Finished: it leaves the selection, as a deletion.
    fanout
        .deliver(Change::Apply(Box::new(named_pod(
            "running",
            Some("n1"),
            "Succeeded",
        ))))
        .await;
    // Changed again or deleted outside the selection: nothing to say.
    fanout
        .deliver(Change::Apply(Box::new(named_pod(
            "running",
            Some("n1"),
            "Succeeded",
        ))))
        .await;
    fanout
        .deliver(Change::Delete(Box::new(named_pod(
            "running",
            Some("n1"),
            "Succeeded",
        ))))
        .await;
    fanout
        .deliver(Change::Delete(Box::new(named_pod(
            "pending",
            Some("n1"),
            "Running",
        ))))
        .await;
    drop((fanout, all_tx, bound_tx));
    let mut seen = Vec::new();
    while let Some(change) = bound.recv().await {
        let (what, objects) = names(&change);
        seen.push(format!("{what} {}", objects.join(",")));
    }
    assert_eq!(
        seen,
        [
            "reset running",
            "apply pending",
            "delete running",
            "delete pending"
        ]
    );
    let mut everything = 0;
    while all.recv().await.is_some() {
        everything += 1;
    }
    assert_eq!(everything, 6, "an unselecting subscriber gets every change");
}

#[tokio::test]
async fn a_full_list_replaces_what_a_selecting_subscriber_was_given() {
    let (tx, mut rx) = mpsc::channel(16);
    let mut fanout = Fanout::<Pod>::default();
    fanout.subscribe_to(&tx, |change| change, shared::uses_capacity);
    fanout
        .deliver(Change::Reset(vec![named_pod("a", Some("n1"), "Running")]))
        .await;
    // Listed again after "a" finished: a later deletion of "a" is not the subscriber's.
    fanout
        .deliver(Change::Reset(vec![named_pod("a", Some("n1"), "Failed")]))
        .await;
    fanout
        .deliver(Change::Delete(Box::new(named_pod(
            "a",
            Some("n1"),
            "Failed",
        ))))
        .await;
    drop((fanout, tx));
    let mut seen = Vec::new();
    while let Some(change) = rx.recv().await {
        seen.push(names(&change));
    }
    assert_eq!(
        seen,
        [("reset", vec!["a".to_string()]), ("reset", Vec::new())]
    );
}

#[test]
fn the_shared_pod_keeps_what_every_reader_reads() {
    let mut full = pod();
    full.metadata.annotations.get_or_insert_default().extend([
        (
            crate::api::keys::annotations::WORKLOAD.to_string(),
            "w".to_string(),
        ),
        ("other".to_string(), "x".to_string()),
    ]);
    full.metadata.creation_timestamp =
        Some(serde_json::from_value(serde_json::json!("2026-01-01T00:00:00Z")).expect("a time"));
    if let Some(spec) = full.spec.as_mut() {
        spec.scheduling_gates = Some(vec![Default::default()]);
        spec.node_selector = Some(BTreeMap::from([("zone".to_string(), "a".to_string())]));
        spec.hostname = Some("h".into());
    }
    let shared = shared::slim_pod(full.clone());
    assert_eq!(slim_pod(shared.clone()), slim_pod(full.clone()));
    assert_eq!(shared.metadata.labels, full.metadata.labels);
    assert_eq!(
        shared.metadata.creation_timestamp,
        full.metadata.creation_timestamp
    );
    let kept = shared.metadata.annotations.clone().expect("annotations");
    assert!(kept.contains_key(crate::api::keys::annotations::WORKLOAD));
    assert!(!kept.contains_key("other"));
    let spec = shared.spec.expect("spec");
    let original = full.spec.expect("spec");
    assert_eq!(spec.scheduling_gates, original.scheduling_gates);
    assert_eq!(spec.node_selector, original.node_selector);
    assert_eq!(spec.hostname, None);
    assert_eq!(spec.containers[0].image, None);
}

#[test]
fn a_managed_pod_keeps_its_whole_spec() {
    let mut full = pod();
    full.metadata.labels.get_or_insert_default().insert(
        crate::api::keys::labels::MANAGED.to_string(),
        crate::api::keys::labels::MANAGED_VALUE.to_string(),
    );
    let shared = shared::slim_pod(full.clone());
    assert_eq!(shared.spec, full.spec);
    assert_eq!(shared.metadata.managed_fields, None);
}

#[test]
fn the_shared_node_keeps_what_topology_and_readiness_read() {
    use k8s_openapi::api::core::v1::{NodeCondition, NodeSpec, NodeStatus, Taint};
    let mut full = Node::default();
    full.metadata.name = Some("n1".into());
    full.metadata.labels = Some(BTreeMap::from([("zone".to_string(), "a".to_string())]));
    full.metadata.managed_fields = Some(vec![ManagedFieldsEntry::default()]);
    full.spec = Some(NodeSpec {
        taints: Some(vec![Taint {
            key: "k".into(),
            effect: "NoSchedule".into(),
            ..Taint::default()
        }]),
        unschedulable: Some(true),
        pod_cidr: Some("10.0.0.0/24".into()),
        ..NodeSpec::default()
    });
    let condition = |type_: &str| NodeCondition {
        type_: type_.into(),
        status: "True".into(),
        ..NodeCondition::default()
    };
    full.status = Some(NodeStatus {
        allocatable: Some(BTreeMap::from([("cpu".to_string(), Quantity("4".into()))])),
        conditions: Some(vec![condition("Ready"), condition("MemoryPressure")]),
        images: Some(vec![Default::default()]),
        ..NodeStatus::default()
    });
    let shared = shared::slim_node(full.clone());
    assert_eq!(
        crate::state::topology_input::node(&shared).unwrap(),
        crate::state::topology_input::node(&full).unwrap()
    );
    let status = shared.status.expect("status");
    assert_eq!(status.conditions, Some(vec![condition("Ready")]));
    assert_eq!(status.images, None);
    assert_eq!(shared.spec.expect("spec").pod_cidr, None);
    assert_eq!(shared.metadata.managed_fields, None);
}
