use std::sync::Arc;

use serde_json::json;

use super::*;

const HOUR: Duration = Duration::from_secs(3600);

/// Finished Workloads kept for `after`; deactivated ones' Jobs kept.
fn finished_after(after: Duration) -> WorkloadRetention {
    WorkloadRetention {
        after_finished: Some(after),
        after_deactivated_by_kueue: None,
    }
}

fn at(text: &str) -> Timestamp {
    text.parse().expect("a timestamp")
}

/// Workload `ns/name` at resource version `version`, finished at `finished` when given.
fn workload(name: &str, version: &str, finished: Option<&str>) -> SharedWorkload {
    let conditions = match finished {
        Some(time) => json!([{"type": "Finished", "status": "True", "reason": "Succeeded",
                              "message": "done", "lastTransitionTime": time}]),
        None => json!([]),
    };
    Arc::new(
        serde_json::from_value(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "Workload",
            "metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}"),
                         "resourceVersion": version},
            "spec": {"podSets": []},
            "status": {"conditions": conditions},
        }))
        .expect("a Workload"),
    )
}

#[test]
fn a_workload_is_due_the_retention_after_it_finished() {
    let done = workload("done", "1", Some("2026-11-28T10:00:00Z"));
    let policy = finished_after(HOUR);
    assert_eq!(
        deletion_due(&done, policy),
        Some((at("2026-11-28T11:00:00Z"), Expired::Workload))
    );
    assert_eq!(deletion_due(&workload("running", "1", None), policy), None);
    assert_eq!(
        deletion_due(&done, WorkloadRetention::default()),
        None,
        "without afterFinished a finished Workload stays"
    );

    let mut going = (*done).clone();
    going.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        at("2026-11-28T10:30:00Z"),
    ));
    assert_eq!(deletion_due(&going, policy), None, "already being deleted");

    let mut unfinished = (*done).clone();
    if let Some(status) = unfinished.status.as_mut() {
        status.conditions[0].status = "False".into();
    }
    assert_eq!(deletion_due(&unfinished, policy), None);
}

fn key(name: &str) -> ObjectKey {
    ObjectKey::new("ns", name)
}

#[test]
fn due_workloads_come_earliest_first() {
    let mut schedule = Schedule::new(finished_after(HOUR));
    schedule.take(Change::Reset(vec![
        workload("later", "1", Some("2026-11-28T10:30:00Z")),
        workload("first", "1", Some("2026-11-28T10:00:00Z")),
        workload("second", "1", Some("2026-11-28T10:10:00Z")),
        workload("running", "1", None),
    ]));
    let before = at("2026-11-28T10:59:59Z");
    assert_eq!(
        schedule.next_after(before),
        Some(at("2026-11-28T11:00:00Z"))
    );
    assert!(schedule.due_keys(before).is_empty());
    assert!(schedule.due(&key("first"), before).is_none());

    let now = at("2026-11-28T11:20:00Z");
    assert_eq!(schedule.due_keys(now), [key("first"), key("second")]);
    assert_eq!(
        schedule.due(&key("first"), now).map(|(_, expired)| expired),
        Some(Expired::Workload)
    );
    assert_eq!(schedule.next_after(now), Some(at("2026-11-28T11:30:00Z")));
}

#[test]
fn a_deleted_workload_is_forgotten_and_a_failed_deletion_is_tried_again_later() {
    let mut schedule = Schedule::new(finished_after(HOUR));
    let gone = workload("gone", "1", Some("2026-11-28T10:00:00Z"));
    let stale = workload("stale", "1", Some("2026-11-28T10:00:00Z"));
    schedule.take(Change::Reset(vec![gone, stale]));
    let now = at("2026-11-28T11:00:00Z");
    assert_eq!(schedule.due_keys(now).len(), 2);

    schedule.answered(&key("gone"), None);
    let retry_at = at("2026-11-28T11:00:01Z");
    schedule.answered(&key("stale"), Some(retry_at));
    assert_eq!(schedule.next_after(now), Some(retry_at));
    assert!(schedule.due_keys(now).is_empty());
    assert_eq!(schedule.due_keys(retry_at), [key("stale")]);

    // The watch brings the newer version, which is what the next deletion is fenced on.
    let newer = workload("stale", "2", Some("2026-11-28T10:00:00Z"));
    schedule.take(Change::Apply(Box::new(newer)));
    schedule.answered(&key("stale"), Some(at("2026-11-28T11:00:02Z")));
    let handed = schedule.due(&key("stale"), at("2026-11-28T11:00:02Z"));
    assert_eq!(
        handed.and_then(|(w, _)| w.resource_version()).as_deref(),
        Some("2")
    );
}

#[test]
fn a_workload_that_is_deleted_reset_away_or_no_longer_finished_is_not_due() {
    let mut schedule = Schedule::new(finished_after(Duration::ZERO));
    let done = workload("done", "1", Some("2026-11-28T10:00:00Z"));
    schedule.take(Change::Apply(Box::new(done.clone())));
    schedule.take(Change::Delete(Box::new(done)));
    assert_eq!(schedule.next_after(Timestamp::MIN), None);

    schedule.take(Change::Apply(Box::new(workload(
        "requeued",
        "1",
        Some("2026-11-28T10:00:00Z"),
    ))));
    schedule.take(Change::Apply(Box::new(workload("requeued", "2", None))));
    assert_eq!(schedule.next_after(Timestamp::MIN), None);

    schedule.take(Change::Apply(Box::new(workload(
        "listed-before",
        "1",
        Some("2026-11-28T10:00:00Z"),
    ))));
    schedule.take(Change::Reset(Vec::new()));
    assert_eq!(schedule.next_after(Timestamp::MIN), None);
}

/// A Workload of Job `train` that Kueue deactivated: inactive, evicted at `evicted`.
fn deactivated(evicted: &str, reason: &str, active: bool) -> Workload {
    serde_json::from_value(json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "job-train-1", "namespace": "ns", "uid": "uid-w",
                     "resourceVersion": "7",
                     "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "train",
                                          "uid": "uid-job", "controller": true}]},
        "spec": {"podSets": [], "active": active},
        "status": {"conditions": [{"type": "Evicted", "status": "True", "reason": reason,
                                   "message": "m", "lastTransitionTime": evicted}]},
    }))
    .expect("a Workload")
}

#[test]
fn the_job_of_a_workload_kueue_deactivated_is_due_after_its_eviction() {
    let policy = WorkloadRetention {
        after_finished: None,
        after_deactivated_by_kueue: Some(Duration::from_secs(600)),
    };
    let job = Expired::Job {
        name: "train".into(),
        uid: "uid-job".into(),
    };
    let evicted = "2026-11-28T10:00:00Z";
    let by_kueue = deactivated(evicted, "DeactivatedDueToRequeuingLimitExceeded", false);
    assert_eq!(
        deletion_due(&by_kueue, policy),
        Some((at("2026-11-28T10:10:00Z"), job))
    );
    assert_eq!(
        deletion_due(&by_kueue, finished_after(HOUR)),
        None,
        "without afterDeactivatedByKueue the Job stays"
    );
    assert_eq!(
        deletion_due(&deactivated(evicted, "Preempted", false), policy),
        None,
        "evicted for another reason"
    );
    assert_eq!(
        deletion_due(&deactivated(evicted, "Deactivated", false), policy),
        None,
        "a Workload a user deactivated keeps its Job"
    );
    assert_eq!(
        deletion_due(
            &deactivated(evicted, "DeactivatedDueToRequeuingLimitExceeded", true),
            policy
        ),
        None,
        "active again"
    );
    let mut unowned = by_kueue;
    unowned.metadata.owner_references = None;
    assert_eq!(deletion_due(&unowned, policy), None, "no Job to delete");
}
