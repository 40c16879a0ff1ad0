//! Kueue's defaulting webhooks, answered as JSONPatch: ClusterQueues and ResourceFlavors get the
//! `resource-in-use` finalizer, and a Workload loses every `minCount` while gate `PartialAdmission`
//! is off. They act on CREATE only, the operation they are registered for.

use serde::de::DeserializeOwned;
use serde_json::json;

use super::review::{AdmissionRequest, Operation, PatchOp, Verdict};
use super::settings::Webhooks;
use crate::api;
use crate::api::keys::finalizers::RESOURCE_IN_USE;
use crate::engine::features::Feature;

pub fn cluster_queue(request: &AdmissionRequest) -> Verdict {
    on_create(request, finalizer::<api::ClusterQueue>("ClusterQueue"))
}

pub fn resource_flavor(request: &AdmissionRequest) -> Verdict {
    on_create(request, finalizer::<api::ResourceFlavor>("ResourceFlavor"))
}

pub fn workload(webhooks: &Webhooks, request: &AdmissionRequest) -> Verdict {
    on_create(request, |request| min_counts(webhooks, request))
}

fn on_create(
    request: &AdmissionRequest,
    patch: impl FnOnce(&AdmissionRequest) -> Result<Vec<PatchOp>, Verdict>,
) -> Verdict {
    if request.operation != Operation::Create {
        return Verdict::Allow;
    }
    match patch(request) {
        Ok(ops) => Verdict::Patch(ops),
        Err(verdict) => verdict,
    }
}

/// Adds the `resource-in-use` finalizer unless it is there.
fn finalizer<T>(kind: &str) -> impl FnOnce(&AdmissionRequest) -> Result<Vec<PatchOp>, Verdict>
where
    T: DeserializeOwned + kube::Resource,
{
    move |request| {
        let object: T = request.decode(kind, false)?;
        Ok(match &object.meta().finalizers {
            Some(list) if list.iter().any(|f| f == RESOURCE_IN_USE) => Vec::new(),
            Some(_) => vec![PatchOp::add(
                "/metadata/finalizers/-",
                json!(RESOURCE_IN_USE),
            )],
            None => vec![PatchOp::add(
                "/metadata/finalizers",
                json!([RESOURCE_IN_USE]),
            )],
        })
    }
}

/// Drops every pod set's `minCount` while partial admission is off.
fn min_counts(webhooks: &Webhooks, request: &AdmissionRequest) -> Result<Vec<PatchOp>, Verdict> {
    let workload: api::Workload = request.decode("Workload", false)?;
    if webhooks.gates.enabled(Feature::PartialAdmission) {
        return Ok(Vec::new());
    }
    Ok(workload
        .spec
        .pod_sets
        .iter()
        .enumerate()
        .filter(|(_, p)| p.min_count.is_some())
        .map(|(i, _)| PatchOp::remove(format!("/spec/podSets/{i}/minCount")))
        .collect())
}
