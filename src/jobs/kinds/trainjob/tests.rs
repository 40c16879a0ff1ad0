use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::engine::features::FeatureGates;
use crate::jobs::framework::{
    FrameworkError, WorkloadContext, in_step, pod_set_source, start, stop, workload_for,
};
use crate::jobs::{FlavorInfo, PriorityLookup};

fn train_job(spec: Value) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
        "metadata": {"name": "train", "namespace": "ml", "uid": "uid-1",
                     "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": spec}))
    .expect("a TrainJob")
}

fn torch_runtime() -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
        "metadata": {"name": "torch", "namespace": "ml"},
        "spec": {"mlPolicy": {"numNodes": 1, "torch": {}}, "template": {"spec": {
            "replicatedJobs": [{"name": "node", "replicas": 1, "template": {
                "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                "spec": {"template": {
                    "metadata": {"annotations": {
                        "kueue.x-k8s.io/podset-required-topology": "rack"}},
                    "spec": {"containers": [{"name": "node", "image": "i",
                        "resources": {"requests": {"cpu": "1"}}}]}}}}}]}}}}))
    .expect("a runtime")
}

fn suspended_job() -> DynamicObject {
    train_job(json!({"suspend": true,
        "runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime",
                       "name": "torch"},
        "trainer": {"numNodes": 2}}))
}

fn ctx<'a>(
    priorities: &'a PriorityLookup,
    runtime: Option<&'a DynamicObject>,
) -> WorkloadContext<'a> {
    WorkloadContext {
        priorities,
        label_keys_to_copy: &[],
        referenced: runtime,
    }
}

fn flavors() -> BTreeMap<String, FlavorInfo> {
    BTreeMap::from([(
        "on-demand".to_owned(),
        FlavorInfo {
            node_labels: BTreeMap::from([("pool".to_owned(), "od".to_owned())]),
            tolerations: Vec::new(),
        },
    )])
}

fn admitted(workload: &mut crate::api::Workload) {
    workload.status = serde_json::from_value(json!({"admission": {
        "clusterQueue": "cq",
        "podSetAssignments": [{"name": "node", "flavors": {"cpu": "on-demand"}, "count": 2}]},
        "conditions": [{"type": "QuotaReserved", "status": "True", "reason": "r",
            "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"},
            {"type": "Admitted", "status": "True", "reason": "r",
            "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}))
    .expect("a status");
}

#[test]
fn the_runtime_ref_is_defaulted_as_the_crd_does_and_an_unknown_runtime_kind_is_refused() {
    let cluster = TRAINJOB
        .reference(&train_job(json!({"runtimeRef": {"name": "torch"}})))
        .unwrap()
        .unwrap();
    assert_eq!(cluster.kind.kind, "ClusterTrainingRuntime");
    assert_eq!(cluster.namespace, None);
    let namespaced = TRAINJOB.reference(&suspended_job()).unwrap().unwrap();
    assert_eq!(namespaced.kind.kind, "TrainingRuntime");
    assert_eq!(namespaced.namespace.as_deref(), Some("ml"));
    let other = train_job(json!({"runtimeRef": {"name": "x", "kind": "Other"}}));
    let error = TRAINJOB.reference(&other).unwrap_err().to_string();
    assert!(
        error.starts_with(
            "TrainJob train: spec.runtimeRef: unsupported runtime: Other.trainer.kubeflow.org"
        ),
        "{error}"
    );
    let unnamed = TRAINJOB.reference(&train_job(json!({}))).unwrap_err();
    assert_eq!(
        unnamed.to_string(),
        "TrainJob train: spec.runtimeRef.name is missing"
    );
}

#[test]
fn a_trainjob_whose_runtime_does_not_exist_waits_with_an_error_naming_its_runtime_ref() {
    let priorities = PriorityLookup::new();
    let error = workload_for(&TRAINJOB, &suspended_job(), ctx(&priorities, None)).unwrap_err();
    assert!(matches!(error, FrameworkError::ReferenceMissing { .. }));
    assert_eq!(
        error.to_string(),
        "TrainJob ml/train: spec.runtimeRef: TrainingRuntime ml/torch does not exist; the job waits for it"
    );
}

/// The Workload counts the runtime's trainer step with the TrainJob's nodes, ranked as a
/// JobSet's pods; started, the flavor goes into Kueue's runtime patch; stopped, it leaves once
/// no pod is active.
#[test]
fn a_trainjob_gets_its_workload_from_its_runtime_starts_through_its_runtime_patch_and_stops() {
    let priorities = PriorityLookup::new();
    let runtime = torch_runtime();
    let job = suspended_job();
    let mut workload =
        workload_for(&TRAINJOB, &job, ctx(&priorities, Some(&runtime))).expect("a Workload");
    let pod_set = &workload.spec.pod_sets[0];
    assert_eq!((pod_set.name.as_str(), pod_set.count), ("node", 2));
    let topology = pod_set
        .topology_request
        .as_ref()
        .expect("a topology request");
    assert_eq!(topology.required.as_deref(), Some("rack"));
    assert_eq!(
        topology.pod_index_label.as_deref(),
        Some("batch.kubernetes.io/job-completion-index")
    );
    assert_eq!(topology.sub_group_count, Some(1));
    assert!(
        in_step(
            &TRAINJOB,
            &job,
            Some(&runtime),
            &workload,
            &flavors(),
            &FeatureGates::default()
        )
        .unwrap()
    );

    admitted(&mut workload);
    let started = start(
        &TRAINJOB,
        &job,
        Some(&runtime),
        &workload,
        &flavors(),
        &FeatureGates::default(),
    )
    .expect("started");
    assert!(!TRAINJOB.is_suspended(&started));
    let patch = &started.data["spec"]["runtimePatches"][0];
    assert_eq!(patch["manager"], "kueue.x-k8s.io/manager");
    let pod = &patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0];
    assert_eq!(pod["name"], "node");
    assert_eq!(
        pod["template"]["spec"]["template"]["spec"]["nodeSelector"],
        json!({"pool": "od"})
    );
    assert_eq!(
        pod["template"]["spec"]["template"]["metadata"]["labels"]["kueue.x-k8s.io/podset"],
        "node"
    );
    // The Workload describes the job as asked: Kueue's own patch is left out of its pod sets.
    let composed = pod_set_source(&TRAINJOB, &started, Some(&runtime)).expect("composed");
    assert_eq!(
        composed.data["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
            .get("nodeSelector"),
        None
    );
    assert!(
        in_step(
            &TRAINJOB,
            &started,
            Some(&runtime),
            &workload,
            &flavors(),
            &FeatureGates::default()
        )
        .unwrap()
    );

    let mut running = started.clone();
    running.data["status"] = json!({"jobsStatus": [{"name": "node", "active": 1}]});
    let suspended = stop(&TRAINJOB, &running, &workload)
        .unwrap()
        .expect("suspended");
    assert!(TRAINJOB.is_suspended(&suspended));
    assert_eq!(
        suspended.data["spec"]["runtimePatches"],
        started.data["spec"]["runtimePatches"]
    );
    assert_eq!(
        stop(&TRAINJOB, &suspended, &workload).unwrap(),
        None,
        "pods still active"
    );
    let mut idle = suspended.clone();
    idle.data["status"] = json!({"jobsStatus": [{"name": "node", "active": 0}]});
    let restored = stop(&TRAINJOB, &idle, &workload)
        .unwrap()
        .expect("restored");
    assert_eq!(
        restored.data["spec"]["runtimePatches"],
        json!([{"manager": "kueue.x-k8s.io/manager",
                "trainingRuntimeSpec": {"template": {"spec": {}}}}])
    );
    assert_eq!(stop(&TRAINJOB, &restored, &workload).unwrap(), None);
}

#[test]
fn an_existing_kueue_patch_is_filled_and_other_managers_patches_are_kept() {
    let mut job = train_job(json!({"runtimePatches": [
        {"manager": "user.example/tool"},
        {"manager": "kueue.x-k8s.io/manager",
         "trainingRuntimeSpec": {"template": {"spec": {}}}}]}));
    let info = PodSetInfo {
        name: "node".to_owned(),
        count: 1,
        annotations: BTreeMap::new(),
        labels: BTreeMap::new(),
        node_selector: BTreeMap::new(),
        tolerations: Vec::new(),
        scheduling_gates: vec!["kueue.x-k8s.io/topology".to_owned()],
    };
    TRAINJOB.run_with(&mut job, &[info]).expect("written");
    let patches = job.data["spec"]["runtimePatches"].as_array().unwrap();
    assert_eq!(patches.len(), 2);
    assert_eq!(patches[0], json!({"manager": "user.example/tool"}));
    assert_eq!(
        patches[1]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"],
        json!([{"name": "node", "template": {"spec": {"template": {"metadata": {},
            "spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/topology"}]}}}}}])
    );
}

#[test]
fn readiness_and_reclaimable_pods_count_the_composed_jobs_against_jobs_status() {
    let runtime = torch_runtime();
    let mut job = suspended_job();
    job.data["status"] =
        json!({"jobsStatus": [{"name": "node", "ready": 0, "succeeded": 1, "active": 0}]});
    let composed = pod_set_source(&TRAINJOB, &job, Some(&runtime)).expect("composed");
    assert!(TRAINJOB.pods_ready(&composed));
    assert_eq!(
        TRAINJOB.reclaimable_pods(&composed),
        [ReclaimablePod {
            name: "node".to_owned(),
            count: 2
        }]
    );
    job.data["status"] = json!({"jobsStatus": [{"name": "node", "ready": 0, "active": 1}]});
    let composed = pod_set_source(&TRAINJOB, &job, Some(&runtime)).expect("composed");
    assert!(!TRAINJOB.pods_ready(&composed));
    assert!(TRAINJOB.is_active(&job));
}

#[test]
fn complete_is_success_and_failed_is_failure() {
    let with = |type_: &str| {
        let mut job = suspended_job();
        job.data["status"] = json!({"conditions": [
            {"type": type_, "status": "True", "message": "done"}]});
        TRAINJOB.finished(&job).map(|f| f.reason)
    };
    assert_eq!(with("Complete"), Some(finished_reasons::SUCCEEDED));
    assert_eq!(with("Failed"), Some(finished_reasons::FAILED));
    assert_eq!(with("Suspended"), None);
}

/// Evicted, a TrainJob is suspended at once and its admission patch removed only once its pods
/// are gone; meanwhile its Workload, pending again without an admission, still matches it even
/// though the patch holds the old flavor's tolerations.
#[test]
fn a_stopped_trainjob_still_holding_its_admission_patch_matches_its_pending_workload() {
    let priorities = PriorityLookup::new();
    let runtime = torch_runtime();
    let job = suspended_job();
    let pending = workload_for(&TRAINJOB, &job, ctx(&priorities, Some(&runtime))).expect("built");
    let mut workload = pending.clone();
    admitted(&mut workload);
    let tainted = BTreeMap::from([(
        "on-demand".to_owned(),
        FlavorInfo {
            node_labels: BTreeMap::new(),
            tolerations: vec![
                serde_json::from_value(json!({"key": "spot", "operator": "Exists"}))
                    .expect("a toleration"),
            ],
        },
    )]);
    let gates = FeatureGates::default();
    let started =
        start(&TRAINJOB, &job, Some(&runtime), &workload, &tainted, &gates).expect("started");
    let mut running = started;
    running.data["status"] = json!({"jobsStatus": [{"name": "node", "active": 2}]});
    let suspended = stop(&TRAINJOB, &running, &workload)
        .unwrap()
        .expect("suspended");
    assert!(
        suspended.data["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]
            .to_string()
            .contains("spot"),
        "the admission patch is kept while pods are active"
    );
    assert!(
        in_step(
            &TRAINJOB,
            &suspended,
            Some(&runtime),
            &pending,
            &tainted,
            &gates
        )
        .unwrap(),
        "the pending Workload still matches"
    );
}
