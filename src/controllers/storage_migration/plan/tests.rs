use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::{Value, json};

use super::*;

fn service() -> ConversionService {
    ConversionService {
        name: "kuota-webhook-service".into(),
        namespace: "kuota-system".into(),
    }
}

/// A CRD of `kind` in `group` storing `storage`, with `stored` in its status and `conversion`
/// as its `spec.conversion` (`Value::Null`: none).
fn crd(
    group: &str,
    kind: &str,
    storage: &str,
    stored: &[&str],
    conversion: Value,
) -> CustomResourceDefinition {
    let plural = format!("{}s", kind.to_lowercase());
    let mut spec = json!({
        "group": group,
        "names": { "kind": kind, "plural": plural },
        "scope": "Cluster",
        "versions": [
            { "name": "v1beta1", "served": true, "storage": storage == "v1beta1" },
            { "name": "v1beta2", "served": true, "storage": storage == "v1beta2" },
        ],
    });
    if !conversion.is_null() {
        spec["conversion"] = conversion;
    }
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": { "name": format!("{plural}.{group}"), "resourceVersion": "42" },
        "spec": spec,
        "status": { "storedVersions": stored },
    }))
    .expect("a valid CRD")
}

fn webhook(name: &str, namespace: &str, bundle: &str) -> Value {
    json!({
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {
                "service": { "name": name, "namespace": namespace, "path": "/convert", "port": 443 },
                "caBundle": bundle,
            },
        },
    })
}

fn ours() -> Value {
    webhook("kuota-webhook-service", "kuota-system", "Y2E=")
}

#[test]
fn only_v1beta2_stored_is_current() {
    let flavor = crd(
        GROUP,
        "ResourceFlavor",
        "v1beta2",
        &["v1beta2"],
        Value::Null,
    );
    assert_eq!(verdict(&flavor, Some(&service())), Verdict::Current);
}

#[test]
fn a_kind_without_webhook_conversion_migrates_whatever_the_conversion() {
    let flavor = crd(
        GROUP,
        "ResourceFlavor",
        "v1beta2",
        &["v1beta1", "v1beta2"],
        Value::Null,
    );
    assert_eq!(
        verdict(&flavor, None),
        Verdict::Migrate(Target {
            kind: Kind::ResourceFlavor,
            crd: "resourceflavors.kueue.x-k8s.io".into(),
            crd_version: "42".into(),
            stale: vec!["v1beta1".into()],
        })
    );
}

#[test]
fn a_webhook_converted_kind_migrates_once_the_crd_calls_this_release() {
    let queue = crd(
        GROUP,
        "ClusterQueue",
        "v1beta2",
        &["v1beta1", "v1beta2"],
        ours(),
    );
    assert!(matches!(
        verdict(&queue, Some(&service())),
        Verdict::Migrate(Target {
            kind: Kind::ClusterQueue,
            ..
        })
    ));
}

#[test]
fn a_webhook_converted_kind_waits_while_another_webhook_or_none_converts_it() {
    let awaiting = |conversion: Value, service: Option<&ConversionService>| {
        let workload = crd(
            GROUP,
            "Workload",
            "v1beta2",
            &["v1beta1", "v1beta2"],
            conversion,
        );
        assert_eq!(
            verdict(&workload, service),
            Verdict::AwaitingConversion {
                crd: "workloads.kueue.x-k8s.io".into()
            }
        );
    };
    // Kueue's own webhook, still named by the CRD after Kueue was stopped.
    awaiting(
        webhook("kueue-webhook-service", "kueue-system", "Y2E="),
        Some(&service()),
    );
    // kuota's CRDs applied, the webhook not written in yet: `None` drops v1beta2-only fields.
    awaiting(Value::Null, Some(&service()));
    awaiting(json!({ "strategy": "None" }), Some(&service()));
    // Pointed at this release, but with no CA to trust it by.
    awaiting(
        webhook("kuota-webhook-service", "kuota-system", ""),
        Some(&service()),
    );
    // This process serves no conversion.
    awaiting(ours(), None);
}

#[test]
fn a_crd_storing_v1beta1_is_not_migrated() {
    let queue = crd(
        GROUP,
        "ClusterQueue",
        "v1beta1",
        &["v1beta1", "v1beta2"],
        ours(),
    );
    assert_eq!(
        verdict(&queue, Some(&service())),
        Verdict::StoresOther {
            crd: "clusterqueues.kueue.x-k8s.io".into(),
            storage: "v1beta1".into()
        }
    );
}

#[test]
fn kinds_kuota_does_not_serve_are_left_alone() {
    let multikueue = crd(
        GROUP,
        "MultiKueueCluster",
        "v1beta1",
        &["v1beta1"],
        Value::Null,
    );
    assert_eq!(verdict(&multikueue, Some(&service())), Verdict::NotServed);
    let other = crd(
        "example.com",
        "Workload",
        "v1beta2",
        &["v1beta1", "v1beta2"],
        ours(),
    );
    assert_eq!(verdict(&other, Some(&service())), Verdict::NotServed);
}

#[test]
fn the_restore_write_changes_nothing_but_is_fenced() {
    assert_eq!(
        restore_patch("17"),
        json!({ "metadata": { "resourceVersion": "17" } })
    );
}

#[test]
fn answers_to_a_restore() {
    assert_eq!(restored(200), Some(Restored::Written));
    assert_eq!(restored(409), Some(Restored::ChangedMeanwhile));
    assert_eq!(restored(404), Some(Restored::Gone));
    assert_eq!(restored(403), None);
    assert_eq!(restored(422), None);
    assert_eq!(restored(500), None);
}

#[test]
fn the_final_write_keeps_only_v1beta2_fenced_on_the_crd_read() {
    let flavor = crd(
        GROUP,
        "ResourceFlavor",
        "v1beta2",
        &["v1beta1", "v1beta2"],
        Value::Null,
    );
    let Verdict::Migrate(target) = verdict(&flavor, None) else {
        panic!("a ResourceFlavor CRD listing v1beta1 migrates");
    };
    assert_eq!(
        stored_versions_patch(&target),
        json!({
            "metadata": { "resourceVersion": "42" },
            "status": { "storedVersions": ["v1beta2"] },
        })
    );
}
