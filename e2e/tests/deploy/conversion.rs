//! Kueue's `v1beta1` API through the installed chart: a `v1beta1` manifest of each kind is
//! accepted, reads back as written in `v1beta1`, and reads as the expected `v1beta2` object, the
//! API server calling kuota's conversion webhook through the release's Service.

use anyhow::{Context, Result, ensure};
use kube::api::{ApiResource, DeleteParams, DynamicObject, GroupVersionKind, PostParams};
use kube::{Api, Client};
use serde_json::{Value, json};

use super::release::Release;
use crate::support::{TestNamespace, unique_name};

/// One kind's manifest in `v1beta1` and the fields it must show in `v1beta2`.
struct Case {
    kind: &'static str,
    plural: &'static str,
    name: String,
    namespaced: bool,
    v1beta1: Value,
    v1beta2: Value,
}

fn api(client: &Client, case: &Case, version: &str, namespace: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("kueue.x-k8s.io", version, case.kind);
    let resource = ApiResource::from_gvk_with_plural(&gvk, case.plural);
    if case.namespaced {
        Api::namespaced_with(client.clone(), namespace, &resource)
    } else {
        Api::all_with(client.clone(), &resource)
    }
}

/// Whether `actual` holds every field of `expected` with the same value (the API server and the
/// webhooks add defaults).
fn holds(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|got| holds(got, v))),
        (Value::Array(a), Value::Array(e)) => {
            a.len() == e.len() && a.iter().zip(e).all(|(got, v)| holds(got, v))
        }
        _ => actual == expected,
    }
}

/// The body of a case's object in one version: everything but `metadata` and `status`.
fn body(object: &DynamicObject) -> Value {
    let mut data = object.data.clone();
    if let Some(map) = data.as_object_mut() {
        map.remove("status");
    }
    data
}

fn cases(namespace: &str) -> Vec<Case> {
    let n = |prefix: &str| unique_name(prefix);
    let (flavor, check, cohort, queue, class) = (
        n("conv-rf"),
        n("conv-ac"),
        n("conv-co"),
        n("conv-cq"),
        n("conv-wpc"),
    );
    let pod_sets = json!([{ "name": "main", "count": 1, "template": { "spec": {
        "restartPolicy": "Never",
        "containers": [{ "name": "c", "image": "busybox", "resources": { "requests": { "cpu": "1" } } }],
    } } }]);
    vec![
        Case {
            kind: "ResourceFlavor",
            plural: "resourceflavors",
            name: flavor.clone(),
            namespaced: false,
            v1beta1: json!({ "spec": { "nodeLabels": { "conversion": "v1beta1" } } }),
            v1beta2: json!({ "spec": { "nodeLabels": { "conversion": "v1beta1" } } }),
        },
        Case {
            kind: "Topology",
            plural: "topologies",
            name: n("conv-topo"),
            namespaced: false,
            v1beta1: json!({ "spec": { "levels": [{ "nodeLabel": "kubernetes.io/hostname" }] } }),
            v1beta2: json!({ "spec": { "levels": [{ "nodeLabel": "kubernetes.io/hostname" }] } }),
        },
        Case {
            kind: "WorkloadPriorityClass",
            plural: "workloadpriorityclasses",
            name: class.clone(),
            namespaced: false,
            v1beta1: json!({ "value": 5, "description": "converted" }),
            v1beta2: json!({ "value": 5, "description": "converted" }),
        },
        Case {
            kind: "ProvisioningRequestConfig",
            plural: "provisioningrequestconfigs",
            name: n("conv-prc"),
            namespaced: false,
            v1beta1: json!({ "spec": { "provisioningClassName": "check-capacity.autoscaling.x-k8s.io" } }),
            v1beta2: json!({ "spec": { "provisioningClassName": "check-capacity.autoscaling.x-k8s.io" } }),
        },
        Case {
            kind: "AdmissionCheck",
            plural: "admissionchecks",
            name: check.clone(),
            namespaced: false,
            v1beta1: json!({ "spec": { "controllerName": "example.com/conversion", "retryDelayMinutes": 7 } }),
            v1beta2: json!({ "spec": { "controllerName": "example.com/conversion" } }),
        },
        Case {
            kind: "Cohort",
            plural: "cohorts",
            name: cohort.clone(),
            namespaced: false,
            v1beta1: json!({ "spec": { "fairSharing": { "weight": "2" } } }),
            v1beta2: json!({ "spec": { "fairSharing": { "weight": "2" } } }),
        },
        Case {
            kind: "ClusterQueue",
            plural: "clusterqueues",
            name: queue.clone(),
            namespaced: false,
            v1beta1: json!({ "spec": {
                "cohort": cohort,
                "admissionChecks": [check],
                "flavorFungibility": { "whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt" },
                "namespaceSelector": {},
                "resourceGroups": [{ "coveredResources": ["cpu"], "flavors": [
                    { "name": flavor, "resources": [{ "name": "cpu", "nominalQuota": "4" }] },
                ] }],
            } }),
            v1beta2: json!({ "spec": {
                "cohortName": cohort,
                "admissionChecksStrategy": { "admissionChecks": [{ "name": check }] },
                "flavorFungibility": { "whenCanBorrow": "MayStopSearch", "whenCanPreempt": "MayStopSearch" },
            } }),
        },
        Case {
            kind: "LocalQueue",
            plural: "localqueues",
            name: n("conv-lq"),
            namespaced: true,
            v1beta1: json!({ "spec": { "clusterQueue": queue } }),
            v1beta2: json!({ "spec": { "clusterQueue": queue } }),
        },
        Case {
            kind: "Workload",
            plural: "workloads",
            name: n("conv-wl"),
            namespaced: true,
            v1beta1: json!({ "spec": {
                "queueName": "absent-queue",
                "priority": 5,
                "priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass",
                "priorityClassName": class,
                "podSets": pod_sets,
            } }),
            v1beta2: json!({ "spec": {
                "queueName": "absent-queue",
                "priority": 5,
                "priorityClassRef": { "group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": class },
                "podSets": pod_sets,
            } }),
        },
    ]
    .into_iter()
    .map(|mut case| {
        let mut metadata = json!({ "name": case.name });
        if case.namespaced {
            metadata["namespace"] = json!(namespace);
        }
        if let Some(map) = case.v1beta1.as_object_mut() {
            map.insert("apiVersion".into(), json!("kueue.x-k8s.io/v1beta1"));
            map.insert("kind".into(), json!(case.kind));
            map.insert("metadata".into(), metadata);
        }
        case
    })
    .collect()
}

pub async fn v1beta1_objects_read_back_in_both_versions(
    client: &Client,
    release: &Release,
) -> Result<()> {
    let ns = TestNamespace::create(client, "deploy-v1beta1").await?;
    let cases = cases(&ns.name);
    let checked = check_all(client, &ns.name, &cases, release).await;
    for case in cases.iter().rev() {
        let _ = api(client, case, "v1beta2", &ns.name)
            .delete(&case.name, &DeleteParams::default())
            .await;
    }
    checked?;
    ns.delete().await
}

async fn check_all(
    client: &Client,
    namespace: &str,
    cases: &[Case],
    release: &Release,
) -> Result<()> {
    for case in cases {
        let manifest: DynamicObject =
            serde_json::from_value(case.v1beta1.clone()).context("build a v1beta1 object")?;
        let v1beta1 = api(client, case, "v1beta1", namespace);
        v1beta1
            .create(&PostParams::default(), &manifest)
            .await
            .with_context(|| {
                format!(
                    "create {} {} as v1beta1\nkuota log:\n{}",
                    case.kind,
                    case.name,
                    release.log_tail()
                )
            })?;
        let read = v1beta1
            .get(&case.name)
            .await
            .with_context(|| format!("read {} {} as v1beta1", case.kind, case.name))?;
        let mut written = case.v1beta1.clone();
        if let Some(map) = written.as_object_mut() {
            for envelope in ["apiVersion", "kind", "metadata"] {
                map.remove(envelope);
            }
        }
        ensure!(
            holds(&body(&read), &written),
            "{} {} reads back in v1beta1 as {}, not as written {}",
            case.kind,
            case.name,
            body(&read),
            written
        );
        let stored = api(client, case, "v1beta2", namespace)
            .get(&case.name)
            .await
            .with_context(|| format!("read {} {} as v1beta2", case.kind, case.name))?;
        ensure!(
            holds(&body(&stored), &case.v1beta2),
            "{} {} reads in v1beta2 as {}, expected {}",
            case.kind,
            case.name,
            body(&stored),
            case.v1beta2
        );
    }
    Ok(())
}
