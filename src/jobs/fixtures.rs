//! Objects the job-integration tests start from, written as the API server would return them;
//! each test merges what it needs over them.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

use super::{FlavorInfo, JobScope, OwnerKind};
use crate::api::Workload;

pub(crate) const JOB_UID: &str = "6f1c2d4e-0000-4000-8000-000000000001";
pub(crate) const WORKLOAD_NAME: &str = "job-sample-0a1b2";
pub(crate) const CLUSTER_QUEUE: &str = "cluster-queue";

/// Kueue's shipped scope for a manager in `kueue-system`: every namespace but `kube-system` and
/// `kueue-system`, with `parent` the one job kind an enabled integration manages.
pub(crate) fn default_scope(manage_without_queue_name: bool, parent: OwnerKind) -> JobScope {
    JobScope {
        manage_without_queue_name,
        namespace_selector: LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "kubernetes.io/metadata.name".into(),
                operator: "NotIn".into(),
                values: Some(vec!["kube-system".into(), "kueue-system".into()]),
            }]),
            match_labels: None,
        },
        parent_kinds: [parent].into_iter().collect(),
    }
}

/// The flavor the sample Workload is admitted to: `on-demand`, nodes labelled
/// `instance-type: on-demand`.
pub(crate) fn flavors() -> BTreeMap<String, FlavorInfo> {
    BTreeMap::from([(
        "on-demand".to_owned(),
        FlavorInfo {
            node_labels: BTreeMap::from([("instance-type".to_owned(), "on-demand".to_owned())]),
            tolerations: Vec::new(),
        },
    )])
}

/// Merges `patch` into `base`: objects merge key by key, `null` removes, other values replace.
pub(crate) fn merge(base: &mut Value, patch: Value) {
    match (base, patch) {
        (Value::Object(base), Value::Object(patch)) => {
            for (key, value) in patch {
                if value.is_null() {
                    base.remove(&key);
                } else {
                    merge(base.entry(key).or_insert(Value::Null), value);
                }
            }
        }
        (base, patch) => *base = patch,
    }
}

fn build<T: serde::de::DeserializeOwned>(mut base: Value, patch: Value) -> T {
    merge(&mut base, patch);
    serde_json::from_value(base).expect("fixture is a valid object")
}

/// The template of the sample Job's pods.
pub(crate) fn template() -> Value {
    json!({
        "metadata": {"labels": {"app": "sample"}},
        "spec": {
            "containers": [{
                "name": "main",
                "image": "busybox",
                "resources": {"requests": {"cpu": "1"}}
            }],
            "restartPolicy": "Never"
        }
    })
}

/// A managed, suspended Job of 4 pods; `patch` is merged over it.
pub(crate) fn job(patch: Value) -> Job {
    build(
        json!({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": "sample",
                "namespace": "team-a",
                "uid": JOB_UID,
                "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}
            },
            "spec": {
                "parallelism": 4,
                "completions": 4,
                "suspend": true,
                "template": template()
            }
        }),
        patch,
    )
}

/// A condition of `type_` with `status`, set at `time` (RFC 3339).
pub(crate) fn condition(type_: &str, status: bool, reason: &str, time: &str) -> Value {
    json!({
        "type": type_,
        "status": if status { "True" } else { "False" },
        "reason": reason,
        "message": "",
        "lastTransitionTime": time
    })
}

/// The sample Job's Workload, admitted to [`CLUSTER_QUEUE`] with flavor `on-demand` for cpu;
/// `patch` is merged over it.
pub(crate) fn workload(patch: Value) -> Workload {
    build(
        json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "Workload",
            "metadata": {
                "name": WORKLOAD_NAME,
                "namespace": "team-a",
                "ownerReferences": [{
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": "sample",
                    "uid": JOB_UID,
                    "controller": true,
                    "blockOwnerDeletion": true
                }]
            },
            "spec": {
                "queueName": "user-queue",
                "podSets": [{
                    "name": "main",
                    "count": 4,
                    "template": template(),
                    "topologyRequest": {
                        "podIndexLabel": "batch.kubernetes.io/job-completion-index"
                    }
                }]
            },
            "status": {
                "admission": {
                    "clusterQueue": CLUSTER_QUEUE,
                    "podSetAssignments": [{
                        "name": "main",
                        "flavors": {"cpu": "on-demand"},
                        "resourceUsage": {"cpu": "4"},
                        "count": 4
                    }]
                },
                "conditions": [
                    condition("QuotaReserved", true, "QuotaReserved", "2026-01-01T00:00:00Z"),
                    condition("Admitted", true, "Admitted", "2026-01-01T00:00:00Z")
                ]
            }
        }),
        patch,
    )
}

/// A pending pod named `name` in the sample namespace; `patch` is merged over it.
pub(crate) fn pod(name: &str, patch: Value) -> Pod {
    build(
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": "team-a",
                "uid": format!("uid-{name}"),
                "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}
            },
            "spec": {
                "containers": [{
                    "name": "main",
                    "image": "busybox",
                    "resources": {"requests": {"cpu": "1"}}
                }]
            },
            "status": {"phase": "Pending"}
        }),
        patch,
    )
}
