use serde_json::{Value, json};

use super::*;
use crate::jobs::fixtures::pod;

fn member(name: &str, extra: Value) -> Pod {
    let mut patch = json!({"metadata": {
        "labels": {(labels::POD_GROUP_NAME): "training"},
        "annotations": {(annotations::POD_GROUP_TOTAL_COUNT): "3"}
    }});
    crate::jobs::fixtures::merge(&mut patch, extra);
    pod(name, patch)
}

fn worker(name: &str) -> Pod {
    member(name, json!({}))
}

fn launcher(name: &str) -> Pod {
    member(
        name,
        json!({"spec": {"containers": [{
            "name": "main", "image": "busybox", "resources": {"requests": {"cpu": "4"}}
        }]}}),
    )
}

fn build(pods: &[Pod]) -> Result<PodWorkload, PodWorkloadError> {
    workload_for_pods(pods, &PriorityLookup::new())
}

#[test]
fn a_single_pod_becomes_a_workload_of_one_owned_by_the_pod() {
    let single = pod("web", json!({}));
    let built = build(std::slice::from_ref(&single)).unwrap();
    let wl = built.workload;
    let name = wl.metadata.name.clone().unwrap();
    assert!(name.starts_with("pod-web-"), "{name}");
    assert_eq!(name.len(), "pod-web-".len() + 5);
    assert_eq!(wl.spec.pod_sets.len(), 1);
    assert_eq!(wl.spec.pod_sets[0].name, DEFAULT_POD_SET_NAME);
    assert_eq!(wl.spec.pod_sets[0].count, 1);
    assert_eq!(
        wl.spec.pod_sets[0]
            .topology_request
            .as_ref()
            .and_then(|r| r.pod_index_label.as_deref()),
        Some(labels::POD_GROUP_POD_INDEX)
    );
    assert_eq!(wl.spec.queue_name.as_deref(), Some("user-queue"));
    let owner = &wl.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!((owner.kind.as_str(), owner.name.as_str()), ("Pod", "web"));
    assert_eq!(owner.controller, Some(true));
    assert_eq!(
        wl.metadata.labels.as_ref().unwrap()[labels::JOB_UID],
        "uid-web"
    );
    assert!(built.excess.is_empty());
    // The name is Kueue's: it depends on the pod's UID.
    let mut recreated = single;
    recreated.metadata.uid = Some("uid-other".to_owned());
    let other = build(&[recreated]).unwrap().workload.metadata.name;
    assert_ne!(other, Some(name));
}

#[test]
fn a_complete_group_becomes_one_workload_with_a_pod_set_per_role() {
    let pods = [worker("w1"), launcher("l"), worker("w2")];
    let wl = build(&pods).unwrap().workload;
    assert_eq!(wl.metadata.name.as_deref(), Some("training"));
    assert_eq!(
        wl.metadata.annotations.as_ref().unwrap()[annotations::IS_GROUP_WORKLOAD],
        "true"
    );
    assert_eq!(wl.metadata.owner_references, None);
    let mut expected = vec![(role_hash(&pods[0]), 2), (role_hash(&pods[1]), 1)];
    expected.sort();
    let sets: Vec<(String, i32)> = wl
        .spec
        .pod_sets
        .iter()
        .map(|ps| (ps.name.clone(), ps.count))
        .collect();
    assert_eq!(sets, expected);
}

#[test]
fn an_incomplete_group_waits_unless_admitted_fast() {
    let pods = [worker("w1"), worker("w2")];
    assert_eq!(
        build(&pods).unwrap_err(),
        PodWorkloadError::FewerRunnablePods {
            group: "training".to_owned()
        }
    );
    assert_eq!(
        build(&pods).unwrap_err().to_string(),
        "'training' group has fewer runnable pods than expected"
    );
    // A failed pod does not count.
    let failed = member("w3", json!({"status": {"phase": "Failed"}}));
    assert!(build(&[worker("w1"), worker("w2"), failed]).is_err());

    let fast = |name: &str| {
        member(
            name,
            json!({"metadata": {"annotations": {(annotations::POD_GROUP_FAST_ADMISSION): "true"}}}),
        )
    };
    let wl = build(&[fast("w1")]).unwrap().workload;
    assert_eq!(wl.spec.pod_sets.len(), 1);
    assert_eq!(wl.spec.pod_sets[0].count, 3);
}

#[test]
fn surplus_pods_are_named_for_deletion_newest_first() {
    let aged = |name: &str, created: &str| {
        member(name, json!({"metadata": {"creationTimestamp": created}}))
    };
    let pods = [
        aged("new", "2026-01-01T00:10:00Z"),
        aged("a", "2026-01-01T00:00:00Z"),
        aged("b", "2026-01-01T00:01:00Z"),
        aged("c", "2026-01-01T00:02:00Z"),
    ];
    let built = build(&pods).unwrap();
    assert_eq!(built.excess, vec!["new".to_owned()]);
    assert_eq!(built.workload.spec.pod_sets[0].count, 3);
}

#[test]
fn group_members_must_agree_on_queue_and_total_count() {
    let other_queue = member(
        "w3",
        json!({"metadata": {"labels": {(labels::QUEUE_NAME): "other"}}}),
    );
    assert_eq!(
        build(&[worker("w1"), worker("w2"), other_queue])
            .unwrap_err()
            .to_string(),
        "pods 'w1' and 'w3' has different queue names: user-queue!=other"
    );
    let other_count = member(
        "w3",
        json!({"metadata": {"annotations": {(annotations::POD_GROUP_TOTAL_COUNT): "4"}}}),
    );
    assert_eq!(
        build(&[worker("w1"), worker("w2"), other_count])
            .unwrap_err()
            .to_string(),
        "pods 'w1' and 'w3' has different 'kueue.x-k8s.io/pod-group-total-count' values: 3!=4"
    );
    assert!(matches!(
        build(&[worker("w1"), pod("single", json!({}))]),
        Err(PodWorkloadError::MixedGroups { .. })
    ));
}

fn gated(pod: Pod, gates: &[&str]) -> Pod {
    let mut pod = pod;
    pod.spec.as_mut().unwrap().scheduling_gates = Some(
        gates
            .iter()
            .map(|g| k8s_openapi::api::core::v1::PodSchedulingGate {
                name: (*g).to_owned(),
            })
            .collect(),
    );
    pod
}

fn info(name: &str, topology: bool) -> PodSetInfo {
    PodSetInfo {
        name: name.to_owned(),
        count: 1,
        node_selector: BTreeMap::from([("pool".to_owned(), name.to_owned())]),
        scheduling_gates: if topology {
            vec![scheduling_gates::TOPOLOGY.to_owned()]
        } else {
            Vec::new()
        },
        ..PodSetInfo::default()
    }
}

fn gate_list(pod: &Pod) -> Vec<String> {
    gate_names(pod.spec.as_ref().unwrap())
}

#[test]
fn starting_ungates_each_pod_with_its_role_s_info() {
    let both = [scheduling_gates::ADMISSION, scheduling_gates::TOPOLOGY];
    let w = gated(worker("w1"), &both);
    let l = gated(launcher("l"), &both);
    let infos = [info(&role_hash(&w), false), info(&role_hash(&l), true)];
    let started = start_pods(&[w.clone(), l.clone()], &infos).unwrap();
    assert_eq!(started.len(), 2);
    // Not placed by topology: both gates go. Placed by topology: the ungater lifts the rest.
    assert_eq!(gate_list(&started[0]), Vec::<String>::new());
    assert_eq!(
        gate_list(&started[1]),
        vec![scheduling_gates::TOPOLOGY.to_owned()]
    );
    assert_eq!(
        started[1]
            .spec
            .as_ref()
            .unwrap()
            .node_selector
            .as_ref()
            .unwrap()["pool"],
        role_hash(&l)
    );
    // Started pods are not started again.
    assert!(start_pods(&started, &infos).unwrap().is_empty());
}

#[test]
fn a_single_pod_takes_the_only_info_and_a_missing_role_is_an_error() {
    let single = gated(pod("web", json!({})), &[scheduling_gates::ADMISSION]);
    let started = start_pods(std::slice::from_ref(&single), &[info("main", false)]).unwrap();
    assert_eq!(gate_list(&started[0]), Vec::<String>::new());
    assert!(start_pods(&[single], &[]).unwrap_err().is_permanent());
    let w = gated(worker("w1"), &[scheduling_gates::ADMISSION]);
    assert!(matches!(
        start_pods(&[w], &[info("other", false)]),
        Err(PodSetInfoError::MissingPodSet { .. })
    ));
}

#[test]
fn a_single_pod_finishes_when_it_terminates() {
    let done = |phase: &str| pod("web", json!({"status": {"phase": phase, "message": "bye"}}));
    assert_eq!(pods_finished(&[done("Running")]), None);
    assert_eq!(
        pods_finished(&[done("Succeeded")]),
        Some((true, "bye".to_owned()))
    );
    assert_eq!(
        pods_finished(&[done("Failed")]),
        Some((false, "bye".to_owned()))
    );
}

#[test]
fn a_group_finishes_when_all_succeeded_or_an_unretriable_group_stopped() {
    let with_phase = |name: &str, phase: &str| member(name, json!({"status": {"phase": phase}}));
    let all = [
        with_phase("a", "Succeeded"),
        with_phase("b", "Succeeded"),
        with_phase("c", "Succeeded"),
    ];
    assert_eq!(
        pods_finished(&all),
        Some((true, "Pods succeeded: 3/3.".to_owned()))
    );
    let partly = [
        with_phase("a", "Succeeded"),
        with_phase("b", "Failed"),
        with_phase("c", "Running"),
    ];
    assert_eq!(pods_finished(&partly), None);
    let unretriable = member(
        "b",
        json!({"metadata": {"annotations": {(annotations::RETRIABLE_IN_GROUP): "false"}},
               "status": {"phase": "Failed"}}),
    );
    let stopped = [
        with_phase("a", "Succeeded"),
        unretriable,
        with_phase("c", "Failed"),
    ];
    assert_eq!(
        pods_finished(&stopped),
        Some((true, "Pods succeeded: 1/3.".to_owned()))
    );
    let serving = member(
        "s",
        json!({"metadata": {"annotations": {(annotations::POD_GROUP_SERVING): "true"}},
               "status": {"phase": "Succeeded"}}),
    );
    assert_eq!(pods_finished(&[serving]), None);
}

#[test]
fn a_group_is_ready_when_its_total_count_of_pods_is() {
    let ready = |name: &str, status: &str| {
        member(
            name,
            json!({"status": {"conditions": [{"type": "Ready", "status": status}]}}),
        )
    };
    assert!(!pods_ready(&[ready("a", "True"), ready("b", "True")]));
    assert!(!pods_ready(&[
        ready("a", "True"),
        ready("b", "True"),
        ready("c", "False")
    ]));
    assert!(pods_ready(&[
        ready("a", "True"),
        ready("b", "True"),
        ready("c", "True")
    ]));
    let single = pod(
        "web",
        json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
    );
    assert!(pods_ready(&[single]));
    assert!(!pods_ready(&[]));
}
