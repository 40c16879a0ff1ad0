use serde_json::json;

use super::*;
use crate::api::keys::finished_reasons;
use crate::engine::features::FeatureGates;
use crate::jobs::fixtures::{JOB_UID, flavors, job, workload};
use crate::jobs::{JobContext, JobStep, PriorityLookup, next_job_step};

/// The sample Job, naming the fixture Workload as its prebuilt one.
fn prebuilt_job(patch: serde_json::Value) -> Job {
    let mut job = job(patch);
    job.metadata.labels.get_or_insert_default().insert(
        labels::PREBUILT_WORKLOAD_NAME.to_owned(),
        "job-sample-0a1b2".to_owned(),
    );
    job
}

/// The fixture Workload as someone made it: controlled by nothing yet, not admitted.
fn unowned() -> Workload {
    workload(json!({"metadata": {"ownerReferences": null}, "status": null}))
}

fn step(job: &Job, owned: &[&Workload], prebuilt: Option<Prebuilt<'_>>) -> JobStep {
    let flavors = flavors();
    let (priorities, gates) = (PriorityLookup::new(), FeatureGates::default());
    next_job_step(
        job,
        owned,
        JobContext {
            flavors: &flavors,
            priorities: &priorities,
            gates: &gates,
            wait_for_pods_ready: false,
            label_keys_to_copy: &[],
            prebuilt,
        },
    )
}

#[test]
fn the_job_takes_its_prebuilt_workload_over() {
    let job = prebuilt_job(json!({}));
    assert_eq!(
        prebuilt_workload_name(&job.metadata),
        Some("job-sample-0a1b2")
    );
    let made = unowned();
    let JobStep::AdoptWorkload(adopted) = step(&job, &[], Some(Prebuilt::Found(&made))) else {
        panic!("an unowned prebuilt Workload is taken over");
    };
    let owners = adopted
        .metadata
        .owner_references
        .clone()
        .unwrap_or_default();
    assert_eq!(owners.len(), 1);
    assert_eq!(
        (
            owners[0].kind.as_str(),
            owners[0].uid.as_str(),
            owners[0].controller
        ),
        ("Job", JOB_UID, Some(true))
    );
    assert_eq!(
        adopted
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(labels::JOB_UID))
            .map(String::as_str),
        Some(JOB_UID)
    );
    assert_eq!(adopted.spec, made.spec, "nothing else changes");
}

#[test]
fn without_its_prebuilt_workload_the_job_waits_suspended_and_none_is_built() {
    let waiting = prebuilt_job(json!({}));
    assert_eq!(step(&waiting, &[], Some(Prebuilt::Missing)), JobStep::Idle);

    let mut other = unowned();
    other.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "batch/v1".into(),
        kind: "Job".into(),
        name: "someone-else".into(),
        uid: "other-uid".into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }]);
    assert_eq!(
        step(&waiting, &[], Some(Prebuilt::Found(&other))),
        JobStep::Idle,
        "a Workload another object controls is not the Job's"
    );

    let running = prebuilt_job(json!({"spec": {"suspend": false}}));
    let JobStep::UpdateJob { job: stopped, .. } = step(&running, &[], Some(Prebuilt::Missing))
    else {
        panic!("a running Job without its Workload is stopped");
    };
    assert_eq!(stopped.spec.as_ref().and_then(|s| s.suspend), Some(true));
}

#[test]
fn an_owned_prebuilt_workload_is_used_and_finished_out_of_sync_when_it_stops_matching() {
    let job = prebuilt_job(json!({}));
    let owned = workload(json!({}));
    // Admitted and in step: the Job starts, as with a Workload kuota built.
    assert!(matches!(
        step(&job, &[], Some(Prebuilt::Found(&owned))),
        JobStep::UpdateJob { .. }
    ));

    let mismatched = workload(json!({"spec": {"podSets": [{"name": "main", "count": 9,
        "template": crate::jobs::fixtures::template()}]}}));
    let JobStep::FinishWorkload {
        reason, message, ..
    } = step(&job, &[], Some(Prebuilt::Found(&mismatched)))
    else {
        panic!("a prebuilt Workload out of step is finished, not replaced");
    };
    assert_eq!(reason, finished_reasons::OUT_OF_SYNC);
    assert_eq!(message, OUT_OF_SYNC_MESSAGE);
}
