use serde_json::{Value, json};

use super::*;
use crate::jobs::fixtures::{merge, pod};

const UID: &str = "5a1e2d4e-0000-4000-8000-0000000000bb";
/// Kueue's names of the Workloads of groups 0 and 1 of `lws` with [`UID`]
/// (`GetWorkloadNameForOwnerWithGVK("lws-<i>", uid, LeaderWorkerSet)`).
const GROUP_0: &str = "leaderworkerset-lws-0-1aca4";
const GROUP_1: &str = "leaderworkerset-lws-1-0e216";

/// A managed LeaderWorkerSet `lws` in `ns` of 2 groups of 3 in queue `lq`, with a leader
/// template, merged with `patch`.
fn lws(patch: Value) -> DynamicObject {
    let marked = json!({"annotations": {
        "kueue.x-k8s.io/pod-suspending-parent": "leaderworkerset.x-k8s.io/leaderworkerset",
        "kueue.x-k8s.io/pod-group-serving": "true"}});
    let mut object = json!({
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "lws", "namespace": "ns", "uid": UID,
                     "labels": {"kueue.x-k8s.io/queue-name": "lq", "team": "a"}},
        "spec": {
            "replicas": 2,
            "leaderWorkerTemplate": {
                "size": 3,
                "leaderTemplate": {"metadata": marked, "spec": {"containers": [
                    {"name": "l", "image": "nginx", "resources": {"requests": {"cpu": "2"}}}]}},
                "workerTemplate": {"metadata": marked, "spec": {"containers": [
                    {"name": "w", "image": "nginx", "resources": {"requests": {"cpu": "1"}},
                     "env": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]}]}},
            },
        },
    });
    merge(&mut object, patch);
    serde_json::from_value(object).expect("a LeaderWorkerSet")
}

fn built(lws: &DynamicObject, index: i64, gates: &FeatureGates) -> Workload {
    let priorities = PriorityLookup::new();
    let copied = ["team".to_owned()];
    workload_for_lws_group(
        lws,
        index,
        LwsContext {
            priorities: &priorities,
            gates,
            label_keys_to_copy: &copied,
        },
    )
    .expect("a Workload")
}

fn step_with(
    lws: &DynamicObject,
    owned: &[Workload],
    pods: &[Pod],
    priorities: &PriorityLookup,
) -> LwsStep {
    let gates = FeatureGates::default();
    let owned: Vec<&Workload> = owned.iter().collect();
    next_lws_step(
        lws,
        &owned,
        pods,
        LwsContext {
            priorities,
            gates: &gates,
            label_keys_to_copy: &[],
        },
    )
}

fn step(lws: &DynamicObject, owned: &[Workload], pods: &[Pod]) -> LwsStep {
    step_with(lws, owned, pods, &PriorityLookup::new())
}

fn names(workloads: &[Workload]) -> Vec<&str> {
    workloads
        .iter()
        .filter_map(|w| w.metadata.name.as_deref())
        .collect()
}

#[test]
fn a_group_workload_has_a_leader_and_the_workers_and_is_owned_by_the_lws() {
    let workload = built(&lws(json!({})), 1, &FeatureGates::default());
    assert_eq!(workload.metadata.name.as_deref(), Some(GROUP_1));
    assert_eq!(workload.metadata.namespace.as_deref(), Some("ns"));
    assert_eq!(workload.spec.queue_name.as_deref(), Some("lq"));
    let sets: Vec<(&str, i32)> = workload
        .spec
        .pod_sets
        .iter()
        .map(|ps| (ps.name.as_str(), ps.count))
        .collect();
    assert_eq!(sets, [("leader", 1), ("worker", 2)]);
    let worker = &workload.spec.pod_sets[1];
    let container = &worker.template.spec.as_ref().expect("a spec").containers[0];
    assert_eq!(container.name, "w");
    assert_eq!(
        container.env.as_ref().map(Vec::len),
        Some(1),
        "duplicate environment variables dropped"
    );
    let meta = &workload.metadata;
    let annotation = |k: &str| meta.annotations.as_ref().and_then(|a| a.get(k)).cloned();
    assert_eq!(
        annotation("kueue.x-k8s.io/is-group-workload").as_deref(),
        Some("true")
    );
    assert_eq!(
        annotation("kueue.x-k8s.io/job-owner-gvk").as_deref(),
        Some("leaderworkerset.x-k8s.io/v1, Kind=LeaderWorkerSet")
    );
    assert_eq!(
        annotation("kueue.x-k8s.io/job-owner-name").as_deref(),
        Some("lws")
    );
    assert_eq!(
        annotation("kueue.x-k8s.io/component-workload-index").as_deref(),
        Some("1")
    );
    let label = |k: &str| meta.labels.as_ref().and_then(|l| l.get(k)).cloned();
    assert_eq!(label("kueue.x-k8s.io/job-uid").as_deref(), Some(UID));
    assert_eq!(label("team").as_deref(), Some("a"), "labelKeysToCopy");
    let owners = meta.owner_references.as_deref().unwrap_or_default();
    assert_eq!(owners.len(), 1);
    assert_eq!(
        (
            owners[0].kind.as_str(),
            owners[0].uid.as_str(),
            owners[0].controller
        ),
        ("LeaderWorkerSet", UID, None)
    );
    assert_eq!(
        meta.finalizers.as_deref(),
        Some(["kueue.x-k8s.io/resource-in-use".to_owned()].as_slice())
    );
    assert_eq!(
        worker
            .topology_request
            .as_ref()
            .and_then(|r| r.pod_index_label.as_deref()),
        Some("leaderworkerset.sigs.k8s.io/worker-index"),
        "TAS is on by default: the workers ranked by their worker index"
    );
    let mut off = FeatureGates::default();
    off.set(Feature::TopologyAwareScheduling, false);
    let untopological = built(&lws(json!({})), 1, &off);
    assert!(
        untopological
            .spec
            .pod_sets
            .iter()
            .all(|ps| ps.topology_request.is_none()),
        "no TAS request with the gate off"
    );
}

#[test]
fn without_a_leader_template_a_group_is_one_main_pod_set_of_the_size() {
    let leaderless = lws(json!({"spec": {"leaderWorkerTemplate": {"leaderTemplate": null}}}));
    let workload = built(&leaderless, 0, &FeatureGates::default());
    let sets: Vec<(&str, i32)> = workload
        .spec
        .pod_sets
        .iter()
        .map(|ps| (ps.name.as_str(), ps.count))
        .collect();
    assert_eq!(sets, [("main", 3)]);
    assert_eq!(workload.metadata.name.as_deref(), Some(GROUP_0));
}

#[test]
fn under_tas_the_workers_are_ranked_by_worker_index_and_a_rack_is_required() {
    let racked = lws(
        json!({"spec": {"leaderWorkerTemplate": {"workerTemplate": {"metadata": {
        "annotations": {"kueue.x-k8s.io/podset-required-topology": "rack"},
        "labels": {"leaderworkerset.sigs.k8s.io/name": "lws",
                   "leaderworkerset.sigs.k8s.io/worker-index": "0"}}}}}}),
    );
    let mut gates = FeatureGates::default();
    gates.set(Feature::TopologyAwareScheduling, true);
    let workload = built(&racked, 0, &gates);
    let leader = workload.spec.pod_sets[0]
        .topology_request
        .as_ref()
        .expect("a leader request");
    assert_eq!(leader.pod_index_label, None);
    let worker = workload.spec.pod_sets[1]
        .topology_request
        .as_ref()
        .expect("a worker request");
    assert_eq!(worker.required.as_deref(), Some("rack"));
    assert_eq!(
        worker.pod_index_label.as_deref(),
        Some("leaderworkerset.sigs.k8s.io/worker-index")
    );
    let template_labels = workload.spec.pod_sets[1]
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    assert_eq!(
        template_labels.keys().collect::<Vec<_>>(),
        ["leaderworkerset.sigs.k8s.io/name"],
        "the controller's own keys but its name are dropped"
    );

    let broken = lws(
        json!({"spec": {"leaderWorkerTemplate": {"workerTemplate": {"metadata": {
        "annotations": {"kueue.x-k8s.io/podset-slice-size": "1"}}}}}}),
    );
    let priorities = PriorityLookup::new();
    let error = workload_for_lws_group(
        &broken,
        0,
        LwsContext {
            priorities: &priorities,
            gates: &gates,
            label_keys_to_copy: &[],
        },
    )
    .expect_err("a slice size without its level");
    assert!(
        error
            .to_string()
            .starts_with("LeaderWorkerSet ns/lws: spec.leaderWorkerTemplate.workerTemplate.metadata: annotation kueue.x-k8s.io/podset-slice-size"),
        "{error}"
    );
}

#[test]
fn the_workloads_of_missing_groups_are_created_first() {
    let LwsStep::CreateWorkloads(created) = step(&lws(json!({})), &[], &[]) else {
        panic!("the Workloads of both groups are created");
    };
    assert_eq!(names(&created), [GROUP_0, GROUP_1]);
    let one = built(&lws(json!({})), 0, &FeatureGates::default());
    let LwsStep::CreateWorkloads(created) = step(&lws(json!({})), &[one], &[]) else {
        panic!("the missing one is created");
    };
    assert_eq!(names(&created), [GROUP_1]);
}

#[test]
fn a_priority_class_that_does_not_exist_is_reported() {
    let classed = lws(json!({"metadata": {"labels": {"kueue.x-k8s.io/priority-class": "gold"}}}));
    assert_eq!(
        step(&classed, &[], &[]),
        LwsStep::CannotCreate(
            "LeaderWorkerSet ns/lws: WorkloadPriorityClass \"gold\" does not exist".to_owned()
        )
    );
}

#[test]
fn the_workloads_of_removed_groups_are_deleted_and_kept_ones_follow_the_queue() {
    let gates = FeatureGates::default();
    let both = [
        built(&lws(json!({})), 0, &gates),
        built(&lws(json!({})), 1, &gates),
    ];
    assert_eq!(step(&lws(json!({})), &both, &[]), LwsStep::Idle);
    let one = lws(json!({"spec": {"replicas": 1}}));
    let LwsStep::DeleteWorkloads(deleted) = step(&one, &both, &[]) else {
        panic!("group 1's Workload is deleted");
    };
    assert_eq!(names(&deleted), [GROUP_1]);

    let moved = lws(json!({"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "other"}}}));
    let LwsStep::UpdateWorkloads(updated) = step(&moved, &both, &[]) else {
        panic!("both Workloads follow the queue");
    };
    assert!(
        updated
            .iter()
            .all(|w| w.spec.queue_name.as_deref() == Some("other"))
    );

    let mut priorities = PriorityLookup::new();
    priorities.add_workload_priority_class("gold", 100);
    let classed = lws(json!({"metadata": {"labels": {"kueue.x-k8s.io/priority-class": "gold"}}}));
    let LwsStep::UpdateWorkloads(updated) = step_with(&classed, &both, &[], &priorities) else {
        panic!("both Workloads follow the priority class");
    };
    assert!(updated.iter().all(|w| w.spec.priority == Some(100)));
}

#[test]
fn during_a_rolling_update_with_surge_the_surge_groups_keep_their_workloads() {
    let surging = lws(json!({
        "spec": {"rolloutStrategy": {"type": "RollingUpdate",
                 "rollingUpdateConfiguration": {"maxSurge": 1}}},
        "status": {"replicas": 3, "updatedReplicas": 1}}));
    let LwsStep::CreateWorkloads(created) = step(&surging, &[], &[]) else {
        panic!("three Workloads");
    };
    assert_eq!(created.len(), 3);
    let settled = lws(json!({
        "spec": {"rolloutStrategy": {"type": "RollingUpdate",
                 "rollingUpdateConfiguration": {"maxSurge": "50%"}}},
        "status": {"replicas": 3, "updatedReplicas": 2}}));
    let LwsStep::CreateWorkloads(created) = step(&settled, &[], &[]) else {
        panic!("two Workloads");
    };
    assert_eq!(created.len(), 2, "the update is over");
}

/// A pod of group `group` the LeaderWorkerSet's StatefulSets created and the Pod webhook gated;
/// a worker names its leader.
fn lws_pod(name: &str, group: &str, worker: bool) -> Pod {
    let mut annotations = json!({
        "kueue.x-k8s.io/pod-suspending-parent": "leaderworkerset.x-k8s.io/leaderworkerset",
        "kueue.x-k8s.io/role-hash": "0a1b2c3d"});
    if worker {
        merge(
            &mut annotations,
            json!({"leaderworkerset.sigs.k8s.io/leader-name": "lws-0"}),
        );
    }
    pod(
        name,
        json!({"metadata": {
            "namespace": "ns",
            "labels": {"kueue.x-k8s.io/queue-name": null,
                       "leaderworkerset.sigs.k8s.io/name": "lws",
                       "leaderworkerset.sigs.k8s.io/group-index": group},
            "annotations": annotations},
        "spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}]}}),
    )
}

fn all_workloads() -> Vec<Workload> {
    let gates = FeatureGates::default();
    vec![
        built(&lws(json!({})), 0, &gates),
        built(&lws(json!({})), 1, &gates),
    ]
}

#[test]
fn each_pod_is_labelled_into_its_group_with_its_role() {
    let pods = [
        lws_pod("lws-0", "0", false),
        lws_pod("lws-0-1", "0", true),
        lws_pod("lws-1-2", "1", true),
    ];
    let LwsStep::PatchPods(patched) = step(&lws(json!({})), &all_workloads(), &pods) else {
        panic!("the pods are labelled");
    };
    assert_eq!(patched.len(), 3);
    let read = |pod: &Pod, key: &str| {
        pod.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(key))
            .cloned()
            .unwrap_or_default()
    };
    let summary: Vec<(String, String, String, String)> = patched
        .iter()
        .map(|p| {
            (
                read(p, "kueue.x-k8s.io/pod-group-name"),
                read(p, "kueue.x-k8s.io/prebuilt-workload-name"),
                read(p, "kueue.x-k8s.io/pod-group-total-count"),
                read(p, "kueue.x-k8s.io/role-hash"),
            )
        })
        .collect();
    let row = |group: &str, role: &str| {
        (
            group.to_owned(),
            group.to_owned(),
            "3".to_owned(),
            role.to_owned(),
        )
    };
    assert_eq!(
        summary,
        [
            row(GROUP_0, "leader"),
            row(GROUP_0, "worker"),
            row(GROUP_1, "worker")
        ]
    );
    for pod in &patched {
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        assert_eq!(
            labels.get("kueue.x-k8s.io/managed").map(String::as_str),
            Some("true")
        );
        assert_eq!(
            labels.get("kueue.x-k8s.io/queue-name").map(String::as_str),
            Some("lq")
        );
    }
    // Once labelled, nothing more is written.
    assert_eq!(
        step(&lws(json!({})), &all_workloads(), &patched),
        LwsStep::Idle
    );
}

#[test]
fn a_pod_without_its_group_index_or_that_ended_is_left_alone() {
    let mut unindexed = lws_pod("lws-0", "0", false);
    if let Some(labels) = unindexed.metadata.labels.as_mut() {
        labels.remove("leaderworkerset.sigs.k8s.io/group-index");
    }
    let mut done = lws_pod("lws-1", "1", false);
    done.status.get_or_insert_default().phase = Some("Succeeded".to_owned());
    assert_eq!(
        step(&lws(json!({})), &all_workloads(), &[unindexed, done]),
        LwsStep::Idle
    );
}

#[test]
fn without_a_leader_template_every_pod_is_of_pod_set_main() {
    let leaderless = lws(json!({"spec": {"leaderWorkerTemplate": {"leaderTemplate": null}}}));
    let mut pod = lws_pod("lws-0-1", "0", true);
    assert!(group_lws_pod(&leaderless, &mut pod));
    assert_eq!(
        pod.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("kueue.x-k8s.io/role-hash"))
            .map(String::as_str),
        Some("main")
    );
}

#[test]
fn a_grouped_pod_follows_the_queue_only_while_gated() {
    let mut grouped = lws_pod("lws-0", "0", false);
    assert!(group_lws_pod(&lws(json!({})), &mut grouped));
    let moved = lws(json!({"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "other"}}}));
    let mut gated = grouped.clone();
    assert!(group_lws_pod(&moved, &mut gated));
    assert_eq!(
        gated
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("kueue.x-k8s.io/queue-name"))
            .map(String::as_str),
        Some("other")
    );
    let mut running = grouped;
    running.spec.get_or_insert_default().scheduling_gates = None;
    assert!(
        !group_lws_pod(&moved, &mut running),
        "a released pod keeps its queue"
    );
}

#[test]
fn managed_lws_and_its_pods_are_recognised_by_the_webhook_marks() {
    assert!(lws_managed(&lws(json!({}))));
    let unmarked = lws(json!({"spec": {"leaderWorkerTemplate": {"workerTemplate": {
        "metadata": {"annotations": null}}}}}));
    assert!(!lws_managed(&unmarked));
    let pod = lws_pod("lws-0", "0", false);
    assert!(suspended_by_lws(&pod));
    assert_eq!(lws_of_pod(&pod), Some("lws"));
}
