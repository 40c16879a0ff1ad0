//! The events Kueue's job and pod integrations record on jobs and pods: reason (from
//! [`crate::api::keys::job_event_reasons`]), type and note, spelled as Kueue spells them. The
//! controller records them (`events.k8s.io/v1`, reporting controller
//! `<framework>-kueue-controller`) after the write they describe has landed.

use crate::api::keys::job_event_reasons;

/// The longest note Kueue records, in bytes; longer notes end in `" ..."`.
const MAX_NOTE_BYTES: usize = 1024;
const CUT_SUFFIX: &str = " ...";

/// One event on a job or pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobEvent {
    pub reason: &'static str,
    pub warning: bool,
    pub note: String,
}

impl JobEvent {
    fn normal(reason: &'static str, note: String) -> Self {
        JobEvent {
            reason,
            warning: false,
            note: truncate(note),
        }
    }

    fn warning(reason: &'static str, note: String) -> Self {
        JobEvent {
            reason,
            warning: true,
            note: truncate(note),
        }
    }

    /// The Workload `namespace/name` was created for the job.
    pub fn created_workload(workload_key: &str) -> Self {
        Self::normal(
            job_event_reasons::CREATED_WORKLOAD,
            format!("Created Workload: {workload_key}"),
        )
    }

    /// The job (or each pod of a group) was started with its admission.
    pub fn started(cluster_queue: &str) -> Self {
        Self::normal(
            job_event_reasons::STARTED,
            format!("Admitted by clusterQueue {cluster_queue}"),
        )
    }

    /// The job was stopped; `message` is the Evicted condition's message or one of the stop
    /// messages below.
    pub fn stopped(message: &str) -> Self {
        Self::normal(job_event_reasons::STOPPED, message.to_owned())
    }

    /// The Workload is finished; the job is left alone from now on.
    pub fn finished_workload(workload_key: &str) -> Self {
        Self::normal(
            job_event_reasons::FINISHED_WORKLOAD,
            format!("Workload '{workload_key}' is declared finished"),
        )
    }

    /// A Workload that no longer matched the job was deleted.
    pub fn deleted_workload(workload_key: &str) -> Self {
        Self::normal(
            job_event_reasons::DELETED_WORKLOAD,
            format!("Deleted not matching Workload: {workload_key}"),
        )
    }

    /// The Workload of a suspended job was rewritten to match it.
    pub fn updated_workload(workload_key: &str) -> Self {
        Self::normal(
            job_event_reasons::UPDATED_WORKLOAD,
            format!("Updated not matching Workload for suspended job: {workload_key}"),
        )
    }

    /// The Workload now carries the job's `admission-gated-by` value `gates` (empty: none).
    pub fn updated_admission_gates(gates: &str) -> Self {
        Self::normal(
            job_event_reasons::UPDATED_WORKLOAD,
            format!("Updated workload AdmissionGatedBy to {gates:?}"),
        )
    }

    /// The Workload's priority class now follows the job's label.
    pub fn updated_workload_priority(workload_key: &str) -> Self {
        Self::normal(
            job_event_reasons::UPDATED_WORKLOAD,
            format!("Updated workload priority class: {workload_key}"),
        )
    }

    /// The job's WorkloadPriorityClass does not exist; its Workload waits.
    pub fn workload_priority_class_not_found(name: &str) -> Self {
        Self::warning(
            job_event_reasons::WORKLOAD_PRIORITY_CLASS_NOT_FOUND,
            format!("WorkloadPriorityClass {name:?} not found"),
        )
    }

    /// A pod group's Workload cannot be built (yet); `error` says why.
    pub fn err_workload_compose(error: &str) -> Self {
        Self::warning(job_event_reasons::ERR_WORKLOAD_COMPOSE, error.to_owned())
    }

    /// The pod group's Workload names `added` more pods as owners.
    pub fn owner_references_added(added: usize) -> Self {
        Self::normal(
            job_event_reasons::OWNER_REFERENCES_ADDED,
            format!("Added {added} owner reference(s)"),
        )
    }

    /// A Workload named after the pod group exists but was not made for a pod group.
    pub fn workload_name_conflict(name: &str) -> Self {
        Self::warning(
            job_event_reasons::WORKLOAD_NAME_CONFLICT,
            format!(
                "A Workload named {name:?} already exists but is not a pod group workload; this pod group cannot be admitted"
            ),
        )
    }

    /// A pod beyond its group's total count was deleted.
    pub fn excess_pod_deleted() -> Self {
        Self::normal(
            job_event_reasons::EXCESS_POD_DELETED,
            "Excess pod deleted".to_owned(),
        )
    }
}

/// Stop message when the Workload is being deleted.
pub const STOP_WORKLOAD_DELETED: &str = "Workload is deleted";
/// Stop message when a running job's Workload is not admitted.
pub const STOP_NOT_ADMITTED: &str = "Not admitted by cluster queue";
/// Stop message when the Workload no longer matches the job.
pub const STOP_NO_MATCHING_WORKLOAD: &str =
    "No matching Workload; restoring pod templates according to existent Workload";
/// Stop message when the job has no Workload at all.
pub const STOP_MISSING_WORKLOAD: &str = "Missing Workload; unable to restore pod templates";

/// Kueue's cut of a note: at most 1024 bytes, on a character boundary, ending in `" ..."`.
fn truncate(mut note: String) -> String {
    if note.len() <= MAX_NOTE_BYTES {
        return note;
    }
    let mut end = MAX_NOTE_BYTES - CUT_SUFFIX.len();
    while !note.is_char_boundary(end) {
        end -= 1;
    }
    note.truncate(end);
    note.push_str(CUT_SUFFIX);
    note
}

#[cfg(test)]
mod tests;
