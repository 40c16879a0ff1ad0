//! The name and owner metadata of the Workload a job integration creates for its owner object,
//! as Kueue gives them. The syntax of Kubernetes names is [`crate::api::name_syntax`]'s.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use crate::api::keys::{finalizers, labels};

/// Characters of a Workload name kept before the hash: 253 (the longest object name) less `-`
/// and the hash.
const WORKLOAD_NAME_PREFIX_MAX: usize = 247;
/// Hex characters of the Workload name hash.
const WORKLOAD_NAME_HASH_LEN: usize = 5;

/// The name of the Workload of an owner object: `<kind in lower case>-<name>`, cut to fit, then
/// `-` and 5 hex characters of a SHA-1 over kind, group, name and UID (one per line), so that a
/// re-created owner of the same name gets a new Workload. Digest input and layout are Kueue's,
/// so both name the Workload of an owner alike.
/// The owner a Workload is created for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Owner<'a> {
    pub namespace: &'a str,
    pub api_version: &'a str,
    pub kind: &'a str,
    pub name: &'a str,
    pub uid: &'a str,
}

/// `base` with the namespace, the job-uid label, the owner reference that makes the owner the
/// Workload's controller, and the finalizer that keeps the Workload while its quota is in use.
pub(crate) fn owned_workload_metadata(owner: Owner<'_>, base: ObjectMeta) -> ObjectMeta {
    ObjectMeta {
        namespace: Some(owner.namespace.to_owned()),
        labels: Some(BTreeMap::from([(
            labels::JOB_UID.to_owned(),
            owner.uid.to_owned(),
        )])),
        owner_references: Some(vec![OwnerReference {
            api_version: owner.api_version.to_owned(),
            kind: owner.kind.to_owned(),
            name: owner.name.to_owned(),
            uid: owner.uid.to_owned(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }]),
        finalizers: Some(vec![finalizers::RESOURCE_IN_USE.to_owned()]),
        ..base
    }
}

pub(crate) fn owner_workload_name(kind: &str, group: &str, name: &str, uid: &str) -> String {
    let mut prefix = format!("{}-{name}", kind.to_lowercase());
    if prefix.len() > WORKLOAD_NAME_PREFIX_MAX {
        let cut = (0..=WORKLOAD_NAME_PREFIX_MAX)
            .rev()
            .find(|&i| prefix.is_char_boundary(i))
            .unwrap_or(0);
        prefix.truncate(cut);
    }
    let mut digest = sha1_smol::Sha1::new();
    digest.update(format!("{kind}\n{group}\n{name}\n{uid}").as_bytes());
    let hash = digest.digest().to_string();
    format!("{prefix}-{}", &hash[..WORKLOAD_NAME_HASH_LEN])
}
