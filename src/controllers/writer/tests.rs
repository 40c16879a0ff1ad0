use std::collections::BTreeMap;

use crate::api::Condition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::json;

use super::*;

fn condition(type_: &str) -> Condition {
    Condition {
        type_: type_.into(),
        status: "True".into(),
        reason: "R".into(),
        message: Default::default(),
        last_transition_time: Time("2026-11-23T10:00:00Z".parse().unwrap()),
        observed_generation: None,
    }
}

#[test]
fn the_apply_body_holds_only_what_admission_owns_at_the_read_version() {
    let mut read = Workload::new("job", Default::default());
    read.metadata.name = Some("job".into());
    read.metadata.namespace = Some("ns".into());
    read.metadata.resource_version = Some("42".into());
    let status = WorkloadStatus {
        conditions: vec![
            condition("QuotaReserved"),
            condition("PodsReady"),
            condition("Finished"),
        ],
        ..WorkloadStatus::default()
    };
    let body = status_apply(&read, &status);
    assert_eq!(body["apiVersion"], API_VERSION);
    assert_eq!(body["kind"], "Workload");
    assert_eq!(body["metadata"]["resourceVersion"], "42");
    let types: Vec<&str> = body["status"]["conditions"]
        .as_array()
        .expect("conditions")
        .iter()
        .filter_map(|c| c["type"].as_str())
        .collect();
    assert_eq!(types, ["QuotaReserved"]);
    assert!(body["status"].get("admission").is_none());
}

/// The accumulated execution time is written with the eviction that adds to it, and left out
/// (so cleared) when a Workload is marked for exceeding its maximum.
#[test]
fn the_apply_body_holds_the_accumulated_execution_time_when_there_is_one() {
    let mut read = Workload::new("job", Default::default());
    read.metadata.name = Some("job".into());
    let mut status = WorkloadStatus {
        accumulated_past_execution_time_seconds: Some(75),
        ..WorkloadStatus::default()
    };
    let body = status_apply(&read, &status);
    assert_eq!(body["status"]["accumulatedPastExecutionTimeSeconds"], 75);
    status.accumulated_past_execution_time_seconds = None;
    let body = status_apply(&read, &status);
    assert!(
        body["status"]
            .get("accumulatedPastExecutionTimeSeconds")
            .is_none()
    );
}

#[test]
fn an_annotation_patch_sets_changes_and_removes_what_is_gone() {
    let old = BTreeMap::from([
        ("a".to_string(), "1".to_string()),
        ("b".to_string(), "2".to_string()),
        ("c".to_string(), "3".to_string()),
    ]);
    let new = BTreeMap::from([
        ("a".to_string(), "1".to_string()),
        ("b".to_string(), "20".to_string()),
        ("d".to_string(), "4".to_string()),
    ]);
    assert_eq!(
        annotations_patch(&old, &new),
        json!({"metadata": {"annotations": {"b": "20", "c": null, "d": "4"}}})
    );
}

#[test]
fn only_timeouts_and_server_errors_are_worth_retrying_unchanged() {
    assert!(WriteError::Timeout("w".into()).is_transient());
    assert!(!WriteError::Conflict("w".into()).is_transient());
    assert!(!WriteError::NotFound("w".into()).is_transient());
    let terminating = kube::Error::Api(
        serde_json::from_value(serde_json::json!({
            "status": "Failure", "code": 403, "reason": "Forbidden",
            "message": "workloads.kueue.x-k8s.io \"w\" is forbidden: unable to create new content in namespace a because it is being terminated"
        }))
        .unwrap(),
    );
    let refused = WriteError::from_kube("Workload a/w".into(), terminating);
    assert!(matches!(refused, WriteError::Refused { .. }), "{refused:?}");
    assert!(!refused.is_transient());
}

fn api_error(code: u16, reason: &str) -> kube::Error {
    kube::Error::Api(
        serde_json::from_value(serde_json::json!({
            "status": "Failure", "code": code, "reason": reason, "message": reason
        }))
        .unwrap(),
    )
}

#[test]
fn an_invalid_or_unreadable_write_is_refused_and_not_retried_unchanged() {
    for (code, reason) in [(422, "Invalid"), (400, "BadRequest")] {
        let error = WriteError::from_kube("Job a/j".into(), api_error(code, reason));
        assert!(matches!(error, WriteError::Refused { .. }), "{error:?}");
        assert!(!error.is_transient(), "{code}");
        assert!(!error.may_have_landed(), "{code}");
    }
    for (code, reason) in [
        (429, "TooManyRequests"),
        (500, "InternalError"),
        (503, "ServiceUnavailable"),
    ] {
        let error = WriteError::from_kube("Job a/j".into(), api_error(code, reason));
        assert!(error.is_transient(), "{code}");
    }
}

/// A started write that waits for a request slot (under load, most of those started) holds a
/// few references: the request it sends is made, and its room taken, only once it may go out.
#[tokio::test]
async fn a_workload_write_waiting_for_a_slot_holds_no_request() {
    let config = kube::Config::new("http://127.0.0.1:9".parse().expect("a URL"));
    let client = Client::try_from(config).expect("a client");
    let writer = Writer::new(client, -1.0, 1, Tenure::none(), Clock::system());
    let read = Workload::new("w", crate::api::WorkloadSpec::default());
    let status = WorkloadStatus::default();
    let waiting = writer.workload(&read, &status, None);
    let size = std::mem::size_of_val(&waiting);
    assert!(size <= 4096, "a waiting write takes {size} bytes");
}

fn manual_clock() -> Clock {
    Clock::manual("2026-11-23T10:00:00Z".parse().unwrap())
}

/// Kueue's client-side limit, on the clock the writer is handed: a burst goes at once, the next
/// request waits its share of a second, and time that passed on the clock refills the bucket.
#[tokio::test]
async fn the_rate_limit_refills_as_its_clock_moves() {
    let clock = manual_clock();
    let limit = RateLimit::new(2.0, 2, clock.instant());
    assert_eq!(limit.take(clock.instant()).await, None);
    assert_eq!(limit.take(clock.instant()).await, None);
    assert_eq!(
        limit.take(clock.instant()).await,
        Some(Duration::from_millis(500))
    );
    clock.advance(Duration::from_secs(2));
    assert_eq!(limit.take(clock.instant()).await, None);
    assert_eq!(
        RateLimit::new(-1.0, 1, clock.instant())
            .take(clock.instant())
            .await,
        None
    );
}

/// A tenure that ran out on the writer's clock stops a request before it is sent: the client
/// points nowhere, so an attempt to send would answer with another error.
#[tokio::test]
async fn nothing_is_sent_once_the_tenure_ran_out_on_the_writers_clock() {
    let config = kube::Config::new("http://127.0.0.1:9".parse().expect("a URL"));
    let client = Client::try_from(config).expect("a client");
    let clock = manual_clock();
    let tenure = Tenure::none();
    tenure.extend_to(clock.instant() + Duration::from_secs(10));
    let writer = Writer::new(client, -1.0, 1, tenure, clock.clone());
    clock.advance(Duration::from_secs(11));
    let read = Workload::new("w", crate::api::WorkloadSpec::default());
    let refused = writer
        .workload(&read, &WorkloadStatus::default(), Some(&BTreeMap::new()))
        .await
        .expect_err("a write outside the tenure");
    assert!(
        matches!(refused.error, WriteError::NotLeading(_)),
        "{refused:?}"
    );
}

/// A queue's status is replaced at the version it was computed from, so a status computed from
/// a queue that changed since is refused instead of written over the change.
#[test]
fn a_queue_status_body_is_fenced_on_the_version_read() {
    let mut cq = ClusterQueue::new("team", Default::default());
    cq.metadata.resource_version = Some("42".into());
    cq.status = Some(crate::api::ClusterQueueStatus {
        admitted_workloads: Some(3),
        ..Default::default()
    });
    let body = queue_status_body(&cq);
    assert_eq!(body["metadata"]["resourceVersion"], "42");
    assert_eq!(body["status"]["admittedWorkloads"], 3);
    assert!(body.get("spec").is_none(), "only the status is written");

    let mut cohort = Cohort::new("org", Default::default());
    cohort.metadata.resource_version = Some("7".into());
    assert_eq!(
        queue_status_body(&cohort)["metadata"]["resourceVersion"],
        "7"
    );
}
