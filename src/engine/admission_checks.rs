//! Which AdmissionChecks of a ClusterQueue's `spec.admissionChecksStrategy` a Workload must pass,
//! as Kueue's `AdmissionChecksForWorkload` picks them: with an admission, every check whose
//! `onFlavors` is empty or names a flavor the admission assigns; without one, only the checks
//! that apply whatever flavor is assigned.

use super::model::{Admission, QueueCheck};

/// The names of the checks an admission in the queue with `rules` must pass, sorted.
pub fn for_admission(rules: &[QueueCheck], admission: &Admission) -> Vec<String> {
    let assigned = |flavor: &String| {
        admission
            .pod_set_assignments
            .iter()
            .any(|a| a.flavors.values().any(|f| f == flavor))
    };
    sorted(
        rules
            .iter()
            .filter(|rule| rule.on_flavors.is_empty() || rule.on_flavors.iter().any(assigned)),
    )
}

/// The names of the checks a waiting Workload of the queue with `rules` and `flavors` (every
/// flavor of its resource groups) must pass whatever it is assigned, sorted.
pub fn for_every_flavor(rules: &[QueueCheck], flavors: &[&str]) -> Vec<String> {
    sorted(rules.iter().filter(|rule| {
        rule.on_flavors.is_empty()
            || flavors
                .iter()
                .all(|flavor| rule.on_flavors.iter().any(|f| f == flavor))
    }))
}

fn sorted<'a>(rules: impl Iterator<Item = &'a QueueCheck>) -> Vec<String> {
    let mut names: Vec<String> = rules.map(|rule| rule.name.clone()).collect();
    names.sort();
    names.dedup();
    names
}

#[cfg(test)]
mod tests;
