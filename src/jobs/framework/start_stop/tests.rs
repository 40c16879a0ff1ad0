use k8s_openapi::api::core::v1::Toleration;
use serde_json::json;

use super::super::test_kind::{TestSet, test_set};
use super::super::workload::{WorkloadContext, workload_for};
use super::*;
use crate::api::keys::{labels, scheduling_gates};
use crate::jobs::priority::PriorityLookup;

fn flavors() -> BTreeMap<String, FlavorInfo> {
    BTreeMap::from([(
        "gpu".to_owned(),
        FlavorInfo {
            node_labels: BTreeMap::from([("accelerator".to_owned(), "a100".to_owned())]),
            tolerations: vec![Toleration {
                key: Some("gpu".to_owned()),
                operator: Some("Exists".to_owned()),
                ..Toleration::default()
            }],
        },
    )])
}

/// The test set's Workload, admitted with `workers` at `workers_count` pods on a rack.
fn admitted(job: &DynamicObject, workers_count: i32) -> Workload {
    let mut workload = workload_for(
        &TestSet,
        job,
        WorkloadContext {
            priorities: &PriorityLookup::new(),
            label_keys_to_copy: &[],
            referenced: None,
        },
    )
    .unwrap();
    let topology = json!({"levels": ["rack"], "slices": [{"domainCount": 1,
        "valuesPerLevel": [{"universal": "r1"}], "podCounts": {"universal": workers_count}}]});
    workload.status = serde_json::from_value(json!({"admission": {
    "clusterQueue": "cq",
    "podSetAssignments": [
        {"name": "leader", "flavors": {"cpu": "gpu"}, "count": 1},
        {"name": "workers", "flavors": {"cpu": "gpu"}, "count": workers_count,
         "topologyAssignment": topology},
    ]}}))
    .unwrap();
    workload
}

fn template(job: &DynamicObject, index: usize) -> &Value {
    &job.data["spec"]["replicatedJobs"][index]["template"]["spec"]["template"]
}

#[test]
fn start_merges_each_pod_set_info_into_its_template_and_resumes() {
    let job = test_set();
    let workload = admitted(&job, 4);
    let started = start(
        &TestSet,
        &job,
        None,
        &workload,
        &flavors(),
        &FeatureGates::default(),
    )
    .unwrap();

    assert!(!TestSet.is_suspended(&started));
    for index in [0, 1] {
        let t = template(&started, index);
        assert_eq!(t["spec"]["nodeSelector"], json!({"accelerator": "a100"}));
        assert_eq!(t["spec"]["tolerations"][0]["key"], json!("gpu"));
        assert_eq!(t["metadata"]["labels"]["app"], json!("x"));
        assert_eq!(
            t["metadata"]["labels"]["kueue.x-k8s.io/queue-name"],
            Value::Null
        );
        assert_eq!(t["spec"]["containers"][0]["name"], json!("c"));
    }
    assert_eq!(
        template(&started, 1)["metadata"]["labels"][labels::POD_SET],
        json!("workers")
    );
    assert_eq!(
        template(&started, 1)["spec"]["schedulingGates"],
        json!([{"name": scheduling_gates::TOPOLOGY}])
    );
    assert_eq!(
        template(&started, 0)["spec"]["schedulingGates"],
        Value::Null
    );
    // Admitted whole: no resize.
    assert_eq!(
        started.data["spec"]["replicatedJobs"][1]["template"]["spec"]["parallelism"],
        json!(2)
    );
}

#[test]
fn start_resizes_a_partially_admitted_pod_set() {
    let job = test_set();
    let started = start(
        &TestSet,
        &job,
        None,
        &admitted(&job, 2),
        &flavors(),
        &FeatureGates::default(),
    )
    .unwrap();
    // 2 of the 4 pods of two replicated jobs: one pod each.
    assert_eq!(
        started.data["spec"]["replicatedJobs"][1]["template"]["spec"]["parallelism"],
        json!(1)
    );
}

#[test]
fn a_conflicting_node_selector_is_a_permanent_error() {
    let mut job = test_set();
    job.data["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["nodeSelector"] =
        json!({"accelerator": "h100"});
    let workload = admitted(&job, 4);
    let err = start(
        &TestSet,
        &job,
        None,
        &workload,
        &flavors(),
        &FeatureGates::default(),
    )
    .unwrap_err();
    assert!(err.is_permanent());
    assert_eq!(
        err.to_string(),
        "invalid admission check PodSetUpdate: conflict for nodeSelector: conflict for key=accelerator, value1=h100, value2=a100"
    );
}

#[test]
fn a_missing_pod_set_is_a_permanent_error() {
    let job = test_set();
    let mut workload = admitted(&job, 4);
    let assignments = &mut workload
        .status
        .as_mut()
        .unwrap()
        .admission
        .as_mut()
        .unwrap()
        .pod_set_assignments;
    assignments.pop();
    let err = start(
        &TestSet,
        &job,
        None,
        &workload,
        &flavors(),
        &FeatureGates::default(),
    )
    .unwrap_err();
    assert!(err.is_permanent());
    assert_eq!(
        err.to_string(),
        "invalid podset infos: expecting 2 podset, got 1"
    );
}

#[test]
fn stop_suspends_and_restores_what_start_added() {
    let job = test_set();
    let workload = admitted(&job, 2);
    let started = start(
        &TestSet,
        &job,
        None,
        &workload,
        &flavors(),
        &FeatureGates::default(),
    )
    .unwrap();
    let stopped = stop(&TestSet, &started, &workload).unwrap().unwrap();
    assert!(TestSet.is_suspended(&stopped));
    assert_eq!(stopped.data, job.data);
}

#[test]
fn stop_changes_nothing_on_a_suspended_job_as_its_workload_holds_it() {
    let job = test_set();
    let workload = admitted(&job, 4);
    assert_eq!(stop(&TestSet, &job, &workload).unwrap(), None);
}
