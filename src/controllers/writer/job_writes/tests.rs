use serde_json::json;

use super::*;

fn job(value: serde_json::Value) -> Job {
    serde_json::from_value(value).expect("a Job")
}

#[test]
fn a_job_is_changed_by_what_differs_and_keeps_fields_its_type_does_not_know() {
    let read = job(json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "train", "namespace": "ns", "resourceVersion": "7"},
        "spec": {"suspend": true, "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}},
    }));
    let mut started = read.clone();
    if let Some(spec) = started.spec.as_mut() {
        spec.suspend = Some(false);
        if let Some(pod) = spec.template.spec.as_mut() {
            pod.node_selector = Some([("rack".to_string(), "r1".to_string())].into());
        }
    }
    let patch = job_patch(&read, &started).expect("a patch");
    // The Job as a newer API server holds it, with a field the typed Job does not know.
    let mut stored = json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "train", "namespace": "ns", "resourceVersion": "7"},
        "spec": {"suspend": true, "someFutureField": {"kept": true}, "template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox", "futureContainerField": 1}]}}},
    });
    ::json_patch::patch(&mut stored, &patch).expect("the patch applies");
    assert_eq!(stored["spec"]["suspend"], false);
    assert_eq!(
        stored["spec"]["template"]["spec"]["nodeSelector"],
        json!({"rack": "r1"})
    );
    assert_eq!(stored["spec"]["someFutureField"], json!({"kept": true}));
    assert_eq!(
        stored["spec"]["template"]["spec"]["containers"][0]["futureContainerField"], 1,
        "the containers did not change, so they are not written"
    );
    assert_eq!(
        stored["metadata"]["resourceVersion"], "7",
        "the version read goes with the patch, so a newer Job refuses it"
    );
}
