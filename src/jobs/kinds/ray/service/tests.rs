use serde_json::json;

use super::*;
use crate::engine::features::FeatureGates;
use crate::jobs::framework::start;
use crate::jobs::kinds::ray::tests::{admitted, cluster_spec, counts, errors, flavors, object};

fn rayservice() -> DynamicObject {
    object(
        "RayService",
        json!({"spec": {"serveConfigV2": "applications: []", "rayClusterConfig": cluster_spec()}}),
    )
}

#[test]
fn pod_sets_are_the_cluster_configs() {
    assert_eq!(
        counts(&RAYSERVICE, &rayservice()),
        [("head".into(), 1), ("small".into(), 2), ("multi".into(), 2)]
    );
    let pod_sets = RAYSERVICE.pod_sets(&rayservice()).unwrap();
    assert_eq!(
        pod_sets[0].template,
        "/spec/rayClusterConfig/headGroupSpec/template"
    );
}

#[test]
fn suspended_at_the_cluster_configs_suspend_and_started_on_its_flavor() {
    let mut service = rayservice();
    assert!(!RAYSERVICE.is_suspended(&service));
    RAYSERVICE.set_suspended(&mut service, true).unwrap();
    assert_eq!(
        service.data["spec"]["rayClusterConfig"]["suspend"],
        json!(true)
    );
    assert!(service.data["spec"].get("suspend").is_none());
    let workload = admitted(&RAYSERVICE, &service);
    let started = start(
        &RAYSERVICE,
        &service,
        None,
        &workload,
        &flavors(),
        &FeatureGates::default(),
    )
    .unwrap();
    assert!(!RAYSERVICE.is_suspended(&started));
    let worker = &started.data["spec"]["rayClusterConfig"]["workerGroupSpecs"][0]["template"];
    assert_eq!(worker["spec"]["nodeSelector"], json!({"pool": "od"}));
}

#[test]
fn never_finished_and_active_while_ready() {
    let mut service = rayservice();
    assert!(RAYSERVICE.finished(&service).is_none());
    assert!(!RAYSERVICE.is_active(&service));
    service.data["status"] = json!({"conditions": [{"type": "Ready", "status": "True"}]});
    assert!(RAYSERVICE.is_active(&service) && RAYSERVICE.pods_ready(&service));
    assert!(RAYSERVICE.finished(&service).is_none());
}

#[test]
fn validation_names_fields_under_the_cluster_config() {
    assert!(errors(&RAYSERVICE, &rayservice()).is_empty());
    let mut service = rayservice();
    service.data["spec"]["rayClusterConfig"]["enableInTreeAutoscaling"] = json!(true);
    let found = errors(&RAYSERVICE, &service);
    assert_eq!(found.len(), 1);
    assert!(
        found[0].starts_with("RayService ray: spec.rayClusterConfig.enableInTreeAutoscaling: "),
        "{found:?}"
    );
}
