use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::super::test_kind::{TestSet, test_set};
use super::*;
use crate::api::keys::labels;
use crate::api::workload_status::ReclaimablePod;
use crate::engine::features::FeatureGates;
use crate::jobs::{FlavorInfo, Prebuilt, PriorityLookup};

fn flavors() -> BTreeMap<String, FlavorInfo> {
    BTreeMap::from([("gpu".to_owned(), FlavorInfo::default())])
}

fn step(job: &DynamicObject, owned: &[&Workload], wait_for_pods_ready: bool) -> FrameworkStep {
    step_with(job, owned, wait_for_pods_ready, None)
}

fn step_with(
    job: &DynamicObject,
    owned: &[&Workload],
    wait_for_pods_ready: bool,
    prebuilt: Option<Prebuilt<'_>>,
) -> FrameworkStep {
    next_step(
        &TestSet,
        job,
        None,
        owned,
        JobContext {
            flavors: &flavors(),
            priorities: &PriorityLookup::new(),
            gates: &FeatureGates::default(),
            wait_for_pods_ready,
            label_keys_to_copy: &[],
            prebuilt,
        },
    )
}

fn built(job: &DynamicObject) -> Workload {
    workload_for(
        &TestSet,
        job,
        WorkloadContext {
            priorities: &PriorityLookup::new(),
            label_keys_to_copy: &[],
            referenced: None,
        },
    )
    .unwrap()
}

fn condition(type_: &str, reason: &str, message: &str) -> Value {
    json!({"type": type_, "status": "True", "reason": reason, "message": message,
           "lastTransitionTime": "2026-01-01T00:00:00Z"})
}

/// The job's Workload with these conditions and, when quota is reserved, its admission.
fn with_conditions(job: &DynamicObject, conditions: &[Value]) -> Workload {
    let mut workload = built(job);
    workload.status = serde_json::from_value(json!({
        "conditions": conditions,
        "admission": {"clusterQueue": "cq", "podSetAssignments": [
            {"name": "leader", "flavors": {"cpu": "gpu"}, "count": 1},
            {"name": "workers", "flavors": {"cpu": "gpu"}, "count": 4},
        ]}
    }))
    .unwrap();
    workload
}

fn admitted(job: &DynamicObject) -> Workload {
    with_conditions(
        job,
        &[
            condition("QuotaReserved", "QuotaReserved", ""),
            condition("Admitted", "Admitted", ""),
        ],
    )
}

fn running(job: &DynamicObject) -> DynamicObject {
    let mut running = job.clone();
    TestSet.set_suspended(&mut running, false).unwrap();
    running
}

#[test]
fn a_job_without_workload_gets_one() {
    let job = test_set();
    assert_eq!(
        step(&job, &[], false),
        FrameworkStep::CreateWorkload(Box::new(built(&job)))
    );
}

#[test]
fn a_job_that_cannot_have_a_workload_gets_a_warning() {
    let mut job = test_set();
    job.metadata
        .labels
        .as_mut()
        .unwrap()
        .insert(labels::PRIORITY_CLASS.to_owned(), "none".to_owned());
    assert!(matches!(
        step(&job, &[], false),
        FrameworkStep::CannotCompose {
            error: FrameworkError::WorkloadPriorityClassNotFound { .. },
            ..
        }
    ));
}

#[test]
fn a_running_job_without_workload_is_suspended_first_and_waits_for_its_pods() {
    let job = running(&test_set());
    let FrameworkStep::UpdateJob {
        job: stopped,
        event,
    } = step(&job, &[], false)
    else {
        panic!("expected the job suspended");
    };
    assert!(TestSet.is_suspended(&stopped));
    assert!(event.is_some());

    let mut draining = test_set();
    draining.data["status"] = json!({"active": 2});
    assert_eq!(step(&draining, &[], false), FrameworkStep::Idle);
}

#[test]
fn a_finished_job_finishes_its_workload() {
    let mut job = running(&test_set());
    job.data["status"] = json!({"conditions": [condition("Failed", "x", "backoff limit")]});
    let workload = admitted(&test_set());
    let FrameworkStep::FinishWorkload {
        reason, message, ..
    } = step(&job, &[&workload], false)
    else {
        panic!("expected the Workload finished");
    };
    assert_eq!((reason, message.as_str()), ("Failed", "backoff limit"));
}

#[test]
fn a_duplicate_workload_is_deleted() {
    let job = test_set();
    let first = built(&job);
    let mut second = built(&job);
    second.metadata.name = Some("second".to_owned());
    let FrameworkStep::DeleteWorkload { workload, .. } = step(&job, &[&first, &second], false)
    else {
        panic!("expected the duplicate deleted");
    };
    assert_eq!(workload.metadata.name.as_deref(), Some("second"));
}

#[test]
fn a_changed_suspended_job_updates_its_pending_workload_and_replaces_a_reserved_one() {
    let job = test_set();
    let mut scaled = job.clone();
    scaled.data["spec"]["replicatedJobs"][1]["replicas"] = json!(3);
    let FrameworkStep::UpdateWorkload(updated) = step(&scaled, &[&built(&job)], false) else {
        panic!("expected the Workload updated");
    };
    assert_eq!(updated.spec.pod_sets[1].count, 6);

    let reserved = with_conditions(&job, &[condition("QuotaReserved", "QuotaReserved", "")]);
    assert!(matches!(
        step(&scaled, &[&reserved], false),
        FrameworkStep::DeleteWorkload { .. }
    ));
}

#[test]
fn an_admitted_workload_starts_its_suspended_job() {
    let job = test_set();
    let FrameworkStep::UpdateJob { job: started, .. } = step(&job, &[&admitted(&job)], false)
    else {
        panic!("expected the job started");
    };
    assert!(!TestSet.is_suspended(&started));
}

#[test]
fn a_start_conflict_finishes_the_workload_failed_to_start() {
    let mut job = test_set();
    job.data["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"]["labels"]
        [labels::POD_SET] = json!("other");
    let workload = admitted(&test_set());
    let FrameworkStep::FinishWorkload { reason, .. } = step(&job, &[&workload], false) else {
        panic!("expected FailedToStart");
    };
    assert_eq!(reason, finished_reasons::FAILED_TO_START);
}

#[test]
fn an_evicted_or_unadmitted_workload_stops_its_running_job() {
    let job = test_set();
    let evicted = with_conditions(
        &job,
        &[
            condition("QuotaReserved", "QuotaReserved", ""),
            condition("Admitted", "Admitted", ""),
            condition("Evicted", "Preempted", "preempted by a higher priority"),
        ],
    );
    // Suspended already: nothing to stop.
    assert_eq!(step(&job, &[&evicted], false), FrameworkStep::Idle);
    let started = running(&job);
    let FrameworkStep::UpdateJob {
        job: stopped,
        event,
    } = step(&started, &[&evicted], false)
    else {
        panic!("expected the job stopped");
    };
    assert!(TestSet.is_suspended(&stopped));
    assert_eq!(
        event,
        Some(JobEvent::stopped("preempted by a higher priority"))
    );

    let pending = built(&job);
    assert!(matches!(
        step(&started, &[&pending], false),
        FrameworkStep::UpdateJob { .. }
    ));
    assert_eq!(step(&job, &[&pending], false), FrameworkStep::Idle);
}

#[test]
fn pods_ready_is_kept_while_quota_is_reserved() {
    let mut job = running(&test_set());
    job.data["status"] = json!({"ready": true});
    let workload = admitted(&test_set());
    let FrameworkStep::PodsReady { condition, .. } = step(&job, &[&workload], true) else {
        panic!("expected PodsReady written");
    };
    assert!(!condition.is_current(&workload));
    assert_eq!(step(&job, &[&workload], false), FrameworkStep::Idle);
}

#[test]
fn a_finished_workload_and_a_deleted_job_take_no_step() {
    let job = test_set();
    let finished = with_conditions(&job, &[condition("Finished", "Succeeded", "")]);
    assert_eq!(step(&job, &[&finished], false), FrameworkStep::Idle);

    let mut deleting = test_set();
    deleting.metadata.deletion_timestamp = Some(
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(Default::default()),
    );
    assert_eq!(step(&deleting, &[], false), FrameworkStep::Idle);
}

#[test]
fn a_running_job_reports_its_reclaimable_pods() {
    let mut job = running(&test_set());
    let workload = admitted(&test_set());
    assert_eq!(step(&job, &[&workload], false), FrameworkStep::Idle);
    job.data["status"] = json!({"reclaimable": 2});
    let FrameworkStep::ReclaimablePods { pods, .. } = step(&job, &[&workload], false) else {
        panic!("expected reclaimable pods written");
    };
    assert_eq!(
        pods,
        [ReclaimablePod {
            name: "workers".to_owned(),
            count: 2
        }]
    );
}

#[test]
fn a_prebuilt_workload_is_adopted_then_owned_and_finished_when_out_of_sync() {
    let job = test_set();
    assert_eq!(
        step_with(&job, &[], false, Some(Prebuilt::Missing)),
        FrameworkStep::Idle
    );

    let mut prebuilt = built(&job);
    prebuilt.metadata.name = Some("pre".to_owned());
    prebuilt.metadata.owner_references = None;
    let FrameworkStep::AdoptWorkload(adopted) =
        step_with(&job, &[], false, Some(Prebuilt::Found(&prebuilt)))
    else {
        panic!("expected the prebuilt Workload adopted");
    };
    let owner = &adopted.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (
            owner.api_version.as_str(),
            owner.kind.as_str(),
            owner.uid.as_str()
        ),
        ("jobset.x-k8s.io/v1alpha2", "JobSet", "u-1")
    );

    assert_eq!(
        step_with(&job, &[], false, Some(Prebuilt::Found(&adopted))),
        FrameworkStep::Idle
    );
    let mut scaled = job.clone();
    scaled.data["spec"]["replicatedJobs"][1]["replicas"] = json!(3);
    let FrameworkStep::FinishWorkload { reason, .. } =
        step_with(&scaled, &[], false, Some(Prebuilt::Found(&adopted)))
    else {
        panic!("expected the prebuilt Workload finished");
    };
    assert_eq!(reason, finished_reasons::OUT_OF_SYNC);
}

fn labelled(job: &DynamicObject, key: &str, value: &str) -> DynamicObject {
    let mut labelled = job.clone();
    labelled
        .metadata
        .labels
        .get_or_insert_default()
        .insert(key.to_owned(), value.to_owned());
    labelled
}

#[test]
fn a_suspended_job_labelled_with_another_queue_moves_its_pending_workload_there() {
    let job = test_set();
    let pending = built(&job);
    let moved = labelled(&job, labels::QUEUE_NAME, "other");
    let FrameworkStep::ChangeQueue(workload) = step(&moved, &[&pending], false) else {
        panic!("the Workload follows the queue label");
    };
    assert_eq!(workload.spec.queue_name.as_deref(), Some("other"));
    assert_eq!(step(&job, &[&pending], false), FrameworkStep::Idle);
}

#[test]
fn the_workload_follows_the_jobs_admission_gates_and_priority_class_label() {
    let gated = |value: &str| {
        let mut job = test_set();
        job.metadata.annotations = Some(BTreeMap::from([(
            "kueue.x-k8s.io/admission-gated-by".to_owned(),
            value.to_owned(),
        )]));
        job
    };
    let job = gated("example.com/a,example.com/b");
    let FrameworkStep::CreateWorkload(created) = step(&job, &[], false) else {
        panic!("a Workload is created");
    };
    let gates = |w: &Workload| {
        w.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("kueue.x-k8s.io/admission-gated-by"))
            .cloned()
    };
    assert_eq!(
        gates(&created).as_deref(),
        Some("example.com/a,example.com/b")
    );
    let FrameworkStep::FollowAdmissionGates { workload, .. } =
        step(&gated("example.com/b"), &[&created], false)
    else {
        panic!("the Workload follows the gate the job dropped");
    };
    assert_eq!(gates(&workload).as_deref(), Some("example.com/b"));

    let plain = test_set();
    let classed = labelled(&plain, labels::PRIORITY_CLASS, "missing");
    let FrameworkStep::CannotCompose { error, .. } = step(&classed, &[&built(&plain)], false)
    else {
        panic!("a priority class that does not exist is reported");
    };
    assert!(
        matches!(error, FrameworkError::WorkloadPriorityClassNotFound { ref name, .. } if name == "missing"),
        "{error}"
    );
}
