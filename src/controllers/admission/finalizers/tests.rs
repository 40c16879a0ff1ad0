use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::releasable;
use crate::api::keys::finalizers::RESOURCE_IN_USE;
use crate::api::{ClusterQueue, ResourceFlavor};
use crate::controllers::queue_status::QueueObjects;
use crate::controllers::writer::{FinalizedKind, FinalizerTarget};
use crate::engine::queue_report::{ClusterQueueReport, QueueReport};

fn parse<K: serde::de::DeserializeOwned>(yaml: &str) -> K {
    yaml_serde::from_str(yaml).expect("test object")
}

fn deleting<K: kube::ResourceExt>(mut object: K, finalizers: &[&str]) -> K {
    let meta = object.meta_mut();
    meta.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH));
    meta.finalizers = Some(finalizers.iter().map(|f| f.to_string()).collect());
    meta.resource_version = Some("7".into());
    object
}

fn queue(name: &str, flavor: &str) -> ClusterQueue {
    parse(&format!(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {name}}}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: {flavor}
      resources: [{{name: cpu, nominalQuota: \"1\"}}]
"
    ))
}

fn flavor(name: &str) -> ResourceFlavor {
    parse(&format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {{name: {name}}}\n"
    ))
}

fn report(admitted: &[(&str, usize)]) -> QueueReport {
    QueueReport {
        cluster_queues: admitted
            .iter()
            .map(|(name, admitted)| ClusterQueueReport {
                name: name.to_string(),
                pending: 0,
                reserving: *admitted,
                admitted: *admitted,
                reservation: Vec::new(),
                usage: Vec::new(),
                in_cohort: false,
                inactive: Vec::new(),
                weighted_share: None,
            })
            .collect(),
        local_queues: Vec::new(),
        cohorts: Vec::new(),
    }
}

fn objects(queues: Vec<ClusterQueue>, flavors: Vec<ResourceFlavor>) -> QueueObjects {
    QueueObjects {
        cluster_queues: queues
            .into_iter()
            .map(|q| (q.metadata.name.clone().unwrap_or_default(), q))
            .collect(),
        resource_flavors: flavors
            .into_iter()
            .map(|f| (f.metadata.name.clone().unwrap_or_default(), f))
            .collect(),
        ..QueueObjects::default()
    }
}

#[test]
fn a_deleted_queue_keeps_its_finalizer_while_it_holds_quota() {
    let objects = objects(
        vec![deleting(
            queue("busy", "rf"),
            &[RESOURCE_IN_USE, "other/keep"],
        )],
        Vec::new(),
    );
    assert!(releasable(&objects, &report(&[("busy", 1)])).is_empty());
    assert_eq!(
        releasable(&objects, &report(&[("busy", 0)])),
        [FinalizerTarget {
            kind: FinalizedKind::ClusterQueue,
            name: "busy".into(),
            resource_version: Some("7".into()),
            keep: vec!["other/keep".into()],
        }]
    );
}

#[test]
fn a_queue_not_being_deleted_or_without_the_finalizer_is_left_alone() {
    let objects = objects(
        vec![
            queue("live", "rf"),
            deleting(queue("foreign", "rf"), &["other/keep"]),
        ],
        vec![flavor("unused")],
    );
    assert!(releasable(&objects, &report(&[("live", 0), ("foreign", 0)])).is_empty());
}

#[test]
fn a_deleted_flavor_waits_until_no_queue_names_it() {
    let named = objects(
        vec![queue("cq", "gpu")],
        vec![deleting(flavor("gpu"), &[RESOURCE_IN_USE])],
    );
    assert!(releasable(&named, &report(&[("cq", 0)])).is_empty());
    let unnamed = objects(
        vec![queue("cq", "cpu")],
        vec![deleting(flavor("gpu"), &[RESOURCE_IN_USE])],
    );
    assert_eq!(
        releasable(&unnamed, &report(&[("cq", 0)])),
        [FinalizerTarget {
            kind: FinalizedKind::ResourceFlavor,
            name: "gpu".into(),
            resource_version: Some("7".into()),
            keep: Vec::new(),
        }]
    );
}
