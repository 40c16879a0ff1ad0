//! Visibility calls answered by the loop: from the engine as it stands, on a follower too, with
//! each Workload's object identity; nothing before every cache is listed.

use tokio::sync::oneshot;

use super::*;
use crate::api::ObjectKey;
use crate::controllers::admission::pending_queries::{PendingError, PendingQuery};
use crate::engine::pending_order::{UnknownQueue, Window};
use crate::visibility::api::PendingWorkload;
use crate::visibility::request::{PendingRequest, Queue};

fn ask(admission: &mut AdmissionLoop, queue: Queue) -> Result<Vec<PendingWorkload>, PendingError> {
    let (reply, mut answer) = oneshot::channel();
    admission.answer_pending(PendingQuery {
        request: PendingRequest {
            version: "v1beta2",
            queue,
            window: Window {
                offset: 0,
                limit: 100,
            },
        },
        reply,
    });
    answer.try_recv().expect("answered at once")
}

fn owned(mut w: api::Workload, job: &str) -> api::Workload {
    w.metadata.owner_references = Some(vec![
        k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
            api_version: "batch/v1".into(),
            kind: "Job".into(),
            name: job.into(),
            uid: format!("uid-{job}"),
            controller: Some(true),
            ..Default::default()
        },
    ]);
    w
}

#[test]
fn a_follower_answers_in_queue_order_with_each_workloads_identity() {
    let (leader, leading) = watch::channel(false);
    let mut h = Harness::with(None, leader, leading);
    // 4 cpu of quota and nothing decided while following: every Workload waits.
    h.apply(owned(workload("low-old", 2, 1, 0), "job-low-old"));
    h.apply(workload("high", 2, 5, 2));
    h.apply(workload("low-new", 2, 1, 1));
    let items = ask(&mut h.admission, Queue::Cluster("team".into())).unwrap();
    let shown: Vec<(&str, i32, i32, i32)> = items
        .iter()
        .map(|i| {
            (
                i.metadata.name.as_str(),
                i.priority,
                i.position_in_cluster_queue,
                i.position_in_local_queue,
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("high", 5, 0, 0),
            ("low-old", 1, 1, 1),
            ("low-new", 1, 2, 2)
        ]
    );
    let low_old = &items[1];
    assert_eq!(low_old.local_queue_name, "lq");
    assert_eq!(low_old.metadata.namespace, "ns");
    assert_eq!(
        low_old
            .metadata
            .creation_timestamp
            .as_ref()
            .map(|t| t.0.to_string()),
        Some("2026-11-23T10:00:00Z".to_string())
    );
    let owner = &low_old.metadata.owner_references[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Job", "job-low-old")
    );
    assert_eq!(
        owner.controller, None,
        "Kueue copies apiVersion, kind, name and uid only"
    );
}

#[test]
fn the_leader_shows_what_it_admitted_as_gone_and_unknown_queues_as_such() {
    let mut h = Harness::new();
    h.apply(workload("a", 2, 0, 0));
    h.apply(workload("b", 2, 0, 1));
    h.apply(workload("c", 2, 0, 2));
    h.turn();
    let items = ask(&mut h.admission, Queue::Local(ObjectKey::new("ns", "lq"))).unwrap();
    let names: Vec<&str> = items.iter().map(|i| i.metadata.name.as_str()).collect();
    assert_eq!(names, ["c"], "a and b hold the 4 cpu");
    assert_eq!(
        ask(&mut h.admission, Queue::Cluster("nope".into())),
        Err(PendingError::Unknown(UnknownQueue::ClusterQueue))
    );
    assert_eq!(
        ask(&mut h.admission, Queue::Local(ObjectKey::new("ns", "nope"))),
        Err(PendingError::Unknown(UnknownQueue::LocalQueue))
    );
}

#[test]
fn nothing_is_answered_before_every_cache_is_listed() {
    let (mut admission, _) = unlisted_loop();
    assert_eq!(
        ask(&mut admission, Queue::Cluster("team".into())),
        Err(PendingError::NotReady)
    );
}

#[test]
fn a_workload_waiting_out_its_backoff_keeps_its_place_in_the_list() {
    let (leader, leading) = watch::channel(false);
    let mut h = Harness::with(None, leader, leading);
    h.apply(workload("first", 2, 0, 0));
    let mut backing_off = workload("second", 2, 0, 1);
    backing_off.status = Some(parse(
        r#"{requeueState: {count: 1, requeueAt: "2099-01-01T00:00:00Z"},
            conditions: [{type: Evicted, status: "True", reason: PodsReadyTimeout, message: m,
                          lastTransitionTime: "2026-11-23T10:00:01Z"}]}"#,
    ));
    h.apply(backing_off);
    h.apply(workload("third", 2, 0, 2));
    assert!(
        h.admission.backoff.contains_key(&wk("second")),
        "it waits out its backoff outside the engine"
    );
    let items = ask(&mut h.admission, Queue::Cluster("team".into())).unwrap();
    let names: Vec<(&str, i32)> = items
        .iter()
        .map(|i| (i.metadata.name.as_str(), i.position_in_cluster_queue))
        .collect();
    assert_eq!(names, [("first", 0), ("second", 1), ("third", 2)]);
}
