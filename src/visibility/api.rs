//! What the visibility API answers, in Kueue's wire form: a `PendingWorkloadsSummary`, or a
//! `Status` saying why not.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Status, StatusDetails, Time};
use serde::Serialize;

use super::GROUP;
use super::request::Queue;

/// One waiting Workload (Kueue's `PendingWorkload`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingWorkload {
    pub metadata: PendingMeta,
    pub priority: i32,
    pub local_queue_name: String,
    pub position_in_cluster_queue: i32,
    pub position_in_local_queue: i32,
}

/// The Workload's identity, as Kueue copies it: name, namespace, creation time, and each owner's
/// apiVersion, kind, name and uid.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingMeta {
    pub name: String,
    pub namespace: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<Time>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub owner_references: Vec<OwnerReference>,
}

impl PendingMeta {
    pub fn new(
        name: &str,
        namespace: &str,
        creation_timestamp: Option<Time>,
        owners: &[OwnerReference],
    ) -> Self {
        PendingMeta {
            name: name.to_string(),
            namespace: namespace.to_string(),
            creation_timestamp,
            owner_references: owners
                .iter()
                .map(|o| OwnerReference {
                    api_version: o.api_version.clone(),
                    kind: o.kind.clone(),
                    name: o.name.clone(),
                    uid: o.uid.clone(),
                    ..Default::default()
                })
                .collect(),
        }
    }
}

/// The answer to a `pendingworkloads` call.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingWorkloadsSummary {
    pub api_version: String,
    pub kind: &'static str,
    pub metadata: serde_json::Map<String, serde_json::Value>,
    pub items: Vec<PendingWorkload>,
}

impl PendingWorkloadsSummary {
    pub fn new(version: &str, items: Vec<PendingWorkload>) -> Self {
        PendingWorkloadsSummary {
            api_version: format!("{GROUP}/{version}"),
            kind: "PendingWorkloadsSummary",
            metadata: serde_json::Map::new(),
            items,
        }
    }
}

/// A place counted from 0, as the API's int32 holds it.
pub fn position(place: usize) -> i32 {
    i32::try_from(place).unwrap_or(i32::MAX)
}

/// A failure as the Kubernetes API reports one.
pub fn status(code: u16, reason: &str, message: String, details: Option<StatusDetails>) -> Status {
    Status {
        code: Some(i32::from(code)),
        details,
        message: Some(message),
        reason: Some(reason.to_string()),
        status: Some("Failure".to_string()),
        ..Default::default()
    }
}

/// The `NotFound` Status for a queue the engine does not know, as Kueue words it
/// (`clusterqueue.visibility.kueue.x-k8s.io "name" not found`).
pub fn queue_not_found(queue: &Queue) -> Status {
    let (resource, name) = match queue {
        Queue::Cluster(name) => ("clusterqueue", name.as_str()),
        Queue::Local(key) => ("localqueue", key.name.as_str()),
    };
    status(
        404,
        "NotFound",
        format!("{resource}.{GROUP} \"{name}\" not found"),
        Some(StatusDetails {
            group: Some(GROUP.to_string()),
            kind: Some(resource.to_string()),
            name: Some(name.to_string()),
            ..Default::default()
        }),
    )
}
