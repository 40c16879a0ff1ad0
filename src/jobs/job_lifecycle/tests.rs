use k8s_openapi::api::core::v1::Toleration;
use serde_json::json;

use super::*;
use crate::api::keys::scheduling_gates;
use crate::engine::features::FeatureGates;
use crate::jobs::fixtures::{job, workload};
use crate::jobs::pod_set_info::{FlavorInfo, pod_set_infos};

fn flavors() -> BTreeMap<String, FlavorInfo> {
    BTreeMap::from([(
        "on-demand".to_owned(),
        FlavorInfo {
            node_labels: BTreeMap::from([("instance-type".to_owned(), "on-demand".to_owned())]),
            tolerations: vec![Toleration {
                key: Some("spot".to_owned()),
                operator: Some("Exists".to_owned()),
                ..Toleration::default()
            }],
        },
    )])
}

fn infos(patch: serde_json::Value) -> Vec<PodSetInfo> {
    pod_set_infos(&workload(patch), &flavors(), &FeatureGates::default()).unwrap()
}

fn template_labels(job: &Job) -> BTreeMap<String, String> {
    job.spec
        .as_ref()
        .and_then(|s| s.template.metadata.as_ref())
        .and_then(|m| m.labels.clone())
        .unwrap_or_default()
}

fn node_selector(job: &Job) -> Option<BTreeMap<String, String>> {
    job.spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .and_then(|p| p.node_selector.clone())
}

fn parallelism(job: &Job) -> (Option<i32>, Option<i32>) {
    let spec = job.spec.as_ref().unwrap();
    (spec.parallelism, spec.completions)
}

#[test]
fn a_started_job_is_unsuspended_with_its_admission_merged_into_the_template() {
    let started = start_job(&job(json!({})), &infos(json!({}))).unwrap();
    assert_eq!(started.spec.as_ref().unwrap().suspend, Some(false));
    assert!(!is_suspended(&started));
    assert_eq!(
        node_selector(&started),
        Some(BTreeMap::from([(
            "instance-type".to_owned(),
            "on-demand".to_owned()
        )]))
    );
    let labels = template_labels(&started);
    assert_eq!(labels.get("app").map(String::as_str), Some("sample"));
    assert_eq!(
        labels.get(labels::POD_SET).map(String::as_str),
        Some("main")
    );
    // Not partially admissible: the counts stay as the user wrote them.
    assert_eq!(parallelism(&started), (Some(4), Some(4)));
}

#[test]
fn partial_admission_sets_parallelism_and_completions_only_when_asked() {
    let admitted_two = json!({"status": {"admission": {"podSetAssignments": [{
        "name": "main", "flavors": {"cpu": "on-demand"}, "resourceUsage": {"cpu": "2"}, "count": 2
    }]}}});
    let partial = job(json!({"metadata": {"annotations": {
        (annotations::JOB_MIN_PARALLELISM): "1"
    }}}));
    let started = start_job(&partial, &infos(admitted_two.clone())).unwrap();
    assert_eq!(parallelism(&started), (Some(2), Some(4)));

    let equal = job(json!({"metadata": {"annotations": {
        (annotations::JOB_MIN_PARALLELISM): "1",
        (annotations::JOB_COMPLETIONS_EQUAL_PARALLELISM): "true"
    }}}));
    let started = start_job(&equal, &infos(admitted_two.clone())).unwrap();
    assert_eq!(parallelism(&started), (Some(2), Some(2)));

    // Without the annotation the admitted count is not written.
    let started = start_job(&job(json!({})), &infos(admitted_two)).unwrap();
    assert_eq!(parallelism(&started), (Some(4), Some(4)));
}

#[test]
fn a_tas_admission_gates_the_template() {
    let tas = json!({"status": {"admission": {"podSetAssignments": [{
        "name": "main", "flavors": {"cpu": "on-demand"}, "resourceUsage": {"cpu": "4"}, "count": 4,
        "topologyAssignment": {"levels": ["kubernetes.io/hostname"], "slices": [{
            "domainCount": 1, "valuesPerLevel": [{"universal": "node-1"}], "podCounts": {"universal": 4}
        }]}
    }]}}});
    let started = start_job(&job(json!({})), &infos(tas)).unwrap();
    let gates: Vec<String> = started
        .spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .and_then(|p| p.scheduling_gates.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|g| g.name)
        .collect();
    assert_eq!(gates, vec![scheduling_gates::TOPOLOGY.to_owned()]);
}

#[test]
fn a_conflicting_template_cannot_start_and_the_error_is_permanent() {
    let conflicting = job(json!({"spec": {"template": {"spec": {
        "nodeSelector": {"instance-type": "spot"}
    }}}}));
    let error = start_job(&conflicting, &infos(json!({}))).unwrap_err();
    assert!(error.is_permanent());
}

#[test]
fn a_job_has_exactly_one_pod_set() {
    let error = start_job(&job(json!({})), &[]).unwrap_err();
    assert_eq!(error, PodSetInfoError::PodSetCount { want: 1, got: 0 });
}

#[test]
fn stopping_a_running_job_suspends_it_then_restores_the_template() {
    let running = job(json!({
        "spec": {"template": {"metadata": {"labels": {
            (labels::BATCH_JOB_NAME): "sample",
            (labels::BATCH_CONTROLLER_UID): "uid-1"
        }}}},
        "status": {"startTime": "2026-01-01T00:00:00Z", "active": 4}
    }));
    let running = start_job(&running, &infos(json!({}))).unwrap();
    let plan = stop_job(&running, Some(&workload(json!({}))));
    assert!(plan.stops_now());
    assert!(plan.clear_start_time);

    let suspended = plan.suspend.as_ref().unwrap();
    assert_eq!(suspended.spec.as_ref().unwrap().suspend, Some(true));
    assert!(
        !is_suspended(suspended),
        "stopping: not yet suspended for Kueue"
    );
    // The first write only suspends: the template keeps the admission until the restore.
    assert!(node_selector(suspended).is_some());

    let restored = plan.restore.as_ref().unwrap();
    assert!(is_suspended(restored));
    assert_eq!(node_selector(restored), None);
    let labels = template_labels(restored);
    assert_eq!(labels.get("app").map(String::as_str), Some("sample"));
    assert!(!labels.contains_key(labels::POD_SET));
    // The Job controller's labels survive the restore.
    assert_eq!(
        labels.get(labels::BATCH_JOB_NAME).map(String::as_str),
        Some("sample")
    );
    assert_eq!(
        labels.get(labels::BATCH_CONTROLLER_UID).map(String::as_str),
        Some("uid-1")
    );
    assert!(restored.metadata.annotations.is_none());
}

#[test]
fn stopping_a_suspended_restored_job_does_nothing() {
    let plan = stop_job(&job(json!({})), Some(&workload(json!({}))));
    assert_eq!(
        plan,
        StopPlan {
            suspend: None,
            clear_start_time: false,
            restore: None
        }
    );
}

#[test]
fn an_interrupted_stop_is_finished() {
    let half_stopped = start_job(&job(json!({})), &infos(json!({}))).unwrap();
    // Suspended with the stopping annotation, the restore never written.
    let half_stopped = stop_job(&half_stopped, None).suspend.unwrap();
    let plan = stop_job(&half_stopped, Some(&workload(json!({}))));
    let restored = plan.restore.unwrap();
    assert!(is_suspended(&restored));
    assert_eq!(node_selector(&restored), None);
}

#[test]
fn without_a_workload_the_job_is_only_suspended() {
    let running = start_job(&job(json!({})), &infos(json!({}))).unwrap();
    let plan = stop_job(&running, None);
    assert!(plan.stops_now());
    let restored = plan.restore.unwrap();
    assert!(is_suspended(&restored));
    assert!(
        node_selector(&restored).is_some(),
        "nothing to restore from"
    );
}

#[test]
fn stopping_a_partially_admitted_job_restores_its_parallelism() {
    let partial = job(json!({"metadata": {"annotations": {
        (annotations::JOB_MIN_PARALLELISM): "1",
        (annotations::JOB_COMPLETIONS_EQUAL_PARALLELISM): "true"
    }}}));
    let admitted_two = json!({"status": {"admission": {"podSetAssignments": [{
        "name": "main", "flavors": {"cpu": "on-demand"}, "resourceUsage": {"cpu": "2"}, "count": 2
    }]}}});
    let running = start_job(&partial, &infos(admitted_two)).unwrap();
    let restored = stop_job(&running, Some(&workload(json!({}))))
        .restore
        .unwrap();
    assert_eq!(parallelism(&restored), (Some(4), Some(4)));
}

#[test]
fn a_job_finishes_with_its_first_true_complete_or_failed_condition() {
    let with = |conditions: serde_json::Value| job(json!({"status": {"conditions": conditions}}));
    assert_eq!(job_finished(&job(json!({}))), None);
    assert_eq!(
        job_finished(&with(json!([{"type": "Complete", "status": "False"}]))),
        None
    );
    assert_eq!(
        job_finished(&with(json!([
            {"type": "Suspended", "status": "True"},
            {"type": "Complete", "status": "True", "message": "Reached expected number of succeeded pods"}
        ]))),
        Some(JobFinished {
            reason: finished_reasons::SUCCEEDED,
            message: "Reached expected number of succeeded pods".to_owned()
        })
    );
    assert_eq!(
        job_finished(&with(json!([
            {"type": "Failed", "status": "True", "message": "Job has reached the specified backoff limit"}
        ]))),
        Some(JobFinished {
            reason: finished_reasons::FAILED,
            message: "Job has reached the specified backoff limit".to_owned()
        })
    );
}

#[test]
fn pods_are_ready_when_ready_and_succeeded_cover_the_pod_count() {
    let with = |spec: serde_json::Value, status: serde_json::Value| {
        job_pods_ready(&job(json!({"spec": spec, "status": status})))
    };
    assert!(!with(json!({}), json!({"ready": 3})));
    assert!(with(json!({}), json!({"ready": 3, "succeeded": 1})));
    assert!(with(
        json!({}),
        json!({"ready": 2, "succeeded": 1, "uncountedTerminatedPods": {"succeeded": ["u1"]}})
    ));
    // Fewer completions than parallelism: the pod count is the completions.
    assert!(with(
        json!({"parallelism": 4, "completions": 2}),
        json!({"ready": 2})
    ));
    // Unset parallelism means 1.
    assert!(with(
        json!({"parallelism": null, "completions": null}),
        json!({"ready": 1})
    ));
}

#[test]
fn active_pods_are_those_the_job_counts_active() {
    assert!(!is_active(&job(json!({}))));
    assert!(!is_active(&job(json!({"status": {"active": 0}}))));
    assert!(is_active(&job(json!({"status": {"active": 1}}))));
}
