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
