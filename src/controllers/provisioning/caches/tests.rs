use serde_json::json;

use super::*;
use crate::api::Workload;

fn workload(name: &str, checks: &[&str]) -> SharedWorkload {
    let entries: Vec<_> = checks
        .iter()
        .map(|c| {
            json!({"name": c, "state": "Pending", "message": "",
                        "lastTransitionTime": "2026-03-01T10:00:00Z"})
        })
        .collect();
    Arc::new(
        serde_json::from_value::<Workload>(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": "1"},
            "spec": {"podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": []}}}]},
            "status": {"admissionChecks": entries},
        }))
        .unwrap(),
    )
}

fn check(name: &str, config: &str) -> Arc<AdmissionCheck> {
    Arc::new(
        serde_json::from_value(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck",
            "metadata": {"name": name},
            "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request",
                     "parameters": {"apiGroup": "kueue.x-k8s.io",
                                    "kind": "ProvisioningRequestConfig", "name": config}},
        }))
        .unwrap(),
    )
}

fn config(name: &str) -> Arc<ProvisioningRequestConfig> {
    Arc::new(
        serde_json::from_value(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ProvisioningRequestConfig",
            "metadata": {"name": name}, "spec": {"provisioningClassName": "c"},
        }))
        .unwrap(),
    )
}

fn request(name: &str, owner: &str, version: &str) -> ProvisioningRequest {
    serde_json::from_value(json!({
        "apiVersion": "autoscaling.x-k8s.io/v1", "kind": "ProvisioningRequest",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": version,
                     "ownerReferences": [{"apiVersion": "kueue.x-k8s.io/v1beta2",
                                          "kind": "Workload", "name": owner, "uid": "u"}]},
        "spec": {"podSets": [], "provisioningClassName": "c"},
    }))
    .unwrap()
}

fn dirty_keys(take: impl FnOnce(&mut Dirty<Key>)) -> Dirty<Key> {
    let mut dirty = Dirty::default();
    take(&mut dirty);
    dirty
}

fn workload_key(name: &str) -> Key {
    Key::Workload(ObjectKey::new("ns", name))
}

/// Caches that have listed every kind: two Workloads (one naming check `prov`), check `prov`
/// on config `gpu`.
fn listed() -> Caches {
    let mut caches = Caches::default();
    let mut dirty = Dirty::default();
    caches.take(
        ProvisioningInput::Workload(Change::Reset(vec![
            workload("a", &["prov"]),
            workload("b", &["other"]),
        ])),
        &mut dirty,
    );
    caches.take(
        ProvisioningInput::Check(Change::Reset(vec![check("prov", "gpu")])),
        &mut dirty,
    );
    caches.take(
        ProvisioningInput::Config(Change::Reset(vec![config("gpu")])),
        &mut dirty,
    );
    caches.take(ProvisioningInput::Flavor(Change::Reset(vec![])), &mut dirty);
    assert!(!caches.listed(), "the requests have not listed yet");
    caches.take(
        ProvisioningInput::Request(Change::Reset(vec![])),
        &mut dirty,
    );
    assert!(caches.listed());
    caches
}

#[test]
fn requests_are_found_by_the_workload_owning_them() {
    let mut caches = listed();
    let dirty = dirty_keys(|d| {
        caches.take(
            ProvisioningInput::Request(Change::Apply(Box::new(request("a-prov-1", "a", "5")))),
            d,
        )
    });
    assert!(!dirty.is_empty());
    let names = |caches: &Caches| {
        caches
            .requests_of(&ObjectKey::new("ns", "a"))
            .iter()
            .map(|r| r.name_any())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&caches), ["a-prov-1"]);
    assert!(caches.requests_of(&ObjectKey::new("ns", "b")).is_empty());
    // An answer older than what the watch brought is not taken.
    let mut stale = request("a-prov-1", "a", "4");
    stale.spec.provisioning_class_name = "old".into();
    caches.put_request(stale, &mut Dirty::default());
    assert_eq!(
        caches.requests_of(&ObjectKey::new("ns", "a"))[0]
            .spec
            .provisioning_class_name,
        "c"
    );
    caches.remove_request(&ObjectKey::new("ns", "a-prov-1"), &mut Dirty::default());
    assert!(names(&caches).is_empty());
}

#[test]
fn a_changed_check_or_config_marks_the_workloads_naming_the_check() {
    let mut caches = listed();
    let mut dirty = Dirty::default();
    caches.take(
        ProvisioningInput::Config(Change::Apply(Box::new(config("gpu")))),
        &mut dirty,
    );
    assert_eq!(
        dirty,
        expected(&[Key::Check("prov".into()), workload_key("a")])
    );
    let mut dirty = Dirty::default();
    caches.take(
        ProvisioningInput::Config(Change::Apply(Box::new(config("tpu")))),
        &mut dirty,
    );
    assert!(dirty.is_empty(), "no check names config tpu");
    let mut dirty = Dirty::default();
    caches.take(
        ProvisioningInput::Check(Change::Delete(Box::new(check("prov", "gpu")))),
        &mut dirty,
    );
    assert_eq!(
        dirty,
        expected(&[Key::Check("prov".into()), workload_key("a")])
    );
    assert!(caches.checks.is_empty());
}

fn expected(keys: &[Key]) -> Dirty<Key> {
    let mut dirty = Dirty::default();
    dirty.extend(keys.iter().cloned());
    dirty
}
