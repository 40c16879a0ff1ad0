use serde_json::json;

use super::super::test_kind::{TestSet, test_set};
use super::super::workload::{WorkloadContext, workload_for};
use super::*;
use crate::jobs::priority::PriorityLookup;

fn workload(job: &DynamicObject) -> Workload {
    workload_for(
        &TestSet,
        job,
        WorkloadContext {
            priorities: &PriorityLookup::new(),
            label_keys_to_copy: &[],
            referenced: None,
        },
    )
    .unwrap()
}

fn matches(job: &DynamicObject, workload: &Workload) -> bool {
    in_step(
        &TestSet,
        job,
        None,
        workload,
        &BTreeMap::new(),
        &FeatureGates::default(),
    )
    .unwrap()
}

#[test]
fn a_job_matches_the_workload_built_from_it() {
    let job = test_set();
    assert!(matches(&job, &workload(&job)));
}

#[test]
fn a_changed_count_or_container_is_out_of_step() {
    let job = test_set();
    let built = workload(&job);

    let mut scaled = job.clone();
    scaled.data["spec"]["replicatedJobs"][1]["replicas"] = json!(3);
    assert!(!matches(&scaled, &built));

    let mut new_image = job.clone();
    new_image.data["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"]
        [0]["image"] = json!("l2");
    assert!(!matches(&new_image, &built));

    let mut relabelled = job.clone();
    relabelled.data["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"]["labels"]
        ["app"] = json!("y");
    assert!(
        matches(&relabelled, &built),
        "labels do not decide admission"
    );
}

#[test]
fn a_workload_of_another_owner_is_out_of_step() {
    let job = test_set();
    let mut other = workload(&job);
    other.metadata.owner_references.as_mut().unwrap()[0].name = "other".to_owned();
    assert!(!matches(&job, &other));

    let mut recreated = job.clone();
    recreated.metadata.uid = Some("u-2".to_owned());
    assert!(!matches(&recreated, &workload(&job)));
}
