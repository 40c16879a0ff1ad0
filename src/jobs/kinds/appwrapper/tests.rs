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

#[test]
fn a_pod_sets_tas_annotations_name_the_labels_its_pods_are_ranked_by() {
    let mut c = job_component(Some(4));
    c["podSets"][0]["annotations"] = json!({
        "workload.codeflare.dev.appwrapper/tas-pod-index-label":
            "batch.kubernetes.io/job-completion-index",
        "workload.codeflare.dev.appwrapper/tas-sub-group-index-label":
            "jobset.sigs.k8s.io/job-index",
        "workload.codeflare.dev.appwrapper/tas-sub-group-count": "2",
    });
    let mut malformed = job_component(Some(1));
    malformed["podSets"][0]["annotations"] = json!({
        "workload.codeflare.dev.appwrapper/tas-sub-group-index-label": "x",
        "workload.codeflare.dev.appwrapper/tas-sub-group-count": "two",
    });
    let aw = wrapper(json!({"spec": {"components": [c, malformed, job_component(None)]}}));
    let sets = APPWRAPPER.pod_sets(&aw).unwrap();
    assert_eq!(
        sets[0].pod_index_label.as_deref(),
        Some("batch.kubernetes.io/job-completion-index")
    );
    assert_eq!(
        sets[0].sub_group,
        Some(SubGroup {
            index_label: "jobset.sigs.k8s.io/job-index".into(),
            count: 2
        })
    );
    assert_eq!(sets[1].sub_group, None, "a count that is no number");
    assert_eq!(sets[2].pod_index_label, None);
    assert_eq!(sets[2].sub_group, None);
}
