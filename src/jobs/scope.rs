//! Which jobs Kueue's integrations take over: a job that names a queue, or, with
//! `manageJobsWithoutQueueName`, any job in a namespace `managedJobsNamespaceSelector` selects;
//! never one whose controlling owner is a kind an enabled integration manages (that parent is
//! managed instead). In a selected namespace holding a LocalQueue named `default`, a job naming
//! no queue is sent to it.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use crate::api::keys::labels;
use crate::api::label_selector;

/// An owner reference's `apiVersion` and `kind`, e.g. `batch/v1` and `Job`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OwnerKind {
    pub api_version: String,
    pub kind: String,
}

impl OwnerKind {
    /// The kind of `group`/`version` (the core group is empty, its apiVersion just `v1`).
    pub fn new(group: &str, version: &str, kind: &str) -> Self {
        let api_version = if group.is_empty() {
            version.to_owned()
        } else {
            format!("{group}/{version}")
        };
        OwnerKind {
            api_version,
            kind: kind.to_owned(),
        }
    }
}

/// What decides whether a job is managed, from Kueue's configuration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobScope {
    /// `manageJobsWithoutQueueName`.
    pub manage_without_queue_name: bool,
    /// `managedJobsNamespaceSelector`, resolved (Kueue's default leaves out `kube-system` and
    /// its own namespace); the default here, empty, selects every namespace.
    pub namespace_selector: LabelSelector,
    /// The job kinds an enabled integration manages (listed frameworks other than `pod`, and
    /// `externalFrameworks`): an object whose controlling owner is one of them is that parent's.
    pub parent_kinds: BTreeSet<OwnerKind>,
}

impl JobScope {
    /// Kueue's `FindAncestorJobManagedByKueue`, read from the object alone: its controlling
    /// owner is a kind an enabled integration manages.
    pub fn has_managed_parent(&self, meta: &ObjectMeta) -> bool {
        meta.owner_references
            .iter()
            .flatten()
            .filter(|owner| owner.controller == Some(true))
            .any(|owner| {
                self.parent_kinds.contains(&OwnerKind {
                    api_version: owner.api_version.clone(),
                    kind: owner.kind.clone(),
                })
            })
    }

    /// Whether `managedJobsNamespaceSelector` selects a namespace with these labels.
    pub fn selects_namespace(&self, namespace_labels: &BTreeMap<String, String>) -> bool {
        label_selector::matches(&self.namespace_selector, namespace_labels)
    }

    /// Kueue's `WorkloadShouldBeSuspended` and the Job reconciler's first checks: a top-level
    /// job (a Job, or a Deployment whose pods kuota admits) with this metadata is managed when it names a queue, or when `manageJobsWithoutQueueName` is on and its
    /// namespace (with these labels) is selected.
    pub fn manages(&self, meta: &ObjectMeta, namespace_labels: &BTreeMap<String, String>) -> bool {
        if self.has_managed_parent(meta) {
            return false;
        }
        queue_name(meta).is_some()
            || (self.manage_without_queue_name && self.selects_namespace(namespace_labels))
    }

    /// Kueue's `ApplyDefaultLocalQueue`: a job naming no queue, without a managed parent, in a
    /// selected namespace that holds a LocalQueue named `default`, is labelled with it.
    pub fn takes_default_queue(
        &self,
        meta: &ObjectMeta,
        namespace_labels: &BTreeMap<String, String>,
        default_queue_exists: bool,
    ) -> bool {
        default_queue_exists
            && queue_name(meta).is_none()
            && !self.has_managed_parent(meta)
            && self.selects_namespace(namespace_labels)
    }
}

/// The queue a job names in its metadata; an empty label counts as none, as in Kueue.
pub fn queue_name(meta: &ObjectMeta) -> Option<&str> {
    meta.labels
        .as_ref()?
        .get(labels::QUEUE_NAME)
        .map(String::as_str)
        .filter(|q| !q.is_empty())
}

#[cfg(test)]
mod tests;
