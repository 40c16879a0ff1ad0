use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::*;
use crate::jobs::fixtures::{default_scope, merge};
use crate::jobs::{JobScope, OwnerKind};

/// A LeaderWorkerSet `lws` in `team` of 2 groups of 3, a leader template, merged with `patch`.
fn lws(patch: Value) -> DynamicObject {
    let container = json!([{"name": "c", "image": "nginx",
                             "resources": {"requests": {"cpu": "1"}}}]);
    let mut object = json!({
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "lws", "namespace": "team"},
        "spec": {
            "replicas": 2,
            "leaderWorkerTemplate": {
                "size": 3,
                "leaderTemplate": {"spec": {"containers": container}},
                "workerTemplate": {"metadata": {"labels": {"app": "w"}},
                                   "spec": {"containers": container}},
            },
        },
    });
    merge(&mut object, patch);
    serde_json::from_value(object).expect("a LeaderWorkerSet")
}

fn scope(manage_without_queue_name: bool) -> JobScope {
    default_scope(
        manage_without_queue_name,
        OwnerKind::new("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet"),
    )
}

fn defaulted(
    lws: &DynamicObject,
    scope: &JobScope,
    tas: bool,
    default_queue: bool,
) -> DynamicObject {
    let namespace_labels =
        BTreeMap::from([("kubernetes.io/metadata.name".to_owned(), "team".to_owned())]);
    default_leaderworkerset(
        lws,
        LwsDefaulting {
            parent: ParentDefaulting {
                scope,
                namespace_labels: &namespace_labels,
                default_local_queue_exists: default_queue,
            },
            topology_aware_scheduling: tas,
        },
    )
    .unwrap_or_else(|| lws.clone())
}

fn at<'a>(lws: &'a DynamicObject, pointer: &str) -> Option<&'a str> {
    lws.data.pointer(pointer).and_then(Value::as_str)
}

const LEADER_META: &str = "/spec/leaderWorkerTemplate/leaderTemplate/metadata";
const WORKER_META: &str = "/spec/leaderWorkerTemplate/workerTemplate/metadata";

#[test]
fn a_managed_lws_has_both_templates_marked_with_its_queue_class_parent_and_serving() {
    let queued = lws(json!({"metadata": {"labels": {
        "kueue.x-k8s.io/queue-name": "lq", "kueue.x-k8s.io/priority-class": "high"}}}));
    let out = defaulted(&queued, &scope(false), false, false);
    for meta in [LEADER_META, WORKER_META] {
        assert_eq!(
            at(&out, &format!("{meta}/labels/kueue.x-k8s.io~1queue-name")),
            Some("lq")
        );
        assert_eq!(
            at(
                &out,
                &format!("{meta}/labels/kueue.x-k8s.io~1priority-class")
            ),
            Some("high")
        );
        assert_eq!(
            at(
                &out,
                &format!("{meta}/annotations/kueue.x-k8s.io~1pod-suspending-parent")
            ),
            Some("leaderworkerset.x-k8s.io/leaderworkerset")
        );
        assert_eq!(
            at(
                &out,
                &format!("{meta}/annotations/kueue.x-k8s.io~1pod-group-serving")
            ),
            Some("true")
        );
        assert_eq!(
            at(
                &out,
                &format!("{meta}/annotations/kueue.x-k8s.io~1pod-index-offset")
            ),
            None,
            "no offset without TAS"
        );
    }
    assert_eq!(
        at(&out, &format!("{WORKER_META}/labels/app")),
        Some("w"),
        "labels kept"
    );
}

#[test]
fn an_lws_naming_no_queue_is_left_alone_unless_its_namespace_has_a_default_queue() {
    let plain = lws(json!({}));
    assert!(
        default_leaderworkerset(
            &plain,
            LwsDefaulting {
                parent: ParentDefaulting {
                    scope: &scope(false),
                    namespace_labels: &BTreeMap::new(),
                    default_local_queue_exists: false,
                },
                topology_aware_scheduling: true,
            },
        )
        .is_none()
    );
    let out = defaulted(&plain, &scope(false), false, true);
    assert_eq!(crate::jobs::queue_name(&out.metadata), Some("default"));
    assert_eq!(
        at(
            &out,
            &format!("{WORKER_META}/labels/kueue.x-k8s.io~1queue-name")
        ),
        Some("default")
    );
    let every = defaulted(&plain, &scope(true), false, false);
    assert_eq!(
        at(
            &every,
            &format!("{WORKER_META}/annotations/kueue.x-k8s.io~1pod-suspending-parent")
        ),
        Some("leaderworkerset.x-k8s.io/leaderworkerset"),
        "manageJobsWithoutQueueName manages it without a queue"
    );
    assert_eq!(
        at(
            &every,
            &format!("{WORKER_META}/labels/kueue.x-k8s.io~1queue-name")
        ),
        None
    );
}

#[test]
fn under_tas_the_workers_of_an_lws_with_a_leader_are_ranked_from_one() {
    let queued = lws(json!({"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "lq"}}}));
    let out = defaulted(&queued, &scope(false), true, false);
    let offset = |meta: &str| {
        at(
            &out,
            &format!("{meta}/annotations/kueue.x-k8s.io~1pod-index-offset"),
        )
        .map(str::to_owned)
    };
    assert_eq!(offset(WORKER_META).as_deref(), Some("1"));
    assert_eq!(offset(LEADER_META), None);

    let grouped = lws(
        json!({"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {"leaderWorkerTemplate": {"workerTemplate": {"metadata": {"annotations": {
            "kueue.x-k8s.io/podset-group-name": "g"}}}}}}),
    );
    let out = defaulted(&grouped, &scope(false), true, false);
    assert_eq!(
        at(
            &out,
            &format!("{WORKER_META}/annotations/kueue.x-k8s.io~1pod-index-offset")
        ),
        None,
        "a pod set group ranks leader and workers together"
    );

    let leaderless = lws(
        json!({"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {"leaderWorkerTemplate": {"leaderTemplate": null}}}),
    );
    let out = defaulted(&leaderless, &scope(false), true, false);
    assert_eq!(
        at(
            &out,
            &format!("{WORKER_META}/annotations/kueue.x-k8s.io~1pod-index-offset")
        ),
        None
    );
    assert!(
        out.data.pointer(LEADER_META).is_none(),
        "no leader template made up"
    );
}

fn facts(managed: bool) -> LwsValidation {
    LwsValidation {
        managed,
        topology_aware_scheduling: true,
        immutable_group_size: true,
    }
}

fn messages(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

#[test]
fn replicas_out_of_bounds_and_a_bad_queue_name_are_refused_on_creation() {
    let bad = lws(
        json!({"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "Not_A_Name"}},
                         "spec": {"replicas": -1}}),
    );
    let found = messages(&validate_leaderworkerset(None, &bad, facts(true)));
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].starts_with(
            "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"Not_A_Name\""
        )
    );
    assert_eq!(
        found[1],
        "spec.replicas: Invalid value: \"-1\": invalid LeaderWorkerSet replicas: must be >= 0, got -1"
    );
    let huge = lws(json!({"spec": {"replicas": 1_000_001}}));
    assert_eq!(
        messages(&validate_leaderworkerset(None, &huge, facts(true))),
        [
            "spec.replicas: Invalid value: \"1000001\": invalid LeaderWorkerSet replicas: must be <= 1000000, got 1000001"
        ]
    );
    assert!(validate_leaderworkerset(None, &lws(json!({})), facts(true)).is_empty());
}

#[test]
fn topology_annotations_are_checked_against_each_pod_set() {
    let two_levels = lws(json!({"spec": {"leaderWorkerTemplate": {"workerTemplate": {
        "metadata": {"annotations": {
            "kueue.x-k8s.io/podset-required-topology": "rack",
            "kueue.x-k8s.io/podset-preferred-topology": "block"}}}}}}));
    let found = messages(&validate_leaderworkerset(None, &two_levels, facts(true)));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with(
        "spec.leaderWorkerTemplate.workerTemplate.metadata.annotations: Invalid value: \"\": must not contain more than one topology annotation"
    ));
    let off = LwsValidation {
        topology_aware_scheduling: false,
        ..facts(true)
    };
    assert!(
        validate_leaderworkerset(None, &two_levels, off).is_empty(),
        "only under TAS"
    );

    // The workers of a group of 3 with a leader are 2: a slice of 3 does not fit.
    let slice = lws(json!({"spec": {"leaderWorkerTemplate": {"workerTemplate": {
        "metadata": {"annotations": {
            "kueue.x-k8s.io/podset-slice-required-topology": "rack",
            "kueue.x-k8s.io/podset-slice-size": "3"}}}}}}));
    let found = messages(&validate_leaderworkerset(None, &slice, facts(true)));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("spec.leaderWorkerTemplate.workerTemplate.metadata.annotations:"));

    let lone_group = lws(json!({"spec": {"leaderWorkerTemplate": {"leaderTemplate": {
        "metadata": {"annotations": {
            "kueue.x-k8s.io/podset-required-topology": "rack",
            "kueue.x-k8s.io/podset-group-name": "g"}}}}}}));
    assert_eq!(
        messages(&validate_leaderworkerset(None, &lone_group, facts(true))),
        [
            "spec.leaderWorkerTemplate.leaderTemplate.metadata.annotations[kueue.x-k8s.io/podset-group-name]: Invalid value: \"g\": can only define groups of exactly 2 pod sets, got: 1 pod set(s)"
        ]
    );
    let pair = lws(json!({"spec": {"leaderWorkerTemplate": {
        "leaderTemplate": {"metadata": {"annotations": {
            "kueue.x-k8s.io/podset-required-topology": "rack",
            "kueue.x-k8s.io/podset-group-name": "g"}}},
        "workerTemplate": {"metadata": {"annotations": {
            "kueue.x-k8s.io/podset-required-topology": "rack",
            "kueue.x-k8s.io/podset-group-name": "g"}}}}}}));
    assert!(validate_leaderworkerset(None, &pair, facts(true)).is_empty());
}

#[test]
fn the_queue_may_change_only_while_no_group_is_ready_and_never_be_dropped() {
    let old = lws(json!({"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "a"}}}));
    let moved = lws(json!({"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "b"}}}));
    assert!(validate_leaderworkerset(Some(&old), &moved, facts(true)).is_empty());
    let ready = lws(
        json!({"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "a"}},
                           "status": {"readyReplicas": 1}}),
    );
    assert_eq!(
        messages(&validate_leaderworkerset(Some(&ready), &moved, facts(true))),
        ["metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"b\": field is immutable"]
    );
    let dropped = lws(json!({}));
    assert_eq!(
        validate_leaderworkerset(Some(&old), &dropped, facts(true)).len(),
        1,
        "dropping the queue is refused even while suspended"
    );
}

#[test]
fn a_managed_lws_keeps_its_leader_template_pod_specs_and_group_size() {
    let old = lws(json!({}));
    let resized = lws(json!({"spec": {"leaderWorkerTemplate": {"size": 4}}}));
    assert_eq!(
        messages(&validate_leaderworkerset(Some(&old), &resized, facts(true))),
        ["spec.leaderWorkerTemplate.size: Invalid value: \"4\": field is immutable"]
    );
    let gate_off = LwsValidation {
        immutable_group_size: false,
        ..facts(true)
    };
    assert!(validate_leaderworkerset(Some(&old), &resized, gate_off).is_empty());
    assert!(
        validate_leaderworkerset(Some(&old), &resized, facts(false)).is_empty(),
        "an unmanaged LeaderWorkerSet may change"
    );

    let bigger = lws(
        json!({"spec": {"leaderWorkerTemplate": {"workerTemplate": {"spec": {
        "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "2"}}}]}}}}}),
    );
    assert_eq!(
        messages(&validate_leaderworkerset(Some(&old), &bigger, facts(true))),
        ["spec.leaderWorkerTemplate.workerTemplate.spec: Invalid value: \"\": field is immutable"]
    );
    let new_image = lws(
        json!({"spec": {"leaderWorkerTemplate": {"workerTemplate": {"spec": {
        "containers": [{"name": "c", "image": "nginx:2", "resources": {"requests": {"cpu": "1"}}}]}}}}}),
    );
    assert!(
        validate_leaderworkerset(Some(&old), &new_image, facts(true)).is_empty(),
        "what does not decide admission may change"
    );
    let leaderless = lws(json!({"spec": {"leaderWorkerTemplate": {"leaderTemplate": null}}}));
    assert_eq!(
        messages(&validate_leaderworkerset(
            Some(&old),
            &leaderless,
            facts(true)
        )),
        ["spec.leaderWorkerTemplate.leaderTemplate: Invalid value: \"unset\": field is immutable"]
    );
}

#[test]
fn a_priority_class_may_not_be_added_while_a_group_is_ready_nor_removed() {
    let ready = lws(json!({"status": {"readyReplicas": 2}}));
    let classed = lws(json!({"metadata": {"labels": {"kueue.x-k8s.io/priority-class": "high"}}}));
    assert_eq!(
        messages(&validate_leaderworkerset(
            Some(&ready),
            &classed,
            facts(true)
        )),
        [
            "metadata.labels[kueue.x-k8s.io/priority-class]: Invalid value: \"high\": WorkloadPriorityClass cannot be added to a non-suspended workload"
        ]
    );
    assert!(validate_leaderworkerset(Some(&lws(json!({}))), &classed, facts(true)).is_empty());
    assert_eq!(
        validate_leaderworkerset(Some(&classed), &lws(json!({})), facts(true)).len(),
        1
    );
}
