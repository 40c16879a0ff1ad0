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
