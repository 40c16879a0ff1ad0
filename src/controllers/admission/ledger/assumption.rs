//! Decisions the engine holds in memory that the API does not show yet, and how a Workload read
//! from the API is seen while one is outstanding: with the decided admission, admission
//! conditions and carried annotations laid over it. Without this, an unrelated update of a
//! Workload whose admission is being written would release its quota in memory, and another
//! workload could be admitted into it. Also the admissions whose write may have been stored
//! without an answer saying so (see `unconfirmed.rs`).

use std::collections::BTreeMap;

use crate::api::keys::{condition_types, kuota_annotations};
use crate::api::{Workload, WorkloadStatus};

use crate::controllers::admission::plan::Effect;

/// Conditions an admission decision sets.
const DECIDED_CONDITIONS: [&str; 6] = [
    condition_types::QUOTA_RESERVED,
    condition_types::ADMITTED,
    condition_types::EVICTED,
    condition_types::PREEMPTED,
    condition_types::REQUEUED,
    condition_types::BLOCKED_ON_PREEMPTION_GATES,
];

const CARRIED_ANNOTATIONS: [&str; 2] = [
    kuota_annotations::PREEMPTION_CREDIT_SPENT,
    kuota_annotations::FAIR_SHARE_SHIELD,
];

/// A decision that claims or releases quota and is not written yet.
#[derive(Clone, Debug, PartialEq)]
pub struct Assumption {
    /// [`Effect::Claim`] or [`Effect::Release`].
    pub effect: Effect,
    pub status: WorkloadStatus,
    pub annotations: Option<BTreeMap<String, String>>,
    /// Until this is written the API may show quota held that the engine counts as free: a
    /// release, or a claim that moves the workload off the admission it holds.
    pub frees: bool,
}

/// Admissions that may be stored, the latest last, and the resource version their writes were
/// fenced on: at most one of them landed.
#[derive(Clone, Debug)]
pub struct Unconfirmed {
    fenced_on: Option<String>,
    claims: Vec<Assumption>,
}

impl Unconfirmed {
    pub fn new(fenced_on: Option<String>, claim: Assumption) -> Self {
        Unconfirmed {
            fenced_on,
            claims: vec![claim],
        }
    }

    pub fn fenced_on(&self) -> &Option<String> {
        &self.fenced_on
    }

    /// The admissions that may be stored, the latest last.
    pub fn claims(&self) -> &[Assumption] {
        &self.claims
    }

    /// Another admission written at the same version may be stored; it is the latest.
    pub fn add(&mut self, claim: Assumption) {
        self.claims
            .retain(|c| c.status.admission != claim.status.admission);
        self.claims.push(claim);
    }
}

/// `read` as it will be once `assumption` is written.
pub fn overlay(read: &Workload, assumption: &Assumption) -> Workload {
    let mut seen = read.clone();
    let status = seen.status.get_or_insert_with(WorkloadStatus::default);
    status.admission = assumption.status.admission.clone();
    status
        .conditions
        .retain(|c| !DECIDED_CONDITIONS.contains(&c.type_.as_str()));
    status.conditions.extend(
        assumption
            .status
            .conditions
            .iter()
            .filter(|c| DECIDED_CONDITIONS.contains(&c.type_.as_str()))
            .cloned(),
    );
    if let Some(decided) = &assumption.annotations {
        let annotations = seen.metadata.annotations.get_or_insert_with(BTreeMap::new);
        for key in CARRIED_ANNOTATIONS {
            match decided.get(key) {
                Some(value) => annotations.insert(key.to_string(), value.clone()),
                None => annotations.remove(key),
            };
        }
    }
    seen
}

/// Whether `candidate` is older than `current`: resource versions of one object grow with every
/// change (they are etcd revisions); anything that does not parse as one counts as newer, so it
/// is never dropped.
pub fn is_older(candidate: Option<&str>, current: Option<&str>) -> bool {
    match (
        candidate.and_then(|v| v.parse::<u64>().ok()),
        current.and_then(|v| v.parse::<u64>().ok()),
    ) {
        (Some(candidate), Some(current)) => candidate < current,
        _ => false,
    }
}

#[cfg(test)]
mod tests;
