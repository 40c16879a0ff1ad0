//! Kueue's `AdmissionGatedBy` in the job integrations: a job's `kueue.x-k8s.io/admission-gated-by`
//! is copied onto the Workload made for it, and afterwards the Workload follows the job's value.
//! Kueue writes the job's value whatever the Workload holds; kuota writes it only where the
//! Workload webhook accepts it (gates removed, none added), so a gate removed from the Workload
//! itself is not written back only to be refused.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::api::Workload;
use crate::api::keys::annotations::ADMISSION_GATED_BY;

/// The gates `meta` carries, as written; absent and empty are alike.
fn gates_of(meta: &ObjectMeta) -> &str {
    meta.annotations
        .as_ref()
        .and_then(|all| all.get(ADMISSION_GATED_BY))
        .map_or("", String::as_str)
}

fn split(value: &str) -> Vec<&str> {
    value
        .split(',')
        .map(str::trim)
        .filter(|gate| !gate.is_empty())
        .collect()
}

/// Writes the gates `value` into `workload`: removed when empty.
fn set_gates(workload: &mut Workload, value: &str) {
    let annotations = workload.metadata.annotations.get_or_insert_default();
    if value.is_empty() {
        annotations.remove(ADMISSION_GATED_BY);
    } else {
        annotations.insert(ADMISSION_GATED_BY.to_owned(), value.to_owned());
    }
}

/// Copies the job's gates onto a Workload being created for it.
pub fn copy_gates(job: &ObjectMeta, workload: &mut Workload) {
    let gates = gates_of(job);
    if !gates.is_empty() {
        set_gates(workload, gates);
    }
}

/// The Workload with the job's gates, when they differ from the Workload's and only remove some
/// of them; the new value is returned for the job's `UpdatedWorkload` event.
pub fn follow_gates(job: &ObjectMeta, workload: &Workload) -> Option<(Workload, String)> {
    let (wanted, held) = (gates_of(job), gates_of(&workload.metadata));
    if wanted == held {
        return None;
    }
    let held_gates = split(held);
    let removes_only = split(wanted).iter().all(|gate| held_gates.contains(gate));
    if held_gates.is_empty() || !removes_only {
        return None;
    }
    let mut followed = workload.clone();
    set_gates(&mut followed, wanted);
    Some((followed, wanted.to_owned()))
}

#[cfg(test)]
mod tests;
