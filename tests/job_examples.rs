//! The Job and pod-group examples in `examples/jobs/` are what kuota's integrations accept: each
//! Job becomes the Workload its annotations ask for, at a level of the example Topology; the
//! pod group passes the Pod webhook's rules and becomes one Workload of all its pods.

use std::fs;
use std::path::{Path, PathBuf};

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kuota::api::Topology;
use kuota::jobs::{PriorityLookup, validate_pod, workload_for_job, workload_for_pods};
use serde::de::DeserializeOwned;
use serde_json::Value;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/jobs")
}

fn documents(file: &Path) -> Vec<Value> {
    let text = fs::read_to_string(file).unwrap();
    assert!(
        text.starts_with('#'),
        "{} opens with a header comment",
        file.display()
    );
    yaml_serde::Deserializer::from_str(&text)
        .map(|doc| {
            let yaml = <yaml_serde::Value as serde::Deserialize>::deserialize(doc).unwrap();
            serde_json::to_value(yaml).unwrap()
        })
        .filter(|v| !v.is_null())
        .collect()
}

/// The documents of `file`, as stored by the API server: a UID each.
fn stored<T: DeserializeOwned>(file: &str) -> Vec<T> {
    documents(&dir().join(file))
        .into_iter()
        .enumerate()
        .map(|(i, mut doc)| {
            doc["metadata"]["uid"] =
                Value::String(format!("00000000-0000-4000-8000-00000000000{i}"));
            serde_json::from_value(doc).unwrap()
        })
        .collect()
}

fn topology_levels() -> Vec<String> {
    let topologies: Vec<Topology> = documents(&dir().join("queues.yaml"))
        .into_iter()
        .filter(|d| d["kind"] == "Topology")
        .map(|d| serde_json::from_value(d).unwrap())
        .collect();
    assert_eq!(topologies.len(), 1, "queues.yaml holds one Topology");
    topologies[0]
        .spec
        .levels
        .iter()
        .map(|l| l.node_label.clone())
        .collect()
}

/// (file, pods, required level, preferred level)
const JOBS: [(&str, i32, Option<&str>, Option<&str>); 3] = [
    (
        "required-rack.yaml",
        4,
        Some("cloud.provider.com/topology-rack"),
        None,
    ),
    (
        "preferred-block.yaml",
        6,
        None,
        Some("cloud.provider.com/topology-block"),
    ),
    (
        "indexed.yaml",
        4,
        Some("cloud.provider.com/topology-rack"),
        None,
    ),
];

#[test]
fn every_example_job_becomes_the_workload_its_annotations_ask_for() {
    let levels = topology_levels();
    for (file, count, required, preferred) in JOBS {
        let [job]: [Job; 1] = stored(file).try_into().unwrap();
        let workload = workload_for_job(&job, &PriorityLookup::new())
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(
            workload.spec.queue_name.as_deref(),
            Some("jobs-queue"),
            "{file}"
        );
        let [pod_set] = workload.spec.pod_sets.as_slice() else {
            panic!("{file}: a Job has one pod set");
        };
        assert_eq!(pod_set.count, count, "{file}");
        let request = pod_set.topology_request.clone().unwrap_or_default();
        assert_eq!(request.required.as_deref(), required, "{file}");
        assert_eq!(request.preferred.as_deref(), preferred, "{file}");
        assert_eq!(
            request.pod_index_label.as_deref(),
            Some("batch.kubernetes.io/job-completion-index"),
            "{file}"
        );
        for level in required.iter().chain(preferred.iter()) {
            assert!(
                levels.iter().any(|l| l == level),
                "{file}: {level} is not a level of {levels:?}"
            );
        }
    }
}

#[test]
fn the_example_pod_group_is_one_workload_of_all_its_pods() {
    let pods: Vec<Pod> = stored("pod-group.yaml");
    assert_eq!(pods.len(), 3);
    for pod in &pods {
        let errors = validate_pod(pod);
        assert!(errors.is_empty(), "{:?}: {errors:?}", pod.metadata.name);
    }
    let group = workload_for_pods(&pods, &PriorityLookup::new()).unwrap();
    assert_eq!(group.workload.metadata.name.as_deref(), Some("trainers"));
    assert!(group.excess.is_empty());
    let total: i32 = group.workload.spec.pod_sets.iter().map(|p| p.count).sum();
    assert_eq!(total, 3);
}
