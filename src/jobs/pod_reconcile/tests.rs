use serde_json::{Value, json};

use super::*;
use crate::api::keys::{job_event_reasons, labels, pods_ready_reasons};
use crate::jobs::fixtures::{CLUSTER_QUEUE, condition, merge, pod};

const GATED: &str = "gated";
const RUNNING: &str = "running";

fn flavors() -> BTreeMap<String, FlavorInfo> {
    BTreeMap::from([(
        "on-demand".to_owned(),
        FlavorInfo {
            node_labels: BTreeMap::from([("instance-type".to_owned(), "on-demand".to_owned())]),
            tolerations: Vec::new(),
        },
    )])
}

fn step_with(pods: &[Pod], workload: Option<&Workload>, wait_for_pods_ready: bool) -> PodStep {
    let (flavors, priorities, gates) = (flavors(), PriorityLookup::new(), FeatureGates::default());
    next_pod_step(
        pods,
        workload,
        PodContext {
            flavors: &flavors,
            priorities: &priorities,
            gates: &gates,
            wait_for_pods_ready,
            label_keys_to_copy: &[],
        },
    )
}

fn step(pods: &[Pod], workload: Option<&Workload>) -> PodStep {
    step_with(pods, workload, false)
}

/// A managed pod as the webhook leaves it: `GATED` (admission gate, pending) or `RUNNING`
/// (ungated, bound, ready); `extra` is merged over it.
fn managed(name: &str, state: &str, extra: Value) -> Pod {
    let mut patch = json!({"metadata": {
        "labels": {(labels::MANAGED): "true"},
        "annotations": {(annotations::ROLE_HASH): "worker"},
        "finalizers": [finalizers::MANAGED],
        "creationTimestamp": format!("2026-01-01T00:00:0{}Z", name.len() % 10),
    }});
    if state == GATED {
        merge(
            &mut patch,
            json!({"spec": {"schedulingGates": [{"name": scheduling_gates::ADMISSION}]}}),
        );
    } else {
        merge(
            &mut patch,
            json!({
                "spec": {"nodeName": "node-1"},
                "status": {"phase": "Running", "conditions": [
                    {"type": "Ready", "status": "True"}
                ]}
            }),
        );
    }
    merge(&mut patch, extra);
    pod(name, patch)
}

/// A member of group `training` of 3 pods.
fn member(name: &str, state: &str, extra: Value) -> Pod {
    let mut patch = json!({"metadata": {
        "labels": {(labels::POD_GROUP_NAME): "training"},
        "annotations": {(annotations::POD_GROUP_TOTAL_COUNT): "3"},
    }});
    merge(&mut patch, extra);
    managed(name, state, patch)
}

fn group(state: &str) -> Vec<Pod> {
    ["a", "b", "c"]
        .iter()
        .map(|n| member(n, state, json!({})))
        .collect()
}

fn finished(pod: &Pod, phase: &str) -> Pod {
    let mut pod = pod.clone();
    let mut status = serde_json::to_value(&pod.status).unwrap();
    merge(&mut status, json!({"phase": phase, "conditions": null}));
    pod.status = serde_json::from_value(status).unwrap();
    pod
}

/// The Workload `pods` get, merged with `patch`.
fn built(pods: &[Pod], patch: Value) -> Workload {
    let PodStep::CreateWorkload(created) = step(pods, None) else {
        panic!("these pods should get a Workload");
    };
    let mut value = serde_json::to_value(&*created).unwrap();
    merge(&mut value, patch);
    serde_json::from_value(value).unwrap()
}

/// Admitted to [`CLUSTER_QUEUE`] on flavor `on-demand`, each pod set whole.
fn admitted(pods: &[Pod]) -> Workload {
    let unadmitted = built(pods, json!({}));
    let assignments: Vec<Value> = unadmitted
        .spec
        .pod_sets
        .iter()
        .map(|ps| {
            json!({"name": ps.name, "flavors": {"cpu": "on-demand"},
                "resourceUsage": {"cpu": ps.count.to_string()}, "count": ps.count})
        })
        .collect();
    built(
        pods,
        json!({"status": {
            "admission": {"clusterQueue": CLUSTER_QUEUE, "podSetAssignments": assignments},
            "conditions": [
                condition("QuotaReserved", true, "QuotaReserved", "2026-01-01T00:00:10Z"),
                condition("Admitted", true, "Admitted", "2026-01-01T00:00:10Z")
            ]
        }}),
    )
}

fn with_conditions(workload: &Workload, conditions: Value) -> Workload {
    let mut value = serde_json::to_value(workload).unwrap();
    merge(&mut value, json!({"status": {"conditions": conditions}}));
    serde_json::from_value(value).unwrap()
}

fn names(pods: &[Pod]) -> Vec<String> {
    pods.iter().map(name_of).collect()
}

fn gates_of(pod: &Pod) -> Vec<String> {
    pod.spec
        .as_ref()
        .and_then(|s| s.scheduling_gates.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|g| g.name)
        .collect()
}

fn deleting(pod: &Pod) -> Pod {
    let mut pod = pod.clone();
    pod.metadata.deletion_timestamp = serde_json::from_value(json!("2026-01-01T00:01:00Z")).ok();
    pod
}

fn without_finalizers(mut pods: Vec<Pod>) -> Vec<Pod> {
    for pod in &mut pods {
        pod.metadata.finalizers = None;
    }
    pods
}

#[test]
fn a_group_gets_its_workload_only_once_all_its_pods_exist() {
    let pods = group(GATED);
    let PodStep::CannotCompose(event) = step(&pods[..2], None) else {
        panic!("two pods of three wait for the third");
    };
    assert_eq!(event.reason, job_event_reasons::ERR_WORKLOAD_COMPOSE);
    assert!(event.warning);
    assert_eq!(
        event.note,
        "'training' group has fewer runnable pods than expected"
    );

    let PodStep::CreateWorkload(created) = step(&pods, None) else {
        panic!("a complete group gets its Workload");
    };
    assert_eq!(created.metadata.name.as_deref(), Some("training"));
    assert_eq!(
        workload_annotation(&created, annotations::IS_GROUP_WORKLOAD),
        Some("true")
    );
    assert!(holds_in_use(&created));
    assert_eq!(created.spec.pod_sets.len(), 1);
    assert_eq!(created.spec.pod_sets[0].count, 3);
    let owners: Vec<(String, String, Option<bool>)> = created
        .metadata
        .owner_references
        .iter()
        .flatten()
        .map(|o| (o.kind.clone(), o.name.clone(), o.controller))
        .collect();
    assert_eq!(
        owners,
        ["a", "b", "c"].map(|n| ("Pod".to_owned(), n.to_owned(), None))
    );
}

#[test]
fn a_single_pod_gets_a_workload_it_controls() {
    let single = managed("web", GATED, json!({}));
    let PodStep::CreateWorkload(created) = step(std::slice::from_ref(&single), None) else {
        panic!("a gated pod gets its Workload");
    };
    assert!(
        created
            .metadata
            .name
            .as_deref()
            .unwrap()
            .starts_with("pod-web-")
    );
    let owner = &created.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!((owner.name.as_str(), owner.controller), ("web", Some(true)));
}

#[test]
fn surplus_pods_go_before_the_workload_is_built() {
    let mut pods = group(GATED);
    pods.push(member(
        "late",
        GATED,
        json!({"metadata": {
            "creationTimestamp": "2026-01-01T00:00:09Z", "finalizers": null
        }}),
    ));
    let PodStep::DeleteExcess(excess) = step(&pods, None) else {
        panic!("four pods of a group of three: one goes");
    };
    assert_eq!(names(&excess), ["late"]);
}

#[test]
fn failed_pods_are_let_go_of_before_the_workload_is_built() {
    let mut pods = group(GATED);
    pods.push(finished(&member("old", GATED, json!({})), "Failed"));
    assert_eq!(step(&pods, None), PodStep::Finalize(vec![pods[3].clone()]));
}

#[test]
fn no_workload_is_built_while_a_pod_of_the_group_still_runs() {
    let mut pods = group(GATED);
    pods[0] = member("a", RUNNING, json!({}));
    assert_eq!(step(&pods, None), PodStep::Idle);
}

#[test]
fn a_running_pod_without_a_workload_is_deleted() {
    let single = managed("web", RUNNING, json!({}));
    let PodStep::StopPods {
        pods,
        reason,
        message,
    } = step(std::slice::from_ref(&single), None)
    else {
        panic!("an ungated pod without a Workload is stopped");
    };
    assert_eq!(names(&pods), ["web"]);
    assert_eq!(reason, "NoMatchingWorkload");
    assert_eq!(message, STOP_MISSING_WORKLOAD);
}

#[test]
fn a_finished_pod_without_a_workload_is_let_go_of() {
    let done = finished(&managed("web", RUNNING, json!({})), "Succeeded");
    assert_eq!(
        step(std::slice::from_ref(&done), None),
        PodStep::Finalize(vec![done.clone()])
    );
    assert_eq!(step(&without_finalizers(vec![done]), None), PodStep::Idle);
}

#[test]
fn an_admitted_group_has_every_gated_pod_started_with_its_flavor() {
    let pods = group(GATED);
    let workload = admitted(&pods);
    let PodStep::StartPods {
        pods: started,
        cluster_queue,
    } = step(&pods, Some(&workload))
    else {
        panic!("an admitted group starts");
    };
    assert_eq!(cluster_queue, CLUSTER_QUEUE);
    assert_eq!(names(&started), ["a", "b", "c"]);
    for pod in &started {
        assert!(gates_of(pod).is_empty(), "{:?}", gates_of(pod));
        let selector = pod.spec.as_ref().unwrap().node_selector.clone().unwrap();
        assert_eq!(selector["instance-type"], "on-demand");
        assert_eq!(
            pod.metadata.labels.as_ref().unwrap()[labels::POD_SET],
            "worker"
        );
    }
}

#[test]
fn a_pending_group_stays_gated() {
    let pods = group(GATED);
    let pending = built(&pods, json!({}));
    assert_eq!(step(&pods, Some(&pending)), PodStep::Idle);
}

#[test]
fn a_start_that_conflicts_with_the_pod_fails_the_workload() {
    let pods: Vec<Pod> = ["a", "b", "c"]
        .iter()
        .map(|n| {
            member(
                n,
                GATED,
                json!({"spec": {"nodeSelector": {"instance-type": "spot"}}}),
            )
        })
        .collect();
    let PodStep::FinishWorkload { reason, .. } = step(&pods, Some(&admitted(&pods))) else {
        panic!("a nodeSelector conflict cannot be retried away");
    };
    assert_eq!(reason, finished_reasons::FAILED_TO_START);
}

#[test]
fn a_running_admitted_group_needs_nothing() {
    let running = group(RUNNING);
    let workload = admitted(&group(GATED));
    assert_eq!(step(&running, Some(&workload)), PodStep::Idle);
}

#[test]
fn pods_running_without_an_admission_are_deleted() {
    let running = group(RUNNING);
    let pending = built(&group(GATED), json!({}));
    let PodStep::StopPods { pods, reason, .. } = step(&running, Some(&pending)) else {
        panic!("running pods of a Workload not admitted are stopped");
    };
    assert_eq!(pods.len(), 3);
    assert_eq!(reason, "NotAdmitted");
}

#[test]
fn an_evicted_workload_has_its_running_pods_deleted() {
    let mut pods = group(RUNNING);
    pods[2] = finished(&pods[2], "Succeeded");
    let mut evicted_condition = condition("Evicted", true, "Preempted", "2026-01-01T00:01:00Z");
    evicted_condition["message"] = json!("Preempted to accommodate a workload");
    let evicted = with_conditions(
        &admitted(&group(GATED)),
        json!([
            condition(
                "QuotaReserved",
                true,
                "QuotaReserved",
                "2026-01-01T00:00:10Z"
            ),
            condition("Admitted", true, "Admitted", "2026-01-01T00:00:10Z"),
            evicted_condition
        ]),
    );
    let PodStep::StopPods {
        pods: stopping,
        reason,
        message,
    } = step(&pods, Some(&evicted))
    else {
        panic!("an evicted group is stopped");
    };
    assert_eq!(names(&stopping), ["a", "b"]);
    assert_eq!(reason, "WorkloadEvictedDueToPreempted");
    assert_eq!(message, "Preempted to accommodate a workload");
    let gone: Vec<Pod> = pods.iter().map(deleting).collect();
    assert_eq!(step(&gone, Some(&evicted)), PodStep::Idle);
}

#[test]
fn a_group_whose_pods_all_succeeded_finishes_its_workload_then_lets_go() {
    let pods: Vec<Pod> = group(RUNNING)
        .iter()
        .map(|p| finished(p, "Succeeded"))
        .collect();
    let workload = admitted(&group(GATED));
    let PodStep::FinishWorkload {
        reason, message, ..
    } = step(&pods, Some(&workload))
    else {
        panic!("a group that succeeded finishes");
    };
    assert_eq!(reason, finished_reasons::SUCCEEDED);
    assert_eq!(message, "Pods succeeded: 3/3.");

    let done = with_conditions(
        &workload,
        json!([condition(
            "Finished",
            true,
            "Succeeded",
            "2026-01-01T00:02:00Z"
        )]),
    );
    assert_eq!(step(&pods, Some(&done)), PodStep::Finalize(pods.clone()));
    let released = without_finalizers(pods);
    assert_eq!(
        step(&released, Some(&done)),
        PodStep::ReleaseWorkload(Box::new(done.clone()))
    );
    let mut gone = done;
    gone.metadata.finalizers = None;
    assert_eq!(step(&released, Some(&gone)), PodStep::Idle);
}

#[test]
fn a_single_pod_that_failed_fails_its_workload() {
    let pod = managed("web", GATED, json!({}));
    let workload = admitted(std::slice::from_ref(&pod));
    let failed = finished(
        &managed("web", RUNNING, json!({"status": {"message": "OOMKilled"}})),
        "Failed",
    );
    let PodStep::FinishWorkload {
        reason, message, ..
    } = step(&[failed], Some(&workload))
    else {
        panic!("a failed pod finishes its Workload");
    };
    assert_eq!(
        (reason, message.as_str()),
        (finished_reasons::FAILED, "OOMKilled")
    );
}

#[test]
fn pods_ready_is_kept_when_waiting_for_it() {
    let workload = admitted(&group(GATED));
    let PodStep::PodsReady { condition, .. } = step_with(&group(RUNNING), Some(&workload), true)
    else {
        panic!("ready pods make PodsReady true");
    };
    assert!(condition.status);
    assert_eq!(condition.reason, pods_ready_reasons::STARTED);
    assert_eq!(
        step_with(&group(RUNNING), Some(&workload), false),
        PodStep::Idle
    );
}

#[test]
fn a_new_member_is_adopted_and_a_surplus_one_deleted() {
    let workload = admitted(&group(GATED));
    let mut pods = group(RUNNING);
    pods[0] = finished(&pods[0], "Failed");
    pods.push(member("d", GATED, json!({})));
    let PodStep::AdoptPods {
        workload: adopting,
        added,
    } = step(&pods, Some(&workload))
    else {
        panic!("a replacement pod becomes an owner");
    };
    assert_eq!(added, 1);
    assert!(
        adopting
            .metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.name == "d")
    );
    // The failed pod it replaces is let go of.
    assert_eq!(
        step(&pods, Some(&adopting)),
        PodStep::Finalize(vec![pods[0].clone()])
    );

    let mut crowded = group(RUNNING);
    crowded.push(member(
        "e",
        GATED,
        json!({"metadata": {"finalizers": null}}),
    ));
    let mut owning = workload.clone();
    owning
        .metadata
        .owner_references
        .get_or_insert_default()
        .push(owner(&crowded[3]));
    let PodStep::DeleteExcess(excess) = step(&crowded, Some(&owning)) else {
        panic!("a fourth runnable pod of three goes");
    };
    assert_eq!(names(&excess), ["e"]);
}

#[test]
fn a_failed_member_makes_the_workload_wait_for_its_replacement_until_it_is_adopted() {
    let workload = admitted(&group(GATED));
    let mut pods = group(RUNNING);
    pods[0] = finished(&pods[0], "Failed");
    let PodStep::ReplacementPods {
        workload: waiting,
        condition: wanted,
    } = step(&pods, Some(&workload))
    else {
        panic!("the Workload says it waits for a replacement");
    };
    assert!(wanted.status);
    assert_eq!(wanted.reason, "PodsFailed");
    let waiting = with_conditions(
        &waiting,
        json!([
            condition(
                "QuotaReserved",
                true,
                "QuotaReserved",
                "2026-01-01T00:00:10Z"
            ),
            condition("Admitted", true, "Admitted", "2026-01-01T00:00:10Z"),
            condition(
                "WaitingForReplacementPods",
                true,
                "PodsFailed",
                "2026-01-01T00:01:00Z"
            )
        ]),
    );
    assert_eq!(step(&pods, Some(&waiting)), PodStep::Idle);
    // The replacement is adopted and the failed pod let go of; then the condition turns False.
    pods.push(member("d", GATED, json!({})));
    let PodStep::AdoptPods {
        workload: adopting, ..
    } = step(&pods, Some(&waiting))
    else {
        panic!("the replacement becomes an owner");
    };
    assert_eq!(
        step(&pods, Some(&adopting)),
        PodStep::Finalize(vec![pods[0].clone()])
    );
    pods.remove(0);
    let PodStep::ReplacementPods {
        condition: settled, ..
    } = step(&pods, Some(&adopting))
    else {
        panic!("no pod is missing any more");
    };
    assert!(!settled.status);
    assert_eq!(settled.reason, "PodsReady");
}

#[test]
fn a_deleted_workload_takes_every_pod_with_it_then_lets_go() {
    let pods = group(GATED);
    let mut workload = admitted(&pods);
    workload.metadata.deletion_timestamp =
        serde_json::from_value(json!("2026-01-01T00:01:00Z")).ok();
    let PodStep::StopPods {
        pods: stopping,
        reason,
        message,
    } = step(&pods, Some(&workload))
    else {
        panic!("pods of a deleted Workload are deleted, gated or not");
    };
    assert_eq!(stopping.len(), 3);
    assert_eq!(
        (reason.as_str(), message.as_str()),
        ("WorkloadDeleted", STOP_WORKLOAD_DELETED)
    );
    let gone: Vec<Pod> = pods.iter().map(deleting).collect();
    assert_eq!(
        step(&gone, Some(&workload)),
        PodStep::Finalize(gone.clone())
    );
    assert_eq!(
        step(&without_finalizers(gone), Some(&workload)),
        PodStep::ReleaseWorkload(Box::new(workload.clone()))
    );
}

#[test]
fn a_single_pod_being_deleted_finishes_its_workload_then_is_let_go_of() {
    let pod = managed("web", RUNNING, json!({}));
    let workload = admitted(&[managed("web", GATED, json!({}))]);
    let gone = deleting(&pod);
    let PodStep::FinishWorkload { reason, .. } = step(std::slice::from_ref(&gone), Some(&workload))
    else {
        panic!("the Workload of a deleted pod is finished");
    };
    assert_eq!(reason, finished_reasons::OWNER_NOT_FOUND);
    let mut released = workload.clone();
    released.metadata.finalizers = None;
    assert_eq!(
        step(std::slice::from_ref(&gone), Some(&released)),
        PodStep::Finalize(vec![gone.clone()])
    );
}

#[test]
fn a_workload_whose_pods_are_gone_is_released() {
    let group_workload = admitted(&group(GATED));
    assert_eq!(
        step(&[], Some(&group_workload)),
        PodStep::ReleaseWorkload(Box::new(group_workload.clone()))
    );
    let single = admitted(&[managed("web", GATED, json!({}))]);
    let PodStep::FinishWorkload { reason, .. } = step(&[], Some(&single)) else {
        panic!("a single pod's orphaned Workload is finished first");
    };
    assert_eq!(reason, finished_reasons::OWNER_NOT_FOUND);
    let mut released = single;
    released.metadata.finalizers = None;
    assert_eq!(step(&[], Some(&released)), PodStep::Idle);
}

#[test]
fn a_workload_named_like_the_group_but_not_made_for_it_is_not_adopted() {
    let pods = group(GATED);
    let mut foreign = built(&pods, json!({}));
    foreign.metadata.annotations = None;
    let PodStep::CannotCompose(event) = step(&pods, Some(&foreign)) else {
        panic!("a foreign Workload is refused");
    };
    assert_eq!(event.reason, job_event_reasons::WORKLOAD_NAME_CONFLICT);
}

/// `labelKeysToCopy`: a new Workload carries the listed labels of its pod, or of its group's
/// pods when they agree; pods that disagree get no Workload and a warning, as in Kueue.
#[test]
fn listed_pod_labels_are_copied_to_a_new_workload_when_the_group_agrees() {
    let (flavors, priorities, gates) = (flavors(), PriorityLookup::new(), FeatureGates::default());
    let keys = vec!["team".to_owned()];
    let with_keys = |pods: &[Pod]| {
        next_pod_step(
            pods,
            None,
            PodContext {
                flavors: &flavors,
                priorities: &priorities,
                gates: &gates,
                wait_for_pods_ready: false,
                label_keys_to_copy: &keys,
            },
        )
    };
    let team = |value: &str| json!({"metadata": {"labels": {"team": value, "other": "x"}}});
    let single = managed("web", GATED, team("a"));
    let PodStep::CreateWorkload(created) = with_keys(std::slice::from_ref(&single)) else {
        panic!("a gated pod gets its Workload");
    };
    let labels = created.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get("team").map(String::as_str), Some("a"));
    assert!(!labels.contains_key("other"));

    let agreeing: Vec<Pod> = ["a", "b", "c"]
        .iter()
        .map(|n| member(n, GATED, team("a")))
        .collect();
    let PodStep::CreateWorkload(created) = with_keys(&agreeing) else {
        panic!("a complete group gets its Workload");
    };
    let labels = created.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get("team").map(String::as_str), Some("a"));

    let mut disagreeing = agreeing;
    disagreeing[2] = member("c", GATED, team("b"));
    let PodStep::CannotCompose(event) = with_keys(&disagreeing) else {
        panic!("pods that disagree on a copied label get no Workload");
    };
    assert_eq!(
        event.note,
        "constructing workload: pods have different label values"
    );
}

/// A running group's succeeded pods are its reclaimable pods, per role, written once; a serving
/// group's are not.
#[test]
fn a_running_groups_succeeded_pods_become_reclaimable() {
    let workload = admitted(&group(GATED));
    let mut pods = group(RUNNING);
    pods[0] = finished(&pods[0], "Succeeded");
    let PodStep::ReclaimablePods {
        pods: reclaimable, ..
    } = step(&pods, Some(&workload))
    else {
        panic!("a succeeded member is reclaimable");
    };
    let counts: Vec<(String, i32)> = reclaimable
        .iter()
        .map(|p| (p.name.clone(), p.count))
        .collect();
    assert_eq!(counts, vec![("worker".to_owned(), 1)]);

    let mut written = workload.clone();
    if let Some(status) = written.status.as_mut() {
        status.reclaimable_pods = reclaimable.into();
    }
    assert_eq!(step(&pods, Some(&written)), PodStep::Idle, "written once");

    let serving: Vec<Pod> = pods
        .iter()
        .map(|p| {
            let mut p = p.clone();
            p.metadata
                .annotations
                .get_or_insert_default()
                .insert(annotations::POD_GROUP_SERVING.to_owned(), "true".to_owned());
            p
        })
        .collect();
    assert!(
        !matches!(
            step(&serving, Some(&workload)),
            PodStep::ReclaimablePods { .. }
        ),
        "a serving group reclaims nothing"
    );
}
