use serde_json::json;

use super::*;
use crate::jobs::framework::JobKind;
use crate::jobs::kinds::JOBSET;

fn crd(name: &str, version: &str, established: &str) -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"group": "jobset.x-k8s.io", "scope": "Namespaced",
            "names": {"plural": "jobsets", "kind": "JobSet"},
            "versions": [{"name": version, "served": true, "storage": true}]},
        "status": {"conditions": [{"type": "Established", "status": established}]},
    }))
    .expect("a CRD")
}

#[test]
fn a_kind_starts_only_once_its_crd_serves_kuotas_version_and_is_established() {
    let id = JOBSET.id();
    assert_eq!(crd_name(id), "jobsets.jobset.x-k8s.io");
    assert!(serves(
        &crd("jobsets.jobset.x-k8s.io", "v1alpha2", "True"),
        id
    ));
    assert!(!serves(
        &crd("jobsets.jobset.x-k8s.io", "v1alpha2", "False"),
        id
    ));
    assert!(!serves(
        &crd("jobsets.jobset.x-k8s.io", "v1alpha1", "True"),
        id
    ));
    assert!(!serves(
        &crd("other.jobset.x-k8s.io", "v1alpha2", "True"),
        id
    ));
}
