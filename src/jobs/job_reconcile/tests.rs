use serde_json::json;

use super::*;
use crate::api::keys::{annotations, job_event_reasons, pods_ready_reasons};
use crate::jobs::fixtures::{condition, flavors, job, workload};

fn step(job: &Job, owned: &[&Workload], wait_for_pods_ready: bool) -> JobStep {
    let (flavors, priorities, gates) = (flavors(), PriorityLookup::new(), FeatureGates::default());
    next_job_step(
        job,
        owned,
        JobContext {
            flavors: &flavors,
            priorities: &priorities,
            gates: &gates,
            wait_for_pods_ready,
            label_keys_to_copy: &[],
            prebuilt: None,
        },
    )
}

/// The fixture Workload as the Job integration creates it: no admission yet.
fn pending() -> Workload {
    workload(json!({"status": null}))
}

/// The sample Job as kuota started it under the fixture admission, with pods running.
fn running(ready: i32) -> Job {
    let JobStep::UpdateJob { job: started, .. } =
        step(&job(json!({})), &[&workload(json!({}))], false)
    else {
        panic!("an admitted Workload of a suspended Job starts it");
    };
    let mut started = *started;
    started.metadata.resource_version = Some("2".into());
    started.status = Some(
        serde_json::from_value(json!({
            "active": 4, "ready": ready, "startTime": "2026-01-01T00:00:05Z"
        }))
        .unwrap(),
    );
    started
}

fn suspend_of(job: &Job) -> Option<bool> {
    job.spec.as_ref().and_then(|s| s.suspend)
}

fn node_selector(job: &Job) -> BTreeMap<String, String> {
    job.spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .and_then(|p| p.node_selector.clone())
        .unwrap_or_default()
}

#[test]
fn a_suspended_job_without_a_workload_gets_the_workload_the_integration_builds() {
    let JobStep::CreateWorkload(created) = step(&job(json!({})), &[], false) else {
        panic!("a new Job needs a Workload");
    };
    let name = created.metadata.name.clone().unwrap_or_default();
    let suffix = name.strip_prefix("job-sample-").unwrap_or_default();
    assert!(
        suffix.len() == 5 && suffix.chars().all(|c| c.is_ascii_hexdigit()),
        "{name}"
    );
    assert_eq!(created.spec.queue_name.as_deref(), Some("user-queue"));
    assert_eq!(created.spec.pod_sets[0].count, 4);
    assert!(owned_by(&created, crate::jobs::fixtures::JOB_UID));
}

#[test]
fn a_missing_priority_class_is_reported() {
    let missing = job(json!({"metadata": {"labels": {"kueue.x-k8s.io/priority-class": "urgent"}}}));
    let JobStep::CannotCompose { event, .. } = step(&missing, &[], false) else {
        panic!("a missing WorkloadPriorityClass holds the Workload back");
    };
    assert_eq!(
        event.reason,
        job_event_reasons::WORKLOAD_PRIORITY_CLASS_NOT_FOUND
    );
    assert!(event.warning);
}

#[test]
fn a_running_job_without_a_workload_is_suspended_first_and_gets_one_once_its_pods_are_gone() {
    let orphan = running(4);
    let JobStep::UpdateJob {
        job: suspended,
        event,
    } = step(&orphan, &[], false)
    else {
        panic!("a running Job without a Workload is stopped");
    };
    assert_eq!(suspend_of(&suspended), Some(true));
    assert_eq!(
        event.map(|e| e.note).as_deref(),
        Some(STOP_MISSING_WORKLOAD)
    );

    let mut still_active = job(json!({}));
    still_active.status = orphan.status.clone();
    assert_eq!(step(&still_active, &[], false), JobStep::Idle);
}

#[test]
fn an_admitted_workload_starts_its_suspended_job_with_the_flavor_and_queue_labels() {
    let JobStep::UpdateJob {
        job: started,
        event,
    } = step(&job(json!({})), &[&workload(json!({}))], false)
    else {
        panic!("an admitted Workload starts its Job");
    };
    assert_eq!(suspend_of(&started), Some(false));
    assert_eq!(
        node_selector(&started)
            .get("instance-type")
            .map(String::as_str),
        Some("on-demand")
    );
    let event = event.expect("Started is recorded");
    assert_eq!(event.reason, job_event_reasons::STARTED);
    assert!(event.note.contains("cluster-queue"), "{}", event.note);
}

#[test]
fn a_pending_workload_keeps_its_job_suspended_and_a_started_job_is_left_running() {
    assert_eq!(step(&job(json!({})), &[&pending()], false), JobStep::Idle);
    assert_eq!(
        step(&running(4), &[&workload(json!({}))], false),
        JobStep::Idle
    );
}

#[test]
fn an_evicted_workload_stops_its_job_in_three_writes_and_restores_the_template() {
    let evicted = workload(json!({"status": {"conditions": [
        condition("QuotaReserved", true, "QuotaReserved", "2026-01-01T00:00:00Z"),
        condition("Admitted", true, "Admitted", "2026-01-01T00:00:00Z"),
        {"type": "Evicted", "status": "True", "reason": "Preempted",
         "message": "Preempted to accommodate a higher priority Workload",
         "lastTransitionTime": "2026-01-01T00:01:00Z"}
    ]}}));
    let job = running(4);
    let JobStep::UpdateJob {
        job: suspended,
        event,
    } = step(&job, &[&evicted], false)
    else {
        panic!("eviction suspends the Job");
    };
    assert_eq!(suspend_of(&suspended), Some(true));
    let stopping = suspended.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(
        stopping.get(annotations::STOPPING).map(String::as_str),
        Some("true")
    );
    let event = event.expect("Stopped is recorded");
    assert_eq!(event.reason, job_event_reasons::STOPPED);
    assert!(event.note.contains("Preempted"), "{}", event.note);

    // Suspended but still stopping, with a start time: clear it before restoring.
    assert_eq!(
        step(&suspended, &[&evicted], false),
        JobStep::ClearStartTime
    );

    let mut no_start = (*suspended).clone();
    if let Some(status) = no_start.status.as_mut() {
        status.start_time = None;
    }
    let JobStep::UpdateJob {
        job: restored,
        event,
    } = step(&no_start, &[&evicted], false)
    else {
        panic!("the template is restored last");
    };
    assert!(event.is_none());
    assert!(node_selector(&restored).is_empty());
    let restored_annotations = restored.metadata.annotations.clone().unwrap_or_default();
    assert!(!restored_annotations.contains_key(annotations::STOPPING));
    assert_eq!(step(&restored, &[&evicted], false), JobStep::Idle);
}

#[test]
fn a_job_admitted_again_while_stopping_finishes_its_stop_then_starts() {
    let evicted = workload(json!({"status": {"conditions": [
        condition("QuotaReserved", true, "QuotaReserved", "2026-01-01T00:00:00Z"),
        condition("Admitted", true, "Admitted", "2026-01-01T00:00:00Z"),
        {"type": "Evicted", "status": "True", "reason": "NodeFailures",
         "message": "Workload was evicted as there was no replacement for unhealthy node(s): n",
         "lastTransitionTime": "2026-01-01T00:01:00Z"}
    ]}}));
    let JobStep::UpdateJob { job: suspended, .. } = step(&running(4), &[&evicted], false) else {
        panic!("eviction suspends the Job");
    };
    let mut stopping = (*suspended).clone();
    if let Some(status) = stopping.status.as_mut() {
        status.start_time = None;
    }
    // Admitted again (the fixture's admission) before the template was restored.
    let again = workload(json!({}));
    let JobStep::UpdateJob {
        job: restored,
        event,
    } = step(&stopping, &[&again], false)
    else {
        panic!("the stop is finished first");
    };
    assert!(event.is_none());
    assert!(node_selector(&restored).is_empty());
    let JobStep::UpdateJob { job: started, .. } = step(&restored, &[&again], false) else {
        panic!("then the Job starts");
    };
    assert_eq!(suspend_of(&started), Some(false));
}

#[test]
fn a_finished_job_finishes_its_workload_once() {
    let mut done = running(0);
    done.status = Some(
        serde_json::from_value(json!({
            "succeeded": 4,
            "conditions": [{"type": "Complete", "status": "True", "message": "done"}]
        }))
        .unwrap(),
    );
    let admitted = workload(json!({}));
    let JobStep::FinishWorkload {
        reason, message, ..
    } = step(&done, &[&admitted], false)
    else {
        panic!("a complete Job finishes its Workload");
    };
    assert_eq!(reason, finished_reasons::SUCCEEDED);
    assert_eq!(message, "done");

    let finished = workload(json!({"status": {"conditions": [
        condition("Finished", true, "Succeeded", "2026-01-01T00:02:00Z")
    ]}}));
    assert_eq!(step(&done, &[&finished], false), JobStep::Idle);
}

#[test]
fn pods_ready_is_kept_only_while_wait_for_pods_ready_is_on() {
    let admitted = workload(json!({}));
    let JobStep::PodsReady { condition, .. } = step(&running(4), &[&admitted], true) else {
        panic!("ready pods mark the Workload PodsReady");
    };
    assert!(condition.status);
    assert_eq!(condition.reason, pods_ready_reasons::STARTED);

    let JobStep::PodsReady { condition, .. } = step(&running(2), &[&admitted], true) else {
        panic!("an admitted Workload waits for its pods");
    };
    assert!(!condition.status);
    assert_eq!(condition.reason, pods_ready_reasons::WAIT_FOR_START);

    assert_eq!(step(&running(4), &[&admitted], false), JobStep::Idle);
}

#[test]
fn a_second_workload_of_the_same_job_is_deleted() {
    let first = pending();
    let second = workload(json!({"metadata": {"name": "job-sample-extra"}, "status": null}));
    let JobStep::DeleteWorkload { workload, event } =
        step(&job(json!({})), &[&first, &second], false)
    else {
        panic!("a Job keeps one Workload");
    };
    assert_eq!(workload.metadata.name.as_deref(), Some("job-sample-extra"));
    assert_eq!(
        event.map(|e| e.reason),
        Some(job_event_reasons::DELETED_WORKLOAD)
    );
}

#[test]
fn a_changed_suspended_job_updates_its_pending_workload_keeping_it_inactive() {
    let changed = job(json!({"spec": {"parallelism": 2}}));
    let inactive = workload(json!({"spec": {"active": false}, "status": null}));
    let JobStep::UpdateWorkload(updated) = step(&changed, &[&inactive], false) else {
        panic!("a suspended Job's change is written into its pending Workload");
    };
    assert_eq!(updated.spec.pod_sets[0].count, 2);
    assert_eq!(updated.spec.active, Some(false));
}

fn workload_step_of(workload: &Workload, job: Option<&Job>) -> WorkloadStep {
    workload_step(workload, job, &FeatureGates::default())
}

fn orphan_finish() -> WorkloadStep {
    WorkloadStep::Finish {
        reason: "OwnerNotFound",
        message: "The workload's owner no longer exists".to_owned(),
    }
}

/// `workload` with `Finished=True`.
fn finished(mut workload: Workload) -> Workload {
    if let Some(status) = workload.status.as_mut() {
        status.conditions.push(
            serde_json::from_value(condition(
                "Finished",
                true,
                "Succeeded",
                "2026-01-01T00:02:00Z",
            ))
            .unwrap(),
        );
    }
    workload
}

/// `workload` being deleted.
fn deleting(mut workload: Workload) -> Workload {
    workload.metadata.deletion_timestamp =
        Some(serde_json::from_value(json!("2026-01-01T00:03:00Z")).unwrap());
    workload
}

#[test]
fn the_finalizer_goes_when_the_workload_finished_or_is_deleted_with_its_job_stopped() {
    let held = json!({"metadata": {"finalizers": ["kueue.x-k8s.io/resource-in-use"]}});
    let admitted = workload(held.clone());
    assert_eq!(
        workload_step_of(&admitted, Some(&running(4))),
        WorkloadStep::Idle
    );
    assert_eq!(
        workload_step_of(&finished(admitted.clone()), Some(&running(4))),
        WorkloadStep::Release
    );
    let deleted = deleting(admitted.clone());
    assert_eq!(
        workload_step_of(&deleted, Some(&running(4))),
        WorkloadStep::Idle
    );
    assert_eq!(
        workload_step_of(&deleted, Some(&job(json!({})))),
        WorkloadStep::Release
    );
    assert_eq!(workload_step_of(&deleted, None), WorkloadStep::Release);
    assert_eq!(
        workload_step_of(&workload(json!({})), Some(&running(4))),
        WorkloadStep::Idle
    );
}

#[test]
fn a_workload_whose_job_is_gone_or_going_is_finished_as_owner_not_found_then_released() {
    let held = workload(json!({"metadata": {"finalizers": ["kueue.x-k8s.io/resource-in-use"]}}));
    assert_eq!(workload_step_of(&held, None), orphan_finish());
    let mut going = running(4);
    going.metadata.deletion_timestamp =
        Some(serde_json::from_value(json!("2026-01-01T00:03:00Z")).unwrap());
    assert_eq!(workload_step_of(&held, Some(&going)), orphan_finish());
    assert_eq!(
        workload_step_of(&finished(held.clone()), None),
        WorkloadStep::Release
    );

    // Without `FinishOrphanedWorkloads` the finalizer goes at once, the Workload unfinished.
    let off = FeatureGates::default().with(Feature::FinishOrphanedWorkloads, false);
    assert_eq!(workload_step(&held, None, &off), WorkloadStep::Release);
}

#[test]
fn a_workload_its_job_orphaned_is_finished_then_released() {
    // The garbage collector took the owner reference away; the job-uid label stays.
    let orphaned = workload(json!({"metadata": {
        "ownerReferences": null,
        "labels": {"kueue.x-k8s.io/job-uid": "6f1c2d4e-0000-4000-8000-000000000001"},
        "finalizers": ["kueue.x-k8s.io/resource-in-use"]
    }}));
    assert_eq!(workload_step_of(&orphaned, None), orphan_finish());
    assert_eq!(
        workload_step_of(&finished(orphaned.clone()), None),
        WorkloadStep::Release
    );
    // Being deleted, it is released without being finished.
    assert_eq!(
        workload_step_of(&deleting(orphaned.clone()), None),
        WorkloadStep::Release
    );

    // A Workload nothing ever owned (no job-uid label) is left alone until it is deleted.
    let standalone = workload(json!({"metadata": {
        "ownerReferences": null,
        "finalizers": ["kueue.x-k8s.io/resource-in-use"]
    }}));
    assert_eq!(workload_step_of(&standalone, None), WorkloadStep::Idle);
    assert_eq!(
        workload_step_of(&deleting(standalone), None),
        WorkloadStep::Release
    );
}

#[test]
fn a_workload_of_another_kind_of_owner_is_left_to_its_integration() {
    let of_pod = workload(json!({"metadata": {
        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "pod-uid",
                             "controller": true}],
        "labels": {"kueue.x-k8s.io/job-uid": "pod-uid"},
        "finalizers": ["kueue.x-k8s.io/resource-in-use"]
    }}));
    assert_eq!(workload_step_of(&of_pod, None), WorkloadStep::Idle);
}

#[test]
fn a_job_being_deleted_takes_no_step_of_its_own() {
    let mut going = job(json!({}));
    going.metadata.deletion_timestamp =
        Some(serde_json::from_value(json!("2026-01-01T00:03:00Z")).unwrap());
    assert_eq!(step(&going, &[&workload(json!({}))], false), JobStep::Idle);
    assert_eq!(step(&going, &[], false), JobStep::Idle);
}

#[test]
fn a_suspended_job_labelled_with_another_queue_moves_its_pending_workload_there() {
    let relabelled = job(json!({"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "other"}}}));
    let JobStep::ChangeQueue(moved) = step(&relabelled, &[&pending()], false) else {
        panic!("the Workload follows the label");
    };
    assert_eq!(moved.spec.queue_name.as_deref(), Some("other"));
    assert_eq!(moved.spec.pod_sets, pending().spec.pod_sets);
    // Read back with the new queue, nothing more is due.
    assert_eq!(step(&relabelled, &[&moved], false), JobStep::Idle);
    // An admitted Workload keeps its queue: the Job runs.
    let admitted = workload(json!({"status": {"conditions": [
        condition("QuotaReserved", true, "QuotaReserved", "2026-01-01T00:00:00Z"),
        condition("Admitted", true, "Admitted", "2026-01-01T00:00:00Z"),
    ]}}));
    assert!(!matches!(
        step(&relabelled, &[&admitted], false),
        JobStep::ChangeQueue(_)
    ));
}

/// Kueue's count: with 4 pods in parallel and 4 completions, each success leaves one fewer pod
/// needed; the Workload is given the count once, and not without the `ReclaimablePods` gate.
#[test]
fn succeeded_pods_become_reclaimable_on_the_workload() {
    let admitted = workload(json!({}));
    let mut job = running(4);
    assert_eq!(
        step(&job, &[&admitted], false),
        JobStep::Idle,
        "none succeeded"
    );
    if let Some(status) = job.status.as_mut() {
        status.succeeded = Some(3);
        status.active = Some(1);
    }
    let JobStep::ReclaimablePods { workload: on, pods } = step(&job, &[&admitted], false) else {
        panic!("three succeeded pods are reclaimable");
    };
    assert_eq!(on.metadata.name, admitted.metadata.name);
    assert_eq!(
        (pods.len(), pods[0].name.as_str(), pods[0].count),
        (1, "main", 3)
    );

    let mut written = admitted.clone();
    if let Some(status) = written.status.as_mut() {
        status.reclaimable_pods = pods.into();
    }
    assert_eq!(
        step(&job, &[&written], false),
        JobStep::Idle,
        "written once"
    );

    let (flavors, priorities) = (flavors(), PriorityLookup::new());
    let gates: FeatureGates = "ReclaimablePods=false".parse().unwrap();
    let off = next_job_step(
        &job,
        &[&admitted],
        JobContext {
            flavors: &flavors,
            priorities: &priorities,
            gates: &gates,
            wait_for_pods_ready: false,
            label_keys_to_copy: &[],
            prebuilt: None,
        },
    );
    assert_eq!(off, JobStep::Idle);
}

/// `labelKeysToCopy`: a new Workload carries the listed labels the Job has.
#[test]
fn listed_job_labels_are_copied_to_a_new_workload() {
    let (flavors, priorities, gates) = (flavors(), PriorityLookup::new(), FeatureGates::default());
    let keys = vec!["team".to_owned(), "absent".to_owned()];
    let job = job(json!({"metadata": {"labels": {"team": "a", "other": "x"}}}));
    let JobStep::CreateWorkload(created) = next_job_step(
        &job,
        &[],
        JobContext {
            flavors: &flavors,
            priorities: &priorities,
            gates: &gates,
            wait_for_pods_ready: false,
            label_keys_to_copy: &keys,
            prebuilt: None,
        },
    ) else {
        panic!("a new Job needs a Workload");
    };
    let labels = created.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get("team").map(String::as_str), Some("a"));
    assert!(!labels.contains_key("other") && !labels.contains_key("absent"));
    assert!(labels.contains_key(crate::api::keys::labels::JOB_UID));
}

/// Kueue's `AdmissionGatedBy`: the Workload of a gated Job carries its gates, and a gate the Job
/// drops is dropped from the Workload, with `UpdatedWorkload` on the Job.
#[test]
fn a_jobs_admission_gates_are_copied_and_their_removal_followed() {
    let gated = job(
        json!({"metadata": {"annotations": {annotations::ADMISSION_GATED_BY: "example.com/check"}}}),
    );
    let JobStep::CreateWorkload(created) = step(&gated, &[], false) else {
        panic!("a new Job needs a Workload");
    };
    let gates = |w: &Workload| {
        w.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(annotations::ADMISSION_GATED_BY))
            .cloned()
    };
    assert_eq!(gates(&created).as_deref(), Some("example.com/check"));

    let mut held = pending();
    held.metadata.annotations = created.metadata.annotations.clone();
    assert_eq!(step(&gated, &[&held], false), JobStep::Idle);
    let JobStep::FollowAdmissionGates { workload, event } = step(&job(json!({})), &[&held], false)
    else {
        panic!("the gate removed from the Job is removed from its Workload");
    };
    assert_eq!(gates(&workload), None);
    assert_eq!(event.reason, job_event_reasons::UPDATED_WORKLOAD);
    assert_eq!(event.note, "Updated workload AdmissionGatedBy to \"\"");
}

#[test]
fn a_pending_workload_follows_its_suspended_jobs_relabelled_class() {
    let (flavors, gates) = (flavors(), FeatureGates::default());
    let mut priorities = PriorityLookup::new();
    priorities.add_workload_priority_class("low", 100);
    priorities.add_workload_priority_class("high", 300);
    let context = JobContext {
        flavors: &flavors,
        priorities: &priorities,
        gates: &gates,
        wait_for_pods_ready: false,
        label_keys_to_copy: &[],
        prebuilt: None,
    };
    let class =
        |name: &str| json!({"metadata": {"labels": {"kueue.x-k8s.io/priority-class": name}}});
    let low = workload(
        json!({"status": null, "spec": {"priority": 100, "priorityClassRef":
        {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "low"}}}),
    );
    assert_eq!(
        next_job_step(&job(class("low")), &[&low], context),
        JobStep::Idle
    );
    let JobStep::ChangePriority(raised) = next_job_step(&job(class("high")), &[&low], context)
    else {
        panic!("the Workload follows the Job's class");
    };
    assert_eq!(raised.spec.priority, Some(300));
    assert_eq!(
        raised.spec.priority_class_ref.map(|c| c.name).as_deref(),
        Some("high")
    );
    let JobStep::CannotCompose { event, .. } =
        next_job_step(&job(class("urgent")), &[&low], context)
    else {
        panic!("a class that does not exist is reported");
    };
    assert_eq!(
        event.reason,
        job_event_reasons::WORKLOAD_PRIORITY_CLASS_NOT_FOUND
    );
}
