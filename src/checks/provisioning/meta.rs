//! What every object made for a Workload carries: Kueue's managed label, and the Workload as
//! its controlling owner.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::ResourceExt;

use crate::api::Workload;
use crate::api::keys::{API_VERSION, labels};

/// The Workload as the controlling owner of what is made for it, so the garbage collector
/// deletes it with the Workload.
pub fn owner_reference(workload: &Workload) -> OwnerReference {
    OwnerReference {
        api_version: API_VERSION.to_owned(),
        kind: "Workload".to_owned(),
        name: workload.name_any(),
        uid: workload.uid().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// `kueue.x-k8s.io/managed: "true"`, on every request and PodTemplate.
pub fn managed_labels() -> BTreeMap<String, String> {
    BTreeMap::from([(labels::MANAGED.to_owned(), labels::MANAGED_VALUE.to_owned())])
}
