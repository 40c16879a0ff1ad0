//! What to write for one Workload after the engine's cycles: its status merged from the engine's
//! state into the last one read, the carried-decision annotations, and what the write does to
//! quota (claims it, releases it, or neither), which decides the order writes may land in.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;

use crate::api::{Workload, WorkloadStatus};
use crate::engine::{WorkloadState, WorkloadStatus as EngineStatus};
use crate::status::annotations::set_carried_unless_stale;
use crate::status::workload::workload_status;

/// What a write does to the quota the API shows as reserved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Sets or changes `status.admission`: quota is taken.
    Claim,
    /// Clears `status.admission`: quota is given back.
    Release,
    /// Conditions or annotations only.
    Update,
}

/// One Workload's planned write.
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    pub effect: Effect,
    /// The whole status after the write; the writer sends the parts kuota owns.
    pub status: WorkloadStatus,
    /// The carried-decision annotations, when they differ from the object's.
    pub annotations: Option<BTreeMap<String, String>>,
}

/// The write that brings `object` in line with the engine's `state`, or `None` when it already is.
pub fn plan(object: &Workload, state: &WorkloadState, now: &Time) -> Option<Planned> {
    let old = object.status.as_ref();
    let status = workload_status(old, state, now, object.metadata.generation);
    let mut annotations = object.annotations().clone();
    let holds = matches!(state.status, EngineStatus::Admitted(_));
    set_carried_unless_stale(&mut annotations, &state.carried, holds);
    let annotations = (annotations != *object.annotations()).then_some(annotations);
    let unchanged = old.map_or_else(|| status == WorkloadStatus::default(), |old| *old == status);
    if unchanged && annotations.is_none() {
        return None;
    }
    let had = old.and_then(|s| s.admission.as_ref());
    let effect = match (&status.admission, had) {
        (Some(new), Some(old)) if new == old => Effect::Update,
        (Some(_), _) => Effect::Claim,
        (None, Some(_)) => Effect::Release,
        (None, None) => Effect::Update,
    };
    Some(Planned {
        effect,
        status,
        annotations,
    })
}

#[cfg(test)]
mod tests;
