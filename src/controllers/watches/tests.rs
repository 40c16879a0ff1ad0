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
