use serde_json::json;

use super::*;

fn wrapper(data: Value) -> DynamicObject {
    let mut obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "workload.codeflare.dev/v1beta2", "kind": "AppWrapper",
        "metadata": {"name": "aw", "namespace": "ns"}
    }))
    .unwrap();
    obj.data = data;
    obj
}

fn job_component(replicas: Option<i64>) -> Value {
    let mut set = json!({"path": "template.spec.template"});
    if let Some(r) = replicas {
        set["replicas"] = json!(r);
    }
    json!({"podSets": [set], "template": {"apiVersion": "batch/v1", "kind": "Job",
        "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}}})
}

#[test]
fn pod_sets_follow_components_in_order_with_replicas() {
    let aw = wrapper(json!({"spec": {"suspend": true,
        "components": [job_component(Some(3)), job_component(None)]}}));
    let sets = APPWRAPPER.pod_sets(&aw).unwrap();
    let names: Vec<_> = sets.iter().map(|s| (s.name.as_str(), s.count)).collect();
    assert_eq!(names, [("aw-0", 3), ("aw-1", 1)]);
    for s in &sets {
        assert!(aw.data.pointer(&s.template).unwrap().get("spec").is_some());
    }
}

#[test]
fn a_path_to_nothing_is_an_error_naming_the_field() {
    let mut c = job_component(Some(1));
    c["podSets"][0]["path"] = json!("template.spec.nothing");
    let err = APPWRAPPER.pod_sets(&wrapper(json!({"spec": {"components": [c]}})));
    assert!(
        err.unwrap_err()
            .to_string()
            .contains("spec.components[0].podSets[0].path")
    );
}

#[test]
fn suspend_round_trips() {
    let mut aw = wrapper(json!({"spec": {"components": []}}));
    assert!(!APPWRAPPER.is_suspended(&aw));
    APPWRAPPER.set_suspended(&mut aw, true).unwrap();
    assert!(APPWRAPPER.is_suspended(&aw));
    APPWRAPPER.set_suspended(&mut aw, false).unwrap();
    assert!(!APPWRAPPER.is_suspended(&aw));
}

#[test]
fn finished_as_kueue_maps_the_phase() {
    let done = wrapper(json!({"status": {"phase": "Succeeded"}}));
    assert_eq!(APPWRAPPER.finished(&done).unwrap().reason, "Succeeded");
    let failed = wrapper(json!({"status": {"phase": "Failed"}}));
    let f = APPWRAPPER.finished(&failed).unwrap();
    assert_eq!(
        (f.reason, f.message.as_str()),
        ("Failed", "AppWrapper failed")
    );
    let deleting = wrapper(json!({"status": {"phase": "Failed",
        "conditions": [{"type": "ResourcesDeployed", "status": "True"}]}}));
    assert!(APPWRAPPER.finished(&deleting).is_none());
    assert!(
        APPWRAPPER
            .finished(&wrapper(json!({"status": {"phase": "Running"}})))
            .is_none()
    );
}

#[test]
fn pods_ready_and_active_from_conditions() {
    let aw = wrapper(json!({"status": {"conditions": [
        {"type": "PodsReady", "status": "True"}, {"type": "QuotaReserved", "status": "False"}]}}));
    assert!(APPWRAPPER.pods_ready(&aw));
    assert!(!APPWRAPPER.is_active(&aw));
}
