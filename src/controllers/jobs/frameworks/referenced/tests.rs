use serde_json::json;

use super::*;
use crate::jobs::kinds::{JOBSET, TRAINJOB};

fn runtime(namespace: Option<&str>, name: &str) -> DynamicObject {
    let mut metadata = json!({"name": name});
    if let Some(namespace) = namespace {
        metadata["namespace"] = json!(namespace);
    }
    serde_json::from_value(json!({"apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainingRuntime", "metadata": metadata, "spec": {}}))
    .expect("a runtime")
}

fn train_job(runtime_ref: serde_json::Value) -> DynamicObject {
    serde_json::from_value(json!({"apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob", "metadata": {"name": "t", "namespace": "ml"},
        "spec": {"runtimeRef": runtime_ref}}))
    .expect("a TrainJob")
}

#[test]
fn a_kind_without_references_is_listed_at_once() {
    assert!(ReferencedObjects::new(&JOBSET).listed());
}

#[test]
fn a_trainjob_finds_its_namespaced_or_cluster_runtime_once_listed() {
    let mut objects = ReferencedObjects::new(&TRAINJOB);
    assert!(!objects.listed());
    let namespaced = train_job(json!({"name": "torch", "kind": "TrainingRuntime"}));
    let cluster = train_job(json!({"name": "torch"}));
    let namespaced_ref = TRAINJOB.reference(&namespaced).unwrap().unwrap();
    let cluster_ref = TRAINJOB.reference(&cluster).unwrap().unwrap();

    let listed = objects.take(0, Change::Reset(vec![runtime(Some("ml"), "torch")]));
    assert_eq!(listed, Concerns::All);
    assert!(!objects.listed(), "the cluster runtimes are not listed yet");
    objects.take(1, Change::Reset(Vec::new()));
    assert!(objects.listed());
    assert!(objects.get(&TRAINJOB, &namespaced_ref).is_some());
    assert!(objects.get(&TRAINJOB, &cluster_ref).is_none());

    let applied = objects.take(1, Change::Apply(Box::new(runtime(None, "torch"))));
    assert_eq!(applied, Concerns::Object(1, ObjectKey::new("", "torch")));
    assert_eq!(
        key_of(&TRAINJOB, &cluster_ref),
        Some((1, ObjectKey::new("", "torch")))
    );
    assert!(objects.get(&TRAINJOB, &cluster_ref).is_some());

    objects.take(0, Change::Delete(Box::new(runtime(Some("ml"), "torch"))));
    assert!(objects.get(&TRAINJOB, &namespaced_ref).is_none());
    assert!(objects.get(&TRAINJOB, &cluster_ref).is_some());
}
