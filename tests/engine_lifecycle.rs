//! Engine lifecycle on the model: misconfiguration, stop policies and deactivation, deep queues,
//! determinism, invalid input, and workloads added or finished between runs.

mod engine_support;

use engine_support::*;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kuota::engine::model::*;
use kuota::engine::{Engine, Event, ModelError};
use std::sync::Arc;

#[test]
fn misconfiguration_leaves_workloads_pending_with_a_reason() {
    let mut selective = cq(
        "selective",
        None,
        vec![cpu_group("default", quota("cpu", "4"))],
    );
    selective.namespace_selector = Some(LabelSelector {
        match_labels: Some([("team".to_string(), "a".to_string())].into()),
        ..Default::default()
    });
    let mut unselected = cq(
        "unselected",
        None,
        vec![cpu_group("default", quota("cpu", "4"))],
    );
    unselected.namespace_selector = None;
    let cycled = cq(
        "cycled",
        Some("x"),
        vec![cpu_group("default", quota("cpu", "4"))],
    );
    let mut lost = wl("lost", "nowhere", 0, 1, "1", 1);
    lost.queue_name = "missing".into();
    let s = snapshot(
        vec![flavor("default")],
        vec![selective, unselected, cycled],
        vec![
            cohort("x", Some("y"), vec![]),
            cohort("y", Some("x"), vec![]),
        ],
        vec![
            wl("sel", "selective", 0, 1, "1", 1),
            wl("unsel", "unselected", 0, 1, "1", 1),
            wl("cyc", "cycled", 0, 1, "1", 1),
            lost,
        ],
    );
    let run = settle(&s);
    assert_eq!(pending(&run, "sel").0, "Misconfigured");
    assert!(
        pending(&run, "sel")
            .1
            .contains("doesn't match ClusterQueue selector")
    );
    assert_eq!(pending(&run, "unsel").0, "Misconfigured");
    let (reason, message) = pending(&run, "cyc");
    assert_eq!(reason, "Suspended");
    assert!(
        message.contains("cohort cycle detected: x -> y -> x"),
        "{message}"
    );
    assert_eq!(
        pending(&run, "lost"),
        (
            "Misconfigured".into(),
            "LocalQueue missing doesn't exist".into()
        )
    );
}

#[test]
fn stop_policies_and_deactivation_evict_or_hold() {
    let mut drained = cq(
        "drained",
        None,
        vec![cpu_group("default", quota("cpu", "4"))],
    );
    drained.stop_policy = StopPolicy::HoldAndDrain;
    let mut held = cq("held", None, vec![cpu_group("default", quota("cpu", "4"))]);
    held.stop_policy = StopPolicy::Hold;
    let open = cq("open", None, vec![cpu_group("default", quota("cpu", "4"))]);
    let mut inactive = admitted(wl("inactive", "open", 0, 1, "1", 1), "open", "default");
    inactive.active = false;
    let s = snapshot(
        vec![flavor("default")],
        vec![drained, held, open],
        vec![],
        vec![
            admitted(
                wl("drained-run", "drained", 0, 1, "1", 1),
                "drained",
                "default",
            ),
            admitted(wl("held-run", "held", 0, 1, "1", 1), "held", "default"),
            wl("held-wait", "held", 0, 2, "1", 1),
            inactive,
        ],
    );
    let run = settle(&s);
    assert_eq!(pending(&run, "drained-run").0, "Suspended");
    assert!(run.events.iter().any(|e| matches!(e, Event::Evicted { workload, reason, .. } if workload.name == "drained-run" && reason.as_str() == "ClusterQueueStopped")));
    assert!(is_admitted(&run, "held-run"));
    assert_eq!(pending(&run, "held-wait").0, "Suspended");
    assert!(run.events.iter().any(|e| matches!(e, Event::Evicted { workload, reason, .. } if workload.name == "inactive" && reason.as_str() == "Deactivated")));
}

#[test]
fn a_terminating_cluster_queue_keeps_what_it_admitted_and_admits_nothing_new() {
    let mut closing = cq(
        "closing",
        None,
        vec![cpu_group("default", quota("cpu", "4"))],
    );
    closing.terminating = true;
    let s = snapshot(
        vec![flavor("default")],
        vec![closing],
        vec![],
        vec![
            admitted(wl("running", "closing", 0, 1, "1", 1), "closing", "default"),
            wl("waiting", "closing", 0, 2, "1", 1),
        ],
    );
    let run = settle(&s);
    assert!(is_admitted(&run, "running"));
    assert!(
        !run.events
            .iter()
            .any(|e| matches!(e, Event::Evicted { .. }))
    );
    let (reason, message) = pending(&run, "waiting");
    assert_eq!(reason, "Misconfigured");
    assert!(message.contains("terminating"), "{message}");
}

#[test]
fn a_deep_queue_drains_in_one_cycle() {
    let workloads = (0..200)
        .map(|i| wl(&format!("w{i}"), "a", 0, i, "1", 1))
        .collect();
    let s = snapshot(
        vec![flavor("default")],
        vec![cq(
            "a",
            None,
            vec![cpu_group("default", quota("cpu", "150"))],
        )],
        vec![],
        workloads,
    );
    let mut engine = Engine::new(&s, EngineConfig::default()).unwrap();
    let first = engine.cycle();
    assert_eq!(first.admitted.len(), 150);
    assert!(
        first
            .admitted
            .iter()
            .enumerate()
            .all(|(i, a)| a.workload.name == format!("w{i}"))
    );
    let run = engine.run_until_stable();
    assert_eq!(
        run.workloads
            .iter()
            .filter(|w| matches!(w.status, kuota::engine::WorkloadStatus::Admitted(_)))
            .count(),
        150
    );
}

#[test]
fn same_snapshot_same_decisions() {
    let s = two_queues(
        quota("cpu", "5"),
        quota("cpu", "5"),
        (0..20)
            .map(|i| {
                wl(
                    &format!("w{i}"),
                    if i % 2 == 0 { "a" } else { "b" },
                    i as i32 % 3,
                    i,
                    "1",
                    1,
                )
            })
            .collect(),
    );
    assert_eq!(settle(&s), settle(&s));
}

#[test]
fn invalid_input_names_object_and_field() {
    let s = snapshot(
        vec![flavor("default")],
        vec![cq(
            "a",
            None,
            vec![cpu_group(
                "default",
                quota_limits("cpu", "4", Some("1"), None),
            )],
        )],
        vec![],
        vec![],
    );
    let err = Engine::new(&s, EngineConfig::default()).err().unwrap();
    assert_eq!(
        err.to_string(),
        "ClusterQueue \"a\": field spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: borrowingLimit must be nil when cohortName is empty"
    );
    let s = two_queues(
        quota_limits("cpu", "4", None, Some("5")),
        quota("cpu", "1"),
        vec![],
    );
    assert!(
        matches!(Engine::new(&s, EngineConfig::default()), Err(ModelError::InvalidField { field, .. }) if field.ends_with("lendingLimit"))
    );
    let s = two_queues(
        quota("cpu", "4"),
        quota("cpu", "1"),
        vec![wl("x", "a", 0, 1, "1", 1), wl("x", "b", 0, 1, "1", 1)],
    );
    assert!(matches!(
        Engine::new(&s, EngineConfig::default()),
        Err(ModelError::Duplicate {
            kind: "Workload",
            ..
        })
    ));
}

#[test]
fn workloads_added_later_and_finished_ones_free_quota() {
    let s = snapshot(
        vec![flavor("default")],
        vec![cq("a", None, vec![cpu_group("default", quota("cpu", "4"))])],
        vec![],
        vec![wl("first", "a", 0, 1, "3", 1)],
    );
    let mut engine = Engine::new(&s, EngineConfig::default()).unwrap();
    engine.run_until_stable();
    engine
        .upsert_workload(wl("second", "a", 0, 2, "2", 1))
        .unwrap();
    // Replacing a workload takes its new requests: 3 cpu no longer fits beside "first".
    engine
        .upsert_workload(wl("second", "a", 0, 2, "3", 1))
        .unwrap();
    let run = engine.run_until_stable();
    assert_eq!(pending(&run, "second").0, "WaitingForQuota");
    assert!(engine.finish(&key("first")));
    assert!(!engine.finish(&key("first")));
    let run = engine.run_until_stable();
    assert!(is_admitted(&run, "second"));
    assert_eq!(
        status(&run, "first"),
        &kuota::engine::WorkloadStatus::Finished
    );
    assert_eq!(engine.take_events().len(), 2);
    assert!(engine.events().is_empty());
}

/// Kueue's `AdmissionGatedBy`: a gated workload waits with `AdmissionGated` though quota is free
/// (a misconfiguration is named first), and is admitted once its gates are removed.
#[test]
fn a_gated_workload_waits_until_its_gates_are_removed() {
    let open = cq("open", None, vec![cpu_group("default", quota("cpu", "4"))]);
    let mut gated = wl("gated", "open", 0, 1, "1", 1);
    gated.admission_gated_by = Some(Arc::new("example.com/check,example.com/approval".into()));
    let mut lost = wl("lost", "open", 0, 2, "1", 1);
    lost.queue_name = "missing".into();
    lost.admission_gated_by = Some(Arc::new("example.com/check".into()));
    let s = snapshot(
        vec![flavor("default")],
        vec![open],
        vec![],
        vec![gated.clone(), lost],
    );
    let run = settle(&s);
    assert_eq!(
        pending(&run, "gated"),
        (
            "AdmissionGated".into(),
            "Admission is gated by: example.com/check,example.com/approval".into()
        )
    );
    assert_eq!(pending(&run, "lost").0, "Misconfigured");

    let mut engine = Engine::new(&s, EngineConfig::default()).unwrap();
    engine.run_until_stable();
    gated.admission_gated_by = None;
    engine.upsert_workload(gated).unwrap();
    let run = engine.run_until_stable();
    assert!(is_admitted(&run, "gated"), "{:?}", status(&run, "gated"));
}
