//! Every document of every file in `examples/` parses into its type and writes back without
//! losing or changing a field.
//!
//! The types themselves ignore unknown fields (objects read from a cluster may come from a newer
//! Kueue); strictness lives here: the re-serialized JSON must equal the original document.

use std::fs;
use std::path::PathBuf;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{LimitRange, Namespace};
use k8s_openapi::api::node::v1::RuntimeClass;
use kuota::api::{
    AdmissionCheck, ClusterQueue, Cohort, LocalQueue, ResourceFlavor, Topology, Workload,
    WorkloadPriorityClass,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn round_trip<T: DeserializeOwned + Serialize>(original: &Value) -> Result<Value, String> {
    let typed: T = serde_json::from_value(original.clone()).map_err(|e| e.to_string())?;
    let back = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
    let yaml = yaml_serde::to_string(&typed).map_err(|e| e.to_string())?;
    let reparsed: T = yaml_serde::from_str(&yaml).map_err(|e| e.to_string())?;
    let again = serde_json::to_value(&reparsed).map_err(|e| e.to_string())?;
    if again != back {
        return Err("YAML write-back changed the object".to_owned());
    }
    Ok(back)
}

/// Parses one document as the type its `apiVersion`/`kind` names and returns it re-serialized.
fn parse_document(doc: &Value) -> Result<Value, String> {
    let api_version = doc
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let kind = doc.get("kind").and_then(Value::as_str).unwrap_or_default();
    match (api_version, kind) {
        ("kueue.x-k8s.io/v1beta2", "ClusterQueue") => round_trip::<ClusterQueue>(doc),
        ("kueue.x-k8s.io/v1beta2", "LocalQueue") => round_trip::<LocalQueue>(doc),
        ("kueue.x-k8s.io/v1beta2", "Cohort") => round_trip::<Cohort>(doc),
        ("kueue.x-k8s.io/v1beta2", "ResourceFlavor") => round_trip::<ResourceFlavor>(doc),
        ("kueue.x-k8s.io/v1beta2", "Topology") => round_trip::<Topology>(doc),
        ("kueue.x-k8s.io/v1beta2", "Workload") => round_trip::<Workload>(doc),
        ("kueue.x-k8s.io/v1beta2", "WorkloadPriorityClass") => {
            round_trip::<WorkloadPriorityClass>(doc)
        }
        ("kueue.x-k8s.io/v1beta2", "AdmissionCheck") => round_trip::<AdmissionCheck>(doc),
        ("v1", "Namespace") => round_trip::<Namespace>(doc),
        ("batch/v1", "Job") => round_trip::<Job>(doc),
        ("v1", "LimitRange") => round_trip::<LimitRange>(doc),
        ("node.k8s.io/v1", "RuntimeClass") => round_trip::<RuntimeClass>(doc),
        _ => Err(format!("no type for {api_version} {kind}")),
    }
}

/// Lists the paths where two JSON values differ, to say exactly which field was lost.
fn differences(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for key in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                let (l, r) = (
                    x.get(key).unwrap_or(&Value::Null),
                    y.get(key).unwrap_or(&Value::Null),
                );
                differences(&format!("{path}.{key}"), l, r, out);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (l, r)) in x.iter().zip(y).enumerate() {
                differences(&format!("{path}[{i}]"), l, r, out);
            }
        }
        _ if a != b => out.push(format!("{path}: {a} became {b}")),
        _ => {}
    }
}

fn example_files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

fn documents(file: &PathBuf) -> Vec<Value> {
    let text = fs::read_to_string(file).unwrap();
    assert!(
        text.starts_with('#'),
        "{} must open with a header comment",
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

#[test]
fn every_example_round_trips_without_losing_a_field() {
    let files = example_files();
    assert!(
        files.len() >= 4,
        "expected the example manifests, found {files:?}"
    );
    let mut failures = Vec::new();
    for file in &files {
        for (index, doc) in documents(file).iter().enumerate() {
            let at = format!("{} document {index}", file.display());
            match parse_document(doc) {
                Err(why) => failures.push(format!("{at}: {why}")),
                Ok(back) => {
                    let mut diff = Vec::new();
                    differences("", doc, &back, &mut diff);
                    failures.extend(diff.into_iter().map(|d| format!("{at}: {d}")));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn examples_cover_every_kind() {
    let kinds: Vec<String> = example_files()
        .iter()
        .flat_map(documents)
        .filter_map(|d| d.get("kind").and_then(Value::as_str).map(str::to_owned))
        .collect();
    for kind in [
        "ClusterQueue",
        "LocalQueue",
        "Cohort",
        "ResourceFlavor",
        "Topology",
        "WorkloadPriorityClass",
        "AdmissionCheck",
        "Job",
    ] {
        assert!(kinds.iter().any(|k| k == kind), "no example of {kind}");
    }
}

#[test]
fn tas_job_asks_for_a_rack() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/tas.yaml");
    let job: Job = documents(&file)
        .into_iter()
        .find(|d| d["kind"] == "Job")
        .map(|d| serde_json::from_value(d).unwrap())
        .unwrap();
    let annotations = job
        .spec
        .unwrap()
        .template
        .metadata
        .unwrap()
        .annotations
        .unwrap();
    assert_eq!(
        annotations[kuota::api::keys::annotations::PODSET_REQUIRED_TOPOLOGY],
        "cloud.provider.com/topology-rack"
    );
    assert_eq!(
        job.metadata.labels.unwrap()[kuota::api::keys::labels::QUEUE_NAME],
        "tas-user-queue"
    );
}

#[test]
fn a_lost_field_is_reported() {
    let doc = serde_json::json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "q", "namespace": "n"},
        "spec": {"clusterQueue": "cq", "notAField": true}
    });
    let back = parse_document(&doc).unwrap();
    let mut diff = Vec::new();
    differences("", &doc, &back, &mut diff);
    assert_eq!(diff, [".spec.notAField: true became null"]);
}

#[test]
fn a_resource_flavor_without_spec_is_accepted() {
    let doc = serde_json::json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "default-flavor"}
    });
    let flavor: ResourceFlavor = serde_json::from_value(doc).unwrap();
    assert_eq!(flavor.spec, kuota::api::ResourceFlavorSpec::default());
    let cq: ClusterQueue = serde_json::from_value(serde_json::json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": null
    }))
    .unwrap();
    assert!(cq.spec.resource_groups.is_empty());
}
