use super::*;
use crate::cli::simulate::documents::parse_text;

fn decode(text: &str) -> Result<Objects, DecodeError> {
    decode_all(parse_text("input.yaml", text).unwrap())
}

const CQ: &str = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n\
    spec:\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: default\n      \
    resources:\n      - {name: cpu, nominalQuota: 4}\n";

#[test]
fn reads_bare_numbers_as_quantities() {
    let objects = decode(CQ).unwrap();
    let cq = &objects.cluster_queues[0].object;
    assert_eq!(
        cq.spec.resource_groups[0].flavors[0].resources[0]
            .nominal_quota
            .0,
        "4"
    );
}

#[test]
fn names_file_document_object_and_unknown_field() {
    let text = format!(
        "{CQ}---\n{}",
        CQ.replace("nominalQuota: 4", "nominalQuota: 4, lendingLimt: 1")
    );
    let message = decode(&text).unwrap_err().to_string();
    assert_eq!(
        message,
        "input.yaml, document 2: ClusterQueue cq: field \
         spec.resourceGroups[0].flavors[0].resources[0].lendingLimt: unknown field"
    );
}

#[test]
fn names_a_field_with_a_wrong_value() {
    let text = CQ.replace("spec:\n", "spec:\n  queueingStrategy: Sometimes\n");
    let message = decode(&text).unwrap_err().to_string();
    assert!(
        message
            .starts_with("input.yaml, document 1: ClusterQueue cq: field spec.queueingStrategy: "),
        "{message}"
    );
}

#[test]
fn rejects_unsupported_kinds_and_missing_names() {
    let unsupported =
        decode("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: n}\n");
    assert!(
        unsupported
            .unwrap_err()
            .to_string()
            .contains("Deployment n/d: kind Deployment of apps/v1 is not supported")
    );
    let unnamed = decode("apiVersion: v1\nkind: Namespace\nmetadata: {}\n").unwrap_err();
    assert_eq!(
        unnamed.to_string(),
        "input.yaml, document 1: Namespace: field metadata.name: required"
    );
    let scalar = decode("just a string\n").unwrap_err();
    assert!(matches!(scalar.problem, Problem::NotAnObject));
}

#[test]
fn names_objects_from_generate_name_in_order() {
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata: {namespace: n, generateName: sample-}\nspec:\n  template: {spec: {containers: []}}\n";
    let objects = decode(&format!("{job}---\n{job}")).unwrap();
    let names: Vec<_> = objects
        .jobs
        .iter()
        .map(|j| j.object.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(names, ["sample-00001", "sample-00002"]);
}

#[test]
fn namespaced_objects_default_to_the_default_namespace() {
    let text = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q}\nspec: {clusterQueue: cq}\n";
    let objects = decode(text).unwrap();
    assert_eq!(
        objects.local_queues[0].object.metadata.namespace.as_deref(),
        Some("default")
    );
    let objects = decode(CQ).unwrap();
    assert_eq!(objects.cluster_queues[0].object.metadata.namespace, None);
}

#[test]
fn sorts_objects_by_kind() {
    let text = format!("{CQ}---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: team-a}}\n");
    let objects = decode(&text).unwrap();
    assert_eq!(
        (objects.cluster_queues.len(), objects.namespaces.len()),
        (1, 1)
    );
}
