use serde_json::json;

use super::*;
use crate::engine::features::FeatureGates;
use crate::jobs::framework::{FrameworkStep, next_step, start, stop, workload_pod_sets};
use crate::jobs::kinds::ray::tests::{
    admitted, cluster_spec, counts, errors, flavors, head_containers, object,
};
use crate::jobs::{JobContext, PriorityLookup};

fn rayjob(mode: Option<&str>) -> DynamicObject {
    let mut spec = json!({"entrypoint": "python run.py", "shutdownAfterJobFinishes": true,
        "suspend": true, "rayClusterSpec": cluster_spec()});
    if let Some(mode) = mode {
        spec["submissionMode"] = json!(mode);
    }
    object("RayJob", json!({"spec": spec}))
}

#[test]
fn in_k8s_job_mode_the_submitter_is_a_pod_set_of_one_after_the_cluster() {
    let job = rayjob(Some("K8sJobMode"));
    assert_eq!(
        counts(&RAYJOB, &job),
        [
            ("head".into(), 1),
            ("small".into(), 2),
            ("multi".into(), 2),
            ("submitter".into(), 1)
        ]
    );
    for mode in [
        None,
        Some("HTTPMode"),
        Some("SidecarMode"),
        Some("InteractiveMode"),
    ] {
        let names: Vec<String> = counts(&RAYJOB, &rayjob(mode))
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["head", "small", "multi"], "{mode:?}");
    }
    let error = RAYJOB
        .pod_sets(&object("RayJob", json!({"spec": {"suspend": true}})))
        .unwrap_err();
    assert!(error.to_string().contains("spec.rayClusterSpec"), "{error}");
}

#[test]
fn without_a_submitter_template_kuberays_default_is_counted_with_the_heads_image() {
    let job = rayjob(Some("K8sJobMode"));
    let pod_sets = workload_pod_sets(&RAYJOB, &job).unwrap();
    let submitter = pod_sets.iter().find(|p| p.name == "submitter").unwrap();
    let spec = submitter.template.spec.as_ref().unwrap();
    assert_eq!(spec.restart_policy.as_deref(), Some("Never"));
    let container = &spec.containers[0];
    assert_eq!(container.name, "ray-job-submitter");
    assert_eq!(container.image.as_deref(), Some("ray:2"));
    let resources = container.resources.as_ref().unwrap();
    let requests = resources.requests.as_ref().unwrap();
    assert_eq!(requests["cpu"].0, "500m");
    assert_eq!(requests["memory"].0, "200Mi");
    assert_eq!(resources.limits.as_ref().unwrap()["cpu"].0, "1");

    let mut own = rayjob(Some("K8sJobMode"));
    own.data["spec"]["submitterPodTemplate"] = json!({"spec": {"containers": [
        {"name": "mine", "image": "submit:1", "resources": {"requests": {"cpu": "100m"}}}],
        "restartPolicy": "Never"}});
    let pod_sets = workload_pod_sets(&RAYJOB, &own).unwrap();
    let submitter = pod_sets.iter().find(|p| p.name == "submitter").unwrap();
    assert_eq!(
        submitter.template.spec.as_ref().unwrap().containers[0].name,
        "mine"
    );
}

#[test]
fn starting_writes_the_default_submitter_with_the_admission_and_stopping_keeps_it_restored() {
    let job = rayjob(Some("K8sJobMode"));
    let workload = admitted(&RAYJOB, &job);
    let started = start(
        &RAYJOB,
        &job,
        None,
        &workload,
        &flavors(),
        &FeatureGates::default(),
    )
    .unwrap();
    assert!(!RAYJOB.is_suspended(&started));
    let submitter = &started.data["spec"]["submitterPodTemplate"];
    assert_eq!(submitter["spec"]["nodeSelector"], json!({"pool": "od"}));
    assert_eq!(
        submitter["spec"]["containers"][0]["name"],
        json!("ray-job-submitter")
    );
    let head = &started.data["spec"]["rayClusterSpec"]["headGroupSpec"]["template"];
    assert_eq!(head["spec"]["nodeSelector"], json!({"pool": "od"}));

    let stopped = stop(&RAYJOB, &started, &workload).unwrap().unwrap();
    assert!(RAYJOB.is_suspended(&stopped));
    let submitter = &stopped.data["spec"]["submitterPodTemplate"];
    assert!(
        submitter["spec"].get("nodeSelector").is_none(),
        "{submitter}"
    );
    assert_eq!(submitter["spec"]["containers"][0]["image"], json!("ray:2"));
}

#[test]
fn in_sidecar_mode_the_head_counts_kuberays_submitter_container() {
    let containers = head_containers(&RAYJOB, &rayjob(Some("SidecarMode")));
    assert_eq!(
        containers,
        [
            ("ray".into(), Some("1".into()), None),
            (
                "ray-job-submitter".into(),
                Some("500m".into()),
                Some("200Mi".into())
            )
        ]
    );
    assert_eq!(
        head_containers(&RAYJOB, &rayjob(Some("K8sJobMode"))).len(),
        1
    );
}

#[test]
fn finished_once_the_deployment_is_complete_or_failed() {
    let mut job = rayjob(None);
    job.data["status"] = json!({"jobDeploymentStatus": "Running", "jobStatus": "RUNNING"});
    assert!(RAYJOB.finished(&job).is_none());
    job.data["status"] = json!({"jobDeploymentStatus": "Complete", "jobStatus": "SUCCEEDED",
        "message": "done"});
    let finished = RAYJOB.finished(&job).unwrap();
    assert_eq!(
        (finished.reason, finished.message.as_str()),
        ("Succeeded", "done")
    );
    job.data["status"] = json!({"jobDeploymentStatus": "Failed", "jobStatus": "FAILED",
        "message": "deadline"});
    assert_eq!(RAYJOB.finished(&job).unwrap().reason, "Failed");
    job.data["status"] = json!({"jobDeploymentStatus": "Complete", "jobStatus": "STOPPED"});
    assert_eq!(RAYJOB.finished(&job).unwrap().reason, "Failed");
}

#[test]
fn active_unless_new_or_suspended_and_ready_with_its_cluster() {
    let mut job = rayjob(None);
    assert!(!RAYJOB.is_active(&job));
    for (status, active) in [
        ("Suspended", false),
        ("Initializing", true),
        ("Suspending", true),
    ] {
        job.data["status"] = json!({"jobDeploymentStatus": status});
        assert_eq!(RAYJOB.is_active(&job), active, "{status}");
    }
    assert!(!RAYJOB.pods_ready(&job));
    job.data["status"]["rayClusterStatus"] = json!({"state": "ready"});
    assert!(RAYJOB.pods_ready(&job));
}

#[test]
fn a_rayjob_on_an_existing_cluster_is_skipped() {
    let mut job = rayjob(None);
    assert!(!RAYJOB.skip(&job));
    job.data["spec"]["clusterSelector"] = json!({"ray.io/cluster": "shared"});
    assert!(RAYJOB.skip(&job));
    job.data["spec"]["clusterSelector"] = json!({});
    assert!(!RAYJOB.skip(&job));
}

#[test]
fn suspend_is_spec_suspend() {
    let mut job = rayjob(None);
    assert!(RAYJOB.is_suspended(&job));
    RAYJOB.set_suspended(&mut job, false).unwrap();
    assert_eq!(job.data["spec"]["suspend"], json!(false));
    assert!(!RAYJOB.is_suspended(&job));
}

#[test]
fn validation_names_each_field_kueue_refuses() {
    assert!(errors(&RAYJOB, &rayjob(Some("K8sJobMode"))).is_empty());

    let mut both = rayjob(None);
    both.data["spec"]["clusterSelector"] = json!({"ray.io/cluster": "shared"});
    let found = errors(&RAYJOB, &both);
    assert_eq!(found.len(), 1);
    assert!(found[0].contains("spec.clusterSelector"), "{found:?}");

    let mut selector_only = object(
        "RayJob",
        json!({"spec": {
        "clusterSelector": {"ray.io/cluster": "shared"}}}),
    );
    assert!(errors(&RAYJOB, &selector_only).is_empty());
    selector_only.data["spec"] = json!({"shutdownAfterJobFinishes": true});
    let found = errors(&RAYJOB, &selector_only);
    assert!(
        found[0].contains("spec.rayClusterSpec: Required value"),
        "{found:?}"
    );

    let mut job = rayjob(None);
    job.data["spec"]["shutdownAfterJobFinishes"] = json!(false);
    job.data["spec"]["rayClusterSpec"]["enableInTreeAutoscaling"] = json!(true);
    job.data["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["groupName"] = json!("head");
    let found = errors(&RAYJOB, &job);
    let fields = [
        "spec.shutdownAfterJobFinishes",
        "spec.rayClusterSpec.enableInTreeAutoscaling",
        "spec.rayClusterSpec.workerGroupSpecs[0].groupName",
    ];
    assert_eq!(found.len(), fields.len(), "{found:?}");
    for (error, field) in found.iter().zip(fields) {
        assert!(
            error.starts_with(&format!("RayJob ray: {field}: ")),
            "{error}"
        );
    }
}

/// The reconciler's next step for `job`, which has no Workload.
fn step_without_workload(job: &DynamicObject) -> FrameworkStep {
    next_step(
        &RAYJOB,
        job,
        None,
        &[],
        JobContext {
            flavors: &flavors(),
            priorities: &PriorityLookup::new(),
            gates: &FeatureGates::default(),
            wait_for_pods_ready: false,
            label_keys_to_copy: &[],
            prebuilt: None,
        },
    )
}

#[test]
fn the_reconciler_leaves_a_rayjob_on_an_existing_cluster_alone() {
    let mut job = rayjob(None);
    job.data["spec"]["suspend"] = json!(false);
    assert!(
        matches!(step_without_workload(&job), FrameworkStep::UpdateJob { .. }),
        "a running RayJob without a Workload is stopped"
    );
    job.data["spec"]["clusterSelector"] = json!({"ray.io/cluster": "shared"});
    assert_eq!(step_without_workload(&job), FrameworkStep::Idle);
}
