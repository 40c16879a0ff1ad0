//! Kueue's prebuilt Workloads: a Job labelled `kueue.x-k8s.io/prebuilt-workload-name` runs under
//! the Workload of that name in its namespace, made by someone else, instead of one kuota builds.
//! The Job takes the Workload over (controller owner reference and `job-uid` label); one already
//! controlled by another object is not its own. Without it the Job waits suspended: kuota never
//! builds a Workload for such a Job, and a prebuilt Workload that no longer matches its Job is
//! finished as `OutOfSync`.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use crate::api::Workload;
use crate::api::keys::{annotations, labels};

/// Kueue's `Finished` message for a prebuilt Workload that no longer matches its Job.
pub const OUT_OF_SYNC_MESSAGE: &str = "The prebuilt workload is out of sync with its user job";

/// The prebuilt Workload a Job names, as kuota sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Prebuilt<'a> {
    /// No Workload of that name exists (yet).
    Missing,
    Found(&'a Workload),
}

/// The name of the prebuilt Workload `job` runs under, if it names one: Kueue's
/// `PrebuiltWorkloadNameFor` with gate `WorkloadIdentifierAnnotations` on, the annotation when
/// set and not empty, else the label.
pub fn prebuilt_workload_name(job: &ObjectMeta) -> Option<&str> {
    let annotation = job
        .annotations
        .as_ref()
        .and_then(|a| a.get(annotations::PREBUILT_WORKLOAD_NAME))
        .filter(|v| !v.is_empty());
    annotation
        .or_else(|| job.labels.as_ref()?.get(labels::PREBUILT_WORKLOAD_NAME))
        .map(String::as_str)
}

/// What the Job makes of its prebuilt Workload.
#[derive(Clone, Debug, PartialEq)]
pub enum PrebuiltUse<'a> {
    /// Take it over: this is the Workload with the Job as its controller.
    Adopt(Box<Workload>),
    /// It is the Job's own.
    Own(&'a Workload),
    /// There is none the Job may use: missing, or controlled by another object.
    None,
}

/// How `job` uses the prebuilt Workload it names.
pub fn use_prebuilt<'a>(job: &Job, prebuilt: Prebuilt<'a>) -> PrebuiltUse<'a> {
    use_prebuilt_by(&job.metadata, "batch/v1", "Job", prebuilt)
}

/// [`use_prebuilt`] for an owner of any kind, given by its metadata, `apiVersion` and `kind`.
pub(crate) fn use_prebuilt_by<'a>(
    owner_meta: &ObjectMeta,
    api_version: &str,
    kind: &str,
    prebuilt: Prebuilt<'a>,
) -> PrebuiltUse<'a> {
    let Prebuilt::Found(workload) = prebuilt else {
        return PrebuiltUse::None;
    };
    let uid = owner_meta.uid.as_deref().unwrap_or_default();
    let controller = workload
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true));
    match controller {
        Some(owner) if owner.uid == uid => PrebuiltUse::Own(workload),
        Some(_) => PrebuiltUse::None,
        None if workload.metadata.deletion_timestamp.is_some() => PrebuiltUse::None,
        None => {
            let mut adopted = workload.clone();
            adopted
                .metadata
                .owner_references
                .get_or_insert_default()
                .push(OwnerReference {
                    api_version: api_version.to_owned(),
                    kind: kind.to_owned(),
                    name: owner_meta.name.clone().unwrap_or_default(),
                    uid: uid.to_owned(),
                    controller: Some(true),
                    block_owner_deletion: Some(true),
                });
            adopted
                .metadata
                .labels
                .get_or_insert_default()
                .insert(labels::JOB_UID.to_owned(), uid.to_owned());
            PrebuiltUse::Adopt(Box::new(adopted))
        }
    }
}

#[cfg(test)]
mod tests;
