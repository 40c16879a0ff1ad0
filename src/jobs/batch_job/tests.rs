use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use serde::Deserialize;
use serde_json::{Value, json};

use super::*;
use crate::api::keys::annotations::{
    PODSET_PREFERRED_TOPOLOGY, PODSET_REQUIRED_TOPOLOGY, PODSET_SLICE_SIZE,
};
use crate::api::keys::finalizers;
use crate::api::workload::{PriorityClassGroup, PriorityClassKind, PriorityClassRef};

const UID: &str = "6f1c2d4e-0000-4000-8000-000000000001";
const RACK: &str = "cloud.provider.com/topology-rack";

/// A minimal managed Job; `patch` is merged over it (objects merge, other values replace).
fn job(patch: Value) -> Job {
    let mut base = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "sample",
            "namespace": "team-a",
            "uid": UID,
            "labels": {labels::QUEUE_NAME: "user-queue"}
        },
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"name": "main", "image": "busybox"}],
                    "restartPolicy": "Never"
                }
            }
        }
    });
    merge(&mut base, patch);
    serde_json::from_value(base).unwrap()
}

fn merge(base: &mut Value, patch: Value) {
    match (base, patch) {
        (Value::Object(base), Value::Object(patch)) => {
            for (key, value) in patch {
                merge(base.entry(key).or_insert(Value::Null), value);
            }
        }
        (base, patch) => *base = patch,
    }
}

fn build(job: &Job) -> Result<Workload, JobError> {
    workload_for_job(job, &PriorityLookup::new())
}

fn main_pod_set(workload: &Workload) -> &PodSet {
    assert_eq!(workload.spec.pod_sets.len(), 1);
    &workload.spec.pod_sets[0]
}

/// The Job document of examples/tas.yaml, given the name and UID the API server would assign.
fn tas_example_job() -> Job {
    let text = include_str!("../../../examples/tas.yaml");
    let mut job: Job = yaml_serde::Deserializer::from_str(text)
        .map(|document| Value::deserialize(document).unwrap())
        .find(|document| document["kind"] == "Job")
        .map(|document| serde_json::from_value(document).unwrap())
        .unwrap();
    job.metadata.name = Some("tas-sample".to_owned());
    job.metadata.uid = Some(UID.to_owned());
    job
}

#[test]
fn tas_example_job_requires_one_rack() {
    let workload = build(&tas_example_job()).unwrap();
    assert_eq!(
        workload.metadata.name.as_deref(),
        Some("job-tas-sample-4d96c")
    );
    assert_eq!(workload.metadata.namespace.as_deref(), Some("default"));
    assert_eq!(workload.spec.queue_name.as_deref(), Some("tas-user-queue"));
    let pod_set = main_pod_set(&workload);
    assert_eq!(pod_set.name, "main");
    assert_eq!(pod_set.count, 4);
    assert_eq!(pod_set.min_count, None);
    let request = pod_set.topology_request.as_ref().unwrap();
    assert_eq!(request.required.as_deref(), Some(RACK));
    assert_eq!(request.preferred, None);
    assert_eq!(
        request.pod_index_label.as_deref(),
        Some(labels::JOB_COMPLETION_INDEX)
    );
    let container = &pod_set.template.spec.as_ref().unwrap().containers[0];
    assert_eq!(container.name, "dummy-job");
}

#[test]
fn workload_carries_owner_label_finalizer_and_defaults() {
    let workload = build(&job(json!({}))).unwrap();
    let meta = &workload.metadata;
    assert_eq!(
        meta.labels
            .as_ref()
            .unwrap()
            .get(labels::JOB_UID)
            .map(String::as_str),
        Some(UID)
    );
    assert_eq!(
        meta.owner_references,
        Some(vec![OwnerReference {
            api_version: "batch/v1".to_owned(),
            kind: "Job".to_owned(),
            name: "sample".to_owned(),
            uid: UID.to_owned(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }])
    );
    assert_eq!(
        meta.finalizers,
        Some(vec![finalizers::RESOURCE_IN_USE.to_owned()])
    );
    assert_eq!(workload.spec.active, Some(true));
    assert_eq!(workload.spec.maximum_execution_time_seconds, None);
    assert_eq!(main_pod_set(&workload).count, 1);
}

#[test]
fn workload_name_hashes_kind_group_name_and_uid() {
    let first = build(&job(json!({}))).unwrap();
    let name = first.metadata.name.unwrap();
    assert!(name.starts_with("job-sample-"), "{name}");
    assert_eq!(name.len(), "job-sample-".len() + 5);
    assert!(
        name["job-sample-".len()..]
            .bytes()
            .all(|b| b.is_ascii_hexdigit())
    );
    let recreated = build(&job(json!({"metadata": {"uid": "another-uid"}}))).unwrap();
    assert_ne!(recreated.metadata.name.unwrap(), name);
}

#[test]
fn long_job_names_are_cut_to_247_characters_before_the_hash() {
    let long = "a".repeat(300);
    let workload = build(&job(json!({"metadata": {"name": long, "uid": "uid-1"}}))).unwrap();
    let name = workload.metadata.name.unwrap();
    assert_eq!(name.len(), 253);
    assert_eq!(&name[..247], format!("job-{}", "a".repeat(243)));
    assert_eq!(&name[247..], "-1e11d");
}

#[test]
fn job_without_queue_name_gets_a_workload_naming_no_queue() {
    for labels in [json!(null), json!({labels::QUEUE_NAME: ""})] {
        let workload = build(&job(json!({"metadata": {"labels": labels}}))).unwrap();
        assert_eq!(workload.spec.queue_name, None);
    }
}

#[test]
fn invalid_queue_name_is_rejected() {
    let err = build(&job(
        json!({"metadata": {"labels": {labels::QUEUE_NAME: "User Queue"}}}),
    ))
    .unwrap_err();
    assert!(
        matches!(&err, JobError::InvalidLabel { key, value, .. }
            if *key == labels::QUEUE_NAME && value == "User Queue"),
        "{err}"
    );
}

#[test]
fn job_without_name_uid_or_namespace_is_rejected() {
    let err = build(&job(
        json!({"metadata": {"name": null, "generateName": "tas-sample-"}}),
    ))
    .unwrap_err();
    assert_eq!(
        err,
        JobError::MissingName {
            namespace: "team-a".to_owned(),
            generate_name: "tas-sample-".to_owned()
        }
    );
    let err = build(&job(json!({"metadata": {"uid": null}}))).unwrap_err();
    assert_eq!(
        err,
        JobError::MissingUid {
            job: "team-a/sample".to_owned()
        }
    );
    let err = build(&job(json!({"metadata": {"namespace": ""}}))).unwrap_err();
    assert_eq!(
        err,
        JobError::MissingNamespace {
            name: "sample".to_owned()
        }
    );
}

#[test]
fn count_is_parallelism_capped_by_completions() {
    for (parallelism, completions, want) in [
        (json!(null), json!(null), 1),
        (json!(4), json!(null), 4),
        (json!(4), json!(6), 4),
        (json!(6), json!(4), 4),
        (json!(null), json!(3), 1),
        (json!(0), json!(3), 0),
    ] {
        let job = job(json!({"spec": {"parallelism": parallelism, "completions": completions}}));
        assert_eq!(
            main_pod_set(&build(&job).unwrap()).count,
            want,
            "{parallelism} {completions}"
        );
    }
}

#[test]
fn negative_counts_are_rejected() {
    let err = build(&job(json!({"spec": {"parallelism": -1}}))).unwrap_err();
    assert_eq!(
        err,
        JobError::NegativeCount {
            job: "team-a/sample".to_owned(),
            field: "spec.parallelism",
            value: -1
        }
    );
    let err = build(&job(json!({"spec": {"completions": -2}}))).unwrap_err();
    assert!(matches!(
        err,
        JobError::NegativeCount {
            field: "spec.completions",
            ..
        }
    ));
}

fn with_min_parallelism(value: &str) -> Job {
    job(json!({
        "metadata": {"annotations": {annotations::JOB_MIN_PARALLELISM: value}},
        "spec": {"parallelism": 4, "completions": 6}
    }))
}

#[test]
fn min_parallelism_becomes_min_count() {
    for (value, want) in [("1", 1), ("3", 3), ("+2", 2)] {
        let workload = build(&with_min_parallelism(value)).unwrap();
        assert_eq!(main_pod_set(&workload).min_count, Some(want), "{value}");
    }
}

#[test]
fn min_parallelism_must_be_between_one_and_below_count() {
    for value in ["0", "-1", "4", "5", "99999999999"] {
        let err = build(&with_min_parallelism(value)).unwrap_err();
        assert!(
            matches!(&err, JobError::InvalidAnnotation { key, value: got, reason, .. }
                if *key == annotations::JOB_MIN_PARALLELISM && got == value && reason.contains("pod count 4")),
            "{value}: {err}"
        );
    }
}

#[test]
fn min_parallelism_must_be_an_integer() {
    let err = build(&with_min_parallelism("NaN")).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "Job team-a/sample: annotation {}=\"NaN\": not an integer",
            annotations::JOB_MIN_PARALLELISM
        )
    );
}

#[test]
fn max_exec_time_label_is_copied() {
    let job = job(json!({"metadata": {"labels": {labels::MAX_EXEC_TIME_SECONDS: "3600"}}}));
    assert_eq!(
        build(&job).unwrap().spec.maximum_execution_time_seconds,
        Some(3600)
    );
}

#[test]
fn max_exec_time_must_be_a_positive_integer() {
    for value in ["0", "-5", "1h", "", "2147483648"] {
        let job = job(json!({"metadata": {"labels": {labels::MAX_EXEC_TIME_SECONDS: value}}}));
        let err = build(&job).unwrap_err();
        assert!(
            matches!(&err, JobError::InvalidLabel { key, value: got, .. }
                if *key == labels::MAX_EXEC_TIME_SECONDS && got == value),
            "{value:?}: {err}"
        );
    }
}

#[test]
fn template_loses_controller_and_admission_labels_only() {
    let job = job(json!({"spec": {"template": {"metadata": {"labels": {
        labels::BATCH_JOB_NAME: "sample",
        labels::BATCH_CONTROLLER_UID: UID,
        labels::LEGACY_JOB_NAME: "sample",
        labels::LEGACY_CONTROLLER_UID: UID,
        labels::POD_SET: "main",
        labels::LOCAL_QUEUE_NAME: "user-queue",
        labels::CLUSTER_QUEUE_NAME: "cq",
        "app": "trainer"
    }}}}}));
    let workload = build(&job).unwrap();
    let template_labels = main_pod_set(&workload)
        .template
        .metadata
        .as_ref()
        .unwrap()
        .labels
        .as_ref()
        .unwrap();
    assert_eq!(
        template_labels,
        &BTreeMap::from([("app".to_owned(), "trainer".to_owned())])
    );
}

#[test]
fn topology_errors_name_the_job_and_annotation() {
    let job = job(json!({"spec": {
        "parallelism": 2,
        "template": {"metadata": {"annotations": {PODSET_SLICE_SIZE: "1"}}}
    }}));
    let err = build(&job).unwrap_err();
    assert!(
        matches!(&err, JobError::Topology { job, problem: TopologyAnnotationError::MissingPartner { .. } } if job == "team-a/sample")
    );
    let message = err.to_string();
    assert!(
        message.starts_with("Job team-a/sample: pod template annotation "),
        "{message}"
    );
    assert!(message.contains(PODSET_SLICE_SIZE), "{message}");
}

#[test]
fn slice_size_is_checked_against_the_job_pod_count() {
    let job = job(json!({"spec": {
        "parallelism": 4,
        "completions": 2,
        "template": {"metadata": {"annotations": {
            PODSET_REQUIRED_TOPOLOGY: RACK,
            annotations::PODSET_SLICE_REQUIRED_TOPOLOGY: "kubernetes.io/hostname",
            PODSET_SLICE_SIZE: "3"
        }}}
    }}));
    let err = build(&job).unwrap_err();
    assert!(matches!(
        err,
        JobError::Topology {
            problem: TopologyAnnotationError::SliceLargerThanPodSet {
                size: 3,
                count: 2,
                ..
            },
            ..
        }
    ));
}

#[test]
fn several_level_annotations_keep_the_strongest() {
    let job = job(json!({"spec": {"template": {"metadata": {"annotations": {
        PODSET_PREFERRED_TOPOLOGY: "cloud.provider.com/topology-block",
        PODSET_REQUIRED_TOPOLOGY: RACK
    }}}}}));
    let workload = build(&job).unwrap();
    let request = main_pod_set(&workload).topology_request.as_ref().unwrap();
    assert_eq!(
        (request.required.as_deref(), request.preferred.as_deref()),
        (Some(RACK), None)
    );
}

fn priorities() -> PriorityLookup {
    let mut lookup = PriorityLookup::new();
    lookup.add_workload_priority_class("urgent", 10_000);
    lookup.add_priority_class("batch-high", 500, false);
    lookup.add_priority_class("standard", 100, true);
    lookup
}

fn with_priority(labels_patch: Value, priority_class_name: Value) -> Job {
    job(json!({
        "metadata": {"labels": labels_patch},
        "spec": {"template": {"spec": {"priorityClassName": priority_class_name}}}
    }))
}

#[test]
fn workload_priority_class_label_wins() {
    let job = with_priority(
        json!({labels::PRIORITY_CLASS: "urgent"}),
        json!("batch-high"),
    );
    let spec = workload_for_job(&job, &priorities()).unwrap().spec;
    assert_eq!(
        spec.priority_class_ref,
        Some(Box::new(PriorityClassRef {
            group: PriorityClassGroup::Kueue,
            kind: PriorityClassKind::WorkloadPriorityClass,
            name: "urgent".to_owned()
        }))
    );
    assert_eq!(spec.priority, Some(10_000));
}

#[test]
fn missing_workload_priority_class_is_an_error_not_a_fallback() {
    let job = with_priority(json!({labels::PRIORITY_CLASS: "gone"}), json!("batch-high"));
    let err = workload_for_job(&job, &priorities()).unwrap_err();
    assert_eq!(
        err,
        JobError::WorkloadPriorityClassNotFound {
            job: "team-a/sample".to_owned(),
            name: "gone".to_owned()
        }
    );
    assert!(err.to_string().contains(labels::PRIORITY_CLASS), "{err}");
}

#[test]
fn pod_priority_class_comes_next() {
    let job = with_priority(json!({}), json!("batch-high"));
    let spec = workload_for_job(&job, &priorities()).unwrap().spec;
    assert_eq!(
        spec.priority_class_ref,
        Some(Box::new(PriorityClassRef {
            group: PriorityClassGroup::Scheduling,
            kind: PriorityClassKind::PriorityClass,
            name: "batch-high".to_owned()
        }))
    );
    assert_eq!(spec.priority, Some(500));
}

#[test]
fn missing_pod_priority_class_is_an_error() {
    let job = with_priority(json!({}), json!("gone"));
    let err = workload_for_job(&job, &priorities()).unwrap_err();
    assert_eq!(
        err,
        JobError::PriorityClassNotFound {
            job: "team-a/sample".to_owned(),
            name: "gone".to_owned()
        }
    );
    assert!(
        err.to_string()
            .contains("spec.template.spec.priorityClassName"),
        "{err}"
    );
}

#[test]
fn global_default_priority_class_applies_last() {
    let spec = workload_for_job(&job(json!({})), &priorities())
        .unwrap()
        .spec;
    assert_eq!(
        spec.priority_class_ref.map(|r| r.name),
        Some("standard".to_owned())
    );
    assert_eq!(spec.priority, Some(100));
}

#[test]
fn no_class_at_all_gives_priority_zero_without_a_reference() {
    let spec = build(&job(json!({}))).unwrap().spec;
    assert_eq!(spec.priority_class_ref, None);
    assert_eq!(spec.priority, Some(0));
}

#[test]
fn a_variable_listed_twice_is_written_once_with_its_last_value_and_the_job_keeps_both() {
    let env = json!([
        {"name": "TEST_ENV", "value": "test1"},
        {"name": "OTHER", "value": "kept"},
        {"name": "TEST_ENV", "value": "test2"}
    ]);
    let twice = job(json!({"spec": {"template": {"spec": {
        "initContainers": [{"name": "init", "image": "busybox", "env": env}],
        "containers": [{"name": "main", "image": "busybox", "env": env}]
    }}}}));
    let workload = build(&twice).unwrap();
    let spec = main_pod_set(&workload).template.spec.clone().unwrap();
    let once: Vec<k8s_openapi::api::core::v1::EnvVar> = serde_json::from_value(json!([
        {"name": "TEST_ENV", "value": "test2"},
        {"name": "OTHER", "value": "kept"}
    ]))
    .unwrap();
    assert_eq!(spec.containers[0].env.as_ref(), Some(&once));
    assert_eq!(spec.init_containers.unwrap()[0].env.as_ref(), Some(&once));
    let kept = twice.spec.unwrap().template.spec.unwrap().containers[0]
        .env
        .clone()
        .unwrap();
    assert_eq!(kept.len(), 3);
}
