//! The RayClusterSpec as Kueue reads it, on the RayCluster kind.

use std::collections::BTreeMap;

use kube::api::DynamicObject;
use serde_json::{Value, json};

use super::*;
use crate::api::Workload;
use crate::engine::features::FeatureGates;
use crate::jobs::framework::{JobKind, start, stop, workload_pod_sets};
use crate::jobs::framework::{WorkloadContext, workload_for};
use crate::jobs::{FlavorInfo, PriorityLookup};

pub(super) fn object(api_kind: &str, data: Value) -> DynamicObject {
    let mut obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "ray.io/v1", "kind": api_kind,
        "metadata": {"name": "ray", "namespace": "ns", "uid": "uid-1",
            "labels": {"kueue.x-k8s.io/queue-name": "lq"}}
    }))
    .unwrap();
    obj.data = data;
    obj
}

pub(super) fn template(image: &str, cpu: &str) -> Value {
    json!({"spec": {"containers": [{"name": "ray", "image": image,
        "resources": {"requests": {"cpu": cpu}}}]}})
}

/// A RayClusterSpec: a head of 1 cpu, group `Small` of 2 replicas and group `multi` of one
/// replica (unset) on 2 hosts.
pub(super) fn cluster_spec() -> Value {
    json!({
        "headGroupSpec": {"rayStartParams": {}, "template": template("ray:2", "1")},
        "workerGroupSpecs": [
            {"groupName": "Small", "replicas": 2, "template": template("ray:2", "500m")},
            {"groupName": "multi", "numOfHosts": 2, "template": template("ray:2", "2")},
        ],
    })
}

fn raycluster(spec: Value) -> DynamicObject {
    object("RayCluster", json!({"spec": spec}))
}

pub(super) fn counts(kind: &dyn JobKind, job: &DynamicObject) -> Vec<(String, i32)> {
    kind.pod_sets(job)
        .unwrap()
        .into_iter()
        .map(|p| (p.name, p.count))
        .collect()
}

/// The head's containers in the Workload: (name, cpu request, memory request).
pub(super) fn head_containers(
    kind: &dyn JobKind,
    job: &DynamicObject,
) -> Vec<(String, Option<String>, Option<String>)> {
    let pod_sets = workload_pod_sets(kind, job).unwrap();
    let head = pod_sets.iter().find(|p| p.name == "head").unwrap();
    let spec = head.template.spec.as_ref().unwrap();
    spec.containers
        .iter()
        .map(|c| {
            let requests = c.resources.as_ref().and_then(|r| r.requests.as_ref());
            let get = |k: &str| requests.and_then(|r| r.get(k)).map(|q| q.0.clone());
            (c.name.clone(), get("cpu"), get("memory"))
        })
        .collect()
}

pub(super) fn errors(kind: &dyn JobKind, job: &DynamicObject) -> Vec<String> {
    kind.validate_managed(job)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn pod_sets_are_the_head_then_each_worker_group_lowercased_with_hosts_counted() {
    let cluster = raycluster(cluster_spec());
    assert_eq!(
        counts(&RAYCLUSTER, &cluster),
        [("head".into(), 1), ("small".into(), 2), ("multi".into(), 2)]
    );
    let pod_sets = RAYCLUSTER.pod_sets(&cluster).unwrap();
    assert_eq!(pod_sets[0].template, "/spec/headGroupSpec/template");
    assert_eq!(pod_sets[2].template, "/spec/workerGroupSpecs/1/template");
    assert!(pod_sets.iter().all(|p| p.min_count.is_none()));
}

#[test]
fn zero_replicas_count_zero_pods_and_bad_counts_name_the_field() {
    let mut spec = cluster_spec();
    spec["workerGroupSpecs"][0]["replicas"] = json!(0);
    assert_eq!(counts(&RAYCLUSTER, &raycluster(spec.clone()))[1].1, 0);
    spec["workerGroupSpecs"][1]["numOfHosts"] = json!(-1);
    let error = RAYCLUSTER.pod_sets(&raycluster(spec)).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("spec.workerGroupSpecs[1].numOfHosts"),
        "{error}"
    );
    let error = RAYCLUSTER
        .pod_sets(&object("RayCluster", json!({})))
        .unwrap_err();
    assert!(error.to_string().contains("spec is missing"), "{error}");
}

#[test]
fn suspend_is_spec_suspend() {
    let mut cluster = raycluster(cluster_spec());
    assert!(!RAYCLUSTER.is_suspended(&cluster));
    RAYCLUSTER.set_suspended(&mut cluster, true).unwrap();
    assert_eq!(cluster.data["spec"]["suspend"], json!(true));
    assert!(RAYCLUSTER.is_suspended(&cluster));
    RAYCLUSTER.set_suspended(&mut cluster, false).unwrap();
    assert!(!RAYCLUSTER.is_suspended(&cluster));
}

#[test]
fn a_raycluster_never_finishes_and_is_active_while_ready() {
    let mut cluster = raycluster(cluster_spec());
    cluster.data["status"] = json!({"state": "ready"});
    assert!(RAYCLUSTER.is_active(&cluster) && RAYCLUSTER.pods_ready(&cluster));
    assert!(RAYCLUSTER.finished(&cluster).is_none());
    cluster.data["status"] = json!({"state": "failed", "reason": "boom"});
    assert!(RAYCLUSTER.finished(&cluster).is_none());
    assert!(!RAYCLUSTER.is_active(&cluster) && !RAYCLUSTER.pods_ready(&cluster));
    cluster.data["status"] = json!({"state": "suspended"});
    assert!(!RAYCLUSTER.is_active(&cluster));
}

#[test]
fn the_head_counts_the_redis_cleanup_floor_with_gcs_fault_tolerance() {
    let plain = raycluster(cluster_spec());
    assert_eq!(
        head_containers(&RAYCLUSTER, &plain),
        [("ray".into(), Some("1".into()), None)]
    );
    let mut spec = cluster_spec();
    spec["headGroupSpec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] =
        json!("100m");
    spec["gcsFaultToleranceOptions"] = json!({"redisAddress": "redis:6379"});
    assert_eq!(
        head_containers(&RAYCLUSTER, &raycluster(spec)),
        [("ray".into(), Some("200m".into()), Some("256Mi".into()))]
    );
    // By annotation; a larger request stays.
    let mut annotated = raycluster(cluster_spec());
    annotated.metadata.annotations = Some(BTreeMap::from([(
        "ray.io/ft-enabled".into(),
        "True".into(),
    )]));
    assert_eq!(
        head_containers(&RAYCLUSTER, &annotated),
        [("ray".into(), Some("1".into()), Some("256Mi".into()))]
    );
    // The job's own template is left as it is.
    let template = annotated
        .data
        .pointer("/spec/headGroupSpec/template/spec/containers/0");
    assert_eq!(
        template.unwrap()["resources"],
        json!({"requests": {"cpu": "1"}})
    );
}

#[test]
fn the_head_counts_the_autoscaler_sidecar_with_in_tree_autoscaling() {
    let mut spec = cluster_spec();
    spec["enableInTreeAutoscaling"] = json!(true);
    let containers = head_containers(&RAYCLUSTER, &raycluster(spec.clone()));
    assert_eq!(
        containers[1],
        (
            "autoscaler".into(),
            Some("500m".into()),
            Some("512Mi".into())
        )
    );
    spec["autoscalerOptions"] = json!({"resources": {"requests": {"cpu": "250m"}}});
    let containers = head_containers(&RAYCLUSTER, &raycluster(spec));
    assert_eq!(
        containers[1],
        ("autoscaler".into(), Some("250m".into()), None)
    );
}

#[test]
fn validation_refuses_autoscaling_a_head_worker_group_and_too_many_groups() {
    assert!(errors(&RAYCLUSTER, &raycluster(cluster_spec())).is_empty());
    let mut spec = cluster_spec();
    spec["enableInTreeAutoscaling"] = json!(true);
    spec["workerGroupSpecs"][1]["groupName"] = json!("head");
    let found = errors(&RAYCLUSTER, &raycluster(spec));
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].contains("spec.enableInTreeAutoscaling"),
        "{found:?}"
    );
    assert!(
        found[1].contains("spec.workerGroupSpecs[1].groupName")
            && found[1].contains("reserved for the head group"),
        "{found:?}"
    );
    let mut spec = cluster_spec();
    spec["workerGroupSpecs"] = Value::Array(
        (0..18)
            .map(|i| json!({"groupName": format!("g{i}"), "template": template("r", "1")}))
            .collect(),
    );
    let found = errors(&RAYCLUSTER, &raycluster(spec));
    assert_eq!(
        found,
        ["RayCluster ray: spec.workerGroupSpecs: Too many: 19: must have at most 18 items"]
    );
}

/// A Workload with every pod set admitted to flavor `od` (node label `pool: od`).
pub(super) fn admitted(kind: &dyn JobKind, job: &DynamicObject) -> Workload {
    let mut workload = workload_for(
        kind,
        job,
        WorkloadContext {
            referenced: None,
            priorities: &PriorityLookup::new(),
            label_keys_to_copy: &[],
        },
    )
    .unwrap();
    let assignments: Vec<Value> = workload
        .spec
        .pod_sets
        .iter()
        .map(|p| json!({"name": p.name, "flavors": {"cpu": "od"}, "count": p.count}))
        .collect();
    workload.status = serde_json::from_value(json!({"admission": {
        "clusterQueue": "cq", "podSetAssignments": assignments}}))
    .unwrap();
    workload
}

pub(super) fn flavors() -> BTreeMap<String, FlavorInfo> {
    BTreeMap::from([(
        "od".to_owned(),
        FlavorInfo {
            node_labels: BTreeMap::from([("pool".to_owned(), "od".to_owned())]),
            tolerations: Vec::new(),
        },
    )])
}

#[test]
fn started_every_group_runs_on_its_flavor_and_stopping_restores_it() {
    let mut cluster = raycluster(cluster_spec());
    cluster.data["spec"]["suspend"] = json!(true);
    let workload = admitted(&RAYCLUSTER, &cluster);
    let started = start(
        &RAYCLUSTER,
        &cluster,
        None,
        &workload,
        &flavors(),
        &FeatureGates::default(),
    )
    .unwrap();
    assert!(!RAYCLUSTER.is_suspended(&started));
    for pointer in [
        "/spec/headGroupSpec/template",
        "/spec/workerGroupSpecs/0/template",
        "/spec/workerGroupSpecs/1/template",
    ] {
        let selector = &started.data.pointer(pointer).unwrap()["spec"]["nodeSelector"];
        assert_eq!(selector, &json!({"pool": "od"}), "{pointer}");
    }
    let stopped = stop(&RAYCLUSTER, &started, &workload).unwrap().unwrap();
    assert!(RAYCLUSTER.is_suspended(&stopped));
    let head = stopped
        .data
        .pointer("/spec/headGroupSpec/template/spec")
        .unwrap();
    assert!(head.get("nodeSelector").is_none(), "{head}");
}
