use serde_json::json;

use super::*;
use crate::jobs::fixtures::{condition, job, workload};
use crate::jobs::job_lifecycle::start_job;

fn flavors() -> BTreeMap<String, FlavorInfo> {
    BTreeMap::from([(
        "on-demand".to_owned(),
        FlavorInfo {
            node_labels: BTreeMap::from([("instance-type".to_owned(), "on-demand".to_owned())]),
            tolerations: vec![k8s_openapi::api::core::v1::Toleration {
                key: Some("spot".to_owned()),
                operator: Some("Exists".to_owned()),
                ..Default::default()
            }],
        },
    )])
}

fn sync(job: &Job, workload: &Workload) -> WorkloadSync {
    workload_sync(job, workload, &flavors(), &FeatureGates::default()).unwrap()
}

/// The sample Workload before admission.
fn pending() -> Workload {
    workload(json!({"status": {
        "admission": null,
        "conditions": [condition("QuotaReserved", false, "Pending", "2026-01-01T00:00:00Z")]
    }}))
}

fn running() -> Job {
    let infos = pod_set_infos(&workload(json!({})), &flavors(), &FeatureGates::default()).unwrap();
    start_job(&job(json!({})), &infos).unwrap()
}

#[test]
fn a_job_matches_the_workload_built_from_it() {
    assert_eq!(sync(&job(json!({})), &pending()), WorkloadSync::InSync);
}

#[test]
fn a_running_job_matches_its_admitted_workload() {
    assert_eq!(sync(&running(), &workload(json!({}))), WorkloadSync::InSync);
}

#[test]
fn a_suspended_job_changed_before_admission_updates_its_workload() {
    let bigger = job(json!({"spec": {"parallelism": 6, "completions": 6}}));
    assert_eq!(sync(&bigger, &pending()), WorkloadSync::Update);
    let new_requests = job(json!({"spec": {"template": {"spec": {"containers": [{
        "name": "main", "image": "busybox", "resources": {"requests": {"cpu": "2"}}
    }]}}}}));
    assert_eq!(sync(&new_requests, &pending()), WorkloadSync::Update);
}

#[test]
fn a_job_that_no_longer_matches_a_workload_holding_quota_replaces_it() {
    let bigger = job(json!({"spec": {"parallelism": 6, "completions": 6}}));
    assert_eq!(sync(&bigger, &workload(json!({}))), WorkloadSync::Replace);
    let mut running_bigger = running();
    running_bigger.spec.as_mut().unwrap().parallelism = Some(6);
    running_bigger.spec.as_mut().unwrap().completions = Some(6);
    assert_eq!(
        sync(&running_bigger, &workload(json!({}))),
        WorkloadSync::Replace
    );
}

#[test]
fn a_suspended_job_still_matches_the_spec_of_its_reserved_workload() {
    // Quota is reserved but the Job has not been started yet: its template lacks the flavor's
    // selector and tolerations, and it is compared with the spec instead.
    let reserved = workload(json!({"status": {"conditions": [
        condition("QuotaReserved", true, "QuotaReserved", "2026-01-01T00:00:00Z")
    ]}}));
    assert_eq!(sync(&job(json!({})), &reserved), WorkloadSync::InSync);
}

#[test]
fn tolerations_count_until_admission() {
    let tolerating = job(json!({"spec": {"template": {"spec": {"tolerations": [
        {"key": "team", "operator": "Exists"}
    ]}}}}));
    assert_eq!(sync(&tolerating, &pending()), WorkloadSync::Update);
    let mut admitted_running = running();
    admitted_running
        .spec
        .as_mut()
        .unwrap()
        .template
        .spec
        .as_mut()
        .unwrap()
        .tolerations
        .get_or_insert_default()
        .push(k8s_openapi::api::core::v1::Toleration {
            key: Some("team".to_owned()),
            ..Default::default()
        });
    assert_eq!(
        sync(&admitted_running, &workload(json!({}))),
        WorkloadSync::InSync
    );
}

#[test]
fn another_owner_or_execution_time_does_not_match() {
    let gates = FeatureGates::default();
    let other_uid = workload(json!({"metadata": {"ownerReferences": [{
        "apiVersion": "batch/v1", "kind": "Job", "name": "sample", "uid": "other", "controller": true
    }]}}));
    assert!(!job_matches_workload(&job(json!({})), &other_uid, &flavors(), &gates).unwrap());
    let without_orphans = gates.clone().with(Feature::FinishOrphanedWorkloads, false);
    assert!(
        job_matches_workload(&job(json!({})), &other_uid, &flavors(), &without_orphans).unwrap()
    );

    let other_name = workload(json!({"metadata": {"ownerReferences": [{
        "apiVersion": "batch/v1", "kind": "Job", "name": "other", "uid": "x", "controller": true
    }]}}));
    assert!(!job_matches_workload(&job(json!({})), &other_name, &flavors(), &gates).unwrap());

    let timed =
        job(json!({"metadata": {"labels": {"kueue.x-k8s.io/max-exec-time-seconds": "60"}}}));
    assert!(!job_matches_workload(&timed, &pending(), &flavors(), &gates).unwrap());
}

#[test]
fn a_partially_admitted_running_job_matches_its_admitted_count() {
    let partial_job = job(json!({"metadata": {"annotations": {
        "kueue.x-k8s.io/job-min-parallelism": "1"
    }}}));
    let partial_workload = workload(json!({
        "spec": {"podSets": [{
            "name": "main", "count": 4, "minCount": 1,
            "template": crate::jobs::fixtures::template(),
            "topologyRequest": {"podIndexLabel": "batch.kubernetes.io/job-completion-index"}
        }]},
        "status": {"admission": {"podSetAssignments": [{
            "name": "main", "flavors": {"cpu": "on-demand"}, "resourceUsage": {"cpu": "2"}, "count": 2
        }]}}
    }));
    let infos = pod_set_infos(&partial_workload, &flavors(), &FeatureGates::default()).unwrap();
    let started = start_job(&partial_job, &infos).unwrap();
    assert_eq!(sync(&started, &partial_workload), WorkloadSync::InSync);
}

#[test]
fn an_unreadable_job_is_an_error() {
    let broken = job(json!({"metadata": {"annotations": {
        "kueue.x-k8s.io/job-min-parallelism": "many"
    }}}));
    assert!(workload_sync(&broken, &pending(), &flavors(), &FeatureGates::default()).is_err());
}

/// The sample container with `env`.
fn with_env(env: serde_json::Value) -> serde_json::Value {
    json!({"spec": {"template": {"spec": {"containers": [{
        "name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1"}}, "env": env
    }]}}}})
}

#[test]
fn a_job_listing_a_variable_twice_matches_the_workload_holding_its_last_value() {
    let twice = with_env(json!([
        {"name": "A", "value": "first"}, {"name": "B", "value": "b"}, {"name": "A", "value": "last"}
    ]));
    let once = with_env(json!([{"name": "A", "value": "last"}, {"name": "B", "value": "b"}]));
    let mut stored = pending();
    let mut admitted = workload(json!({}));
    for workload in [&mut stored, &mut admitted] {
        let template: k8s_openapi::api::core::v1::PodTemplateSpec =
            serde_json::from_value(once["spec"]["template"].clone()).unwrap();
        let pod_set = &mut workload.spec.pod_sets[0];
        std::sync::Arc::make_mut(&mut pod_set.template).spec = template.spec;
    }
    assert_eq!(sync(&job(twice.clone()), &stored), WorkloadSync::InSync);

    let infos = pod_set_infos(&admitted, &flavors(), &FeatureGates::default()).unwrap();
    let started = start_job(&job(twice), &infos).unwrap();
    assert_eq!(sync(&started, &admitted), WorkloadSync::InSync);
}
