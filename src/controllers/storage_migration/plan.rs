//! The rules of the storage-version migration, as pure functions of a CRD and of the API
//! server's answers: which of kuota's CRDs still list a version other than `v1beta2` in
//! `status.storedVersions` and may be migrated now, the no-op write that re-stores one object,
//! what its answer means, and the write that ends the migration of a kind.
//!
//! Kueue stored `v1beta1` up to v0.15 and leaves the re-storing to an admin script
//! (hack/migrate-to-v1beta2.sh); kuota, serving the same CRDs with `v1beta2` stored, does it
//! itself once its conversion webhook answers.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::{Value, json};

use crate::v1beta1::{CONVERSION_PATH, GROUP, Kind, Version};

/// The Service a CRD converting through kuota's webhook must call: this release's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversionService {
    pub name: String,
    pub namespace: String,
}

/// What the migration does with one CRD.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Not a kind kuota serves (another group, or a Kueue kind such as MultiKueueCluster).
    NotServed,
    /// `status.storedVersions` lists only `v1beta2`.
    Current,
    /// The CRD stores another version: kuota's CRDs are not applied over Kueue's yet, and
    /// re-storing would write that version again.
    StoresOther { crd: String, storage: String },
    /// The kind converts through kuota's webhook and the CRD does not call it (yet): a rewrite
    /// read through another conversion could lose the fields only `v1beta2` holds.
    AwaitingConversion { crd: String },
    /// Every object of the kind is to be re-stored, then `storedVersions` set to `[v1beta2]`.
    Migrate(Target),
}

/// A CRD to migrate, as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub kind: Kind,
    pub crd: String,
    /// The CRD's `resourceVersion`: the final write is fenced on it, so a CRD changed meanwhile
    /// (its storage version, say) is looked at again before its history is rewritten.
    pub crd_version: String,
    /// The versions besides `v1beta2` that objects may still be stored in.
    pub stale: Vec<String>,
}

/// Decides what to do with `crd`, given the Service kuota's conversion webhook is reached
/// through (`None`: this process serves no conversion, so webhook-converted kinds wait).
pub fn verdict(crd: &CustomResourceDefinition, conversion: Option<&ConversionService>) -> Verdict {
    let name = crd.metadata.name.clone().unwrap_or_default();
    let kind = match Kind::from_name(&crd.spec.names.kind) {
        Some(kind) if crd.spec.group == GROUP => kind,
        _ => return Verdict::NotServed,
    };
    let current = Version::V1beta2.name();
    let storage = crd
        .spec
        .versions
        .iter()
        .find(|v| v.storage)
        .map(|v| v.name.clone())
        .unwrap_or_default();
    if storage != current {
        return Verdict::StoresOther { crd: name, storage };
    }
    let stored = crd
        .status
        .as_ref()
        .and_then(|s| s.stored_versions.clone())
        .unwrap_or_default();
    let stale: Vec<String> = stored.into_iter().filter(|v| v != current).collect();
    if stale.is_empty() {
        return Verdict::Current;
    }
    if kind.converts_by_webhook() && !calls(crd, conversion) {
        return Verdict::AwaitingConversion { crd: name };
    }
    Verdict::Migrate(Target {
        kind,
        crd: name,
        crd_version: crd.metadata.resource_version.clone().unwrap_or_default(),
        stale,
    })
}

/// Whether the CRD converts through `service`'s `/convert` and trusts some CA for it.
fn calls(crd: &CustomResourceDefinition, service: Option<&ConversionService>) -> bool {
    let Some(service) = service else {
        return false;
    };
    let Some(conversion) = crd.spec.conversion.as_ref() else {
        return false;
    };
    let config = conversion
        .webhook
        .as_ref()
        .and_then(|w| w.client_config.as_ref());
    let Some(config) = config.filter(|_| conversion.strategy == "Webhook") else {
        return false;
    };
    let trusted = config.ca_bundle.as_ref().is_some_and(|b| !b.0.is_empty());
    config.service.as_ref().is_some_and(|s| {
        s.name == service.name
            && s.namespace == service.namespace
            && s.path.as_deref() == Some(CONVERSION_PATH)
    }) && trusted
}

/// The write that re-stores one object: a merge patch changing nothing but fenced on the version
/// listed. The API server re-encodes the object in the storage version and writes it when the
/// bytes differ, that is when it was stored in another version.
pub fn restore_patch(resource_version: &str) -> Value {
    json!({ "metadata": { "resourceVersion": resource_version } })
}

/// What the API server's answer to [`restore_patch`] means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restored {
    /// Written (or already stored in `v1beta2`, which the API server leaves as is).
    Written,
    /// Written by someone else since it was listed, so stored in `v1beta2` by that write.
    ChangedMeanwhile,
    /// Deleted since it was listed.
    Gone,
}

/// The meaning of an HTTP status answering [`restore_patch`]; `None` for a failure.
pub fn restored(code: u16) -> Option<Restored> {
    match code {
        200..=299 => Some(Restored::Written),
        409 => Some(Restored::ChangedMeanwhile),
        404 => Some(Restored::Gone),
        _ => None,
    }
}

/// The write that ends a kind's migration once every object was re-stored: `storedVersions`
/// reduced to `v1beta2`, fenced on the CRD as read before the objects were listed.
pub fn stored_versions_patch(target: &Target) -> Value {
    json!({
        "metadata": { "resourceVersion": target.crd_version },
        "status": { "storedVersions": [Version::V1beta2.name()] },
    })
}

#[cfg(test)]
mod tests;
