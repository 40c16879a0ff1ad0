use serde_json::json;

use super::super::test_kind::{TestSet, test_set};
use super::*;
use crate::api::keys::finalizers;

fn ctx<'a>(priorities: &'a PriorityLookup, keys: &'a [String]) -> WorkloadContext<'a> {
    WorkloadContext {
        priorities,
        label_keys_to_copy: keys,
        referenced: None,
    }
}

#[test]
fn builds_one_pod_set_per_replicated_job_owned_by_the_job() {
    let priorities = PriorityLookup::new();
    let workload = workload_for(&TestSet, &test_set(), ctx(&priorities, &[])).unwrap();

    assert_eq!(
        workload.metadata.name.as_deref(),
        Some(owner_workload_name("JobSet", "jobset.x-k8s.io", "js", "u-1").as_str())
    );
    assert_eq!(workload.metadata.namespace.as_deref(), Some("ns"));
    let owner = &workload.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(owner.api_version, "jobset.x-k8s.io/v1alpha2");
    assert_eq!(owner.kind, "JobSet");
    assert_eq!((owner.name.as_str(), owner.uid.as_str()), ("js", "u-1"));
    assert_eq!(owner.controller, Some(true));
    assert_eq!(owner.block_owner_deletion, Some(true));
    assert_eq!(
        workload.metadata.finalizers,
        Some(vec![finalizers::RESOURCE_IN_USE.to_owned()])
    );
    assert_eq!(workload.spec.queue_name.as_deref(), Some("lq"));

    let sets = &workload.spec.pod_sets;
    let shape: Vec<_> = sets
        .iter()
        .map(|p| (p.name.as_str(), p.count, p.min_count))
        .collect();
    assert_eq!(shape, [("leader", 1, None), ("workers", 4, Some(1))]);
    let image = |i: usize| {
        sets[i].template.spec.as_ref().unwrap().containers[0]
            .image
            .clone()
    };
    assert_eq!(image(0).as_deref(), Some("l"));
    assert_eq!(image(1).as_deref(), Some("w"));
    let topology = sets[1].topology_request.as_ref().unwrap();
    assert_eq!(
        topology.pod_index_label.as_deref(),
        Some("batch.kubernetes.io/job-completion-index")
    );
    assert_eq!(
        topology.sub_group_index_label.as_deref(),
        Some("jobset.sigs.k8s.io/job-index")
    );
    assert_eq!(topology.sub_group_count, Some(2));
}

#[test]
fn reads_tas_annotations_of_each_template_and_strips_admission_labels() {
    let mut job = test_set();
    job.data["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["metadata"] = json!({
        "annotations": {"kueue.x-k8s.io/podset-required-topology": "rack"},
        "labels": {"app": "x", labels::POD_SET: "workers", labels::CLUSTER_QUEUE_NAME: "cq"},
    });
    let priorities = PriorityLookup::new();
    let workload = workload_for(&TestSet, &job, ctx(&priorities, &[])).unwrap();
    let workers = &workload.spec.pod_sets[1];
    assert_eq!(
        workers
            .topology_request
            .as_ref()
            .unwrap()
            .required
            .as_deref(),
        Some("rack")
    );
    assert_eq!(
        workers.template.metadata.as_ref().unwrap().labels,
        Some(BTreeMap::from([("app".to_owned(), "x".to_owned())]))
    );
    assert_eq!(
        workload.spec.pod_sets[0]
            .topology_request
            .as_ref()
            .unwrap()
            .required,
        None
    );
}

#[test]
fn priority_from_the_label_else_the_first_template_class_and_copied_labels() {
    let mut priorities = PriorityLookup::new();
    priorities.add_workload_priority_class("high", 1000);
    let mut job = test_set();
    let job_labels = job.metadata.labels.as_mut().unwrap();
    job_labels.insert(labels::PRIORITY_CLASS.to_owned(), "high".to_owned());
    job_labels.insert("team".to_owned(), "a".to_owned());
    let keys = ["team".to_owned(), "absent".to_owned()];
    let workload = workload_for(&TestSet, &job, ctx(&priorities, &keys)).unwrap();
    assert_eq!(workload.spec.priority, Some(1000));
    let workload_labels = workload.metadata.labels.unwrap();
    assert_eq!(workload_labels.get("team").map(String::as_str), Some("a"));
    assert_eq!(
        workload_labels.get(labels::JOB_UID).map(String::as_str),
        Some("u-1")
    );
    assert!(!workload_labels.contains_key("absent"));

    job.metadata
        .labels
        .as_mut()
        .unwrap()
        .remove(labels::PRIORITY_CLASS);
    job.data["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]["priorityClassName"] =
        json!("gpu");
    let err = workload_for(&TestSet, &job, ctx(&priorities, &[])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "JobSet ns/js: priorityClassName=\"gpu\": PriorityClass \"gpu\" does not exist"
    );
}

#[test]
fn errors_name_the_object_and_field() {
    let priorities = PriorityLookup::new();
    let build = |job: &DynamicObject| {
        workload_for(&TestSet, job, ctx(&priorities, &[]))
            .unwrap_err()
            .to_string()
    };

    let mut job = test_set();
    job.metadata.uid = None;
    assert_eq!(
        build(&job),
        "JobSet ns/js: metadata.uid is empty; the API server sets it at creation"
    );

    let mut job = test_set();
    job.metadata
        .labels
        .as_mut()
        .unwrap()
        .insert(labels::QUEUE_NAME.to_owned(), "Bad_Queue".to_owned());
    assert!(build(&job).starts_with("JobSet ns/js: label kueue.x-k8s.io/queue-name=\"Bad_Queue\""));

    let mut job = test_set();
    job.data["spec"]["replicatedJobs"][0]["template"]["spec"] = json!({});
    assert_eq!(
        build(&job),
        "JobSet ns/js: pod set \"leader\": no pod template at /spec/replicatedJobs/0/template/spec/template"
    );

    let mut job = test_set();
    job.data["spec"]["replicatedJobs"][0]["template"]["spec"]["template"] = json!({"spec": 3});
    assert!(build(&job).starts_with(
        "JobSet ns/js: pod set \"leader\": /spec/replicatedJobs/0/template/spec/template is not a pod template:"
    ));

    let mut job = test_set();
    job.data["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"] =
        json!({"annotations": {"kueue.x-k8s.io/podset-required-topology": ""}});
    assert!(build(&job).starts_with("JobSet ns/js: pod set \"leader\": pod template"));

    let mut job = test_set();
    job.metadata
        .labels
        .as_mut()
        .unwrap()
        .insert(labels::PRIORITY_CLASS.to_owned(), "none".to_owned());
    assert!(build(&job).contains("WorkloadPriorityClass \"none\" does not exist"));
}
