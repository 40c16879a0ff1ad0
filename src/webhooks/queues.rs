//! Validation of ClusterQueues, Cohorts and ResourceFlavors: the conversion the state caches use,
//! then the ClusterQueue rules only the webhook checks (`onFlavors`, the concurrent admission
//! policy).

use std::collections::{BTreeMap, BTreeSet};

use kube::ResourceExt;

use super::findings::Findings;
use crate::api;
use crate::api::cluster_queue::{MigrationMode, QueueingStrategy};
use crate::engine::ModelError;
use crate::engine::features::{Feature, FeatureGates};
use crate::state::admission_input;

/// Kueue's most flavors in the one group of a ClusterQueue with a concurrent admission policy.
const CONCURRENT_ADMISSION_MAX_FLAVORS: usize = 16;

/// Every rule a ClusterQueue breaks; `old` is the stored object on UPDATE.
pub fn cluster_queue(
    gates: &FeatureGates,
    queue: &api::ClusterQueue,
    old: Option<&api::ClusterQueue>,
) -> Vec<ModelError> {
    let mut findings = Findings::new("ClusterQueue", queue.name_any());
    findings.check(admission_input::cluster_queue(queue).map(drop));
    on_flavors(&mut findings, gates, queue, old);
    if gates.enabled(Feature::ConcurrentAdmission) {
        concurrent_admission(&mut findings, queue);
    }
    if let Some(old) = old
        && old.spec.concurrent_admission_policy != queue.spec.concurrent_admission_policy
    {
        findings.add("spec.concurrentAdmissionPolicy", "field is immutable");
    }
    findings.into_errors()
}

/// Every rule a Cohort breaks.
pub fn cohort(cohort: &api::Cohort) -> Vec<ModelError> {
    admission_input::cohort(cohort).err().into_iter().collect()
}

/// Every rule a ResourceFlavor breaks.
pub fn resource_flavor(flavor: &api::ResourceFlavor) -> Vec<ModelError> {
    admission_input::resource_flavor(flavor)
        .err()
        .into_iter()
        .collect()
}

fn flavors(queue: &api::ClusterQueue) -> BTreeSet<&str> {
    queue
        .spec
        .resource_groups
        .iter()
        .flat_map(|g| &g.flavors)
        .map(|f| f.name.as_str())
        .collect()
}

/// Each admission check's `onFlavors` names flavors of this ClusterQueue. On UPDATE, unless gate
/// `RejectUpdatesToCQWithInvalidOnFlavors` is on, Kueue lets through an entry that is unchanged
/// while the queue's flavors are unchanged, so a queue stored before the rule can still be edited.
fn on_flavors(
    findings: &mut Findings,
    gates: &FeatureGates,
    queue: &api::ClusterQueue,
    old: Option<&api::ClusterQueue>,
) {
    let Some(strategy) = &queue.spec.admission_checks_strategy else {
        return;
    };
    let valid = flavors(queue);
    let tolerated: BTreeMap<&str, BTreeSet<&str>> = match old {
        Some(old) if !gates.enabled(Feature::RejectUpdatesToCQWithInvalidOnFlavors) => old
            .spec
            .admission_checks_strategy
            .iter()
            .filter(|_| flavors(old) == valid)
            .flat_map(|s| &s.admission_checks)
            .map(|c| {
                (
                    c.name.as_str(),
                    c.on_flavors.iter().map(String::as_str).collect(),
                )
            })
            .collect(),
        _ => BTreeMap::new(),
    };
    for (i, check) in strategy.admission_checks.iter().enumerate() {
        let on: BTreeSet<&str> = check.on_flavors.iter().map(String::as_str).collect();
        if tolerated.get(check.name.as_str()) == Some(&on) {
            continue;
        }
        for (j, flavor) in check.on_flavors.iter().enumerate() {
            if !valid.contains(flavor.as_str()) {
                findings.add(
                    format!("spec.admissionChecksStrategy.admissionChecks[{i}].onFlavors[{j}]"),
                    format!("{flavor:?} is not a flavor of this ClusterQueue (supported values: {valid:?})"),
                );
            }
        }
    }
}

/// Kueue's rules for `concurrentAdmissionPolicy` (gate `ConcurrentAdmission`): one resource group
/// of at most 16 flavors, migration constraints only with `TryPreferredFlavors` and naming a flavor
/// of the queue, and no `StrictFIFO`.
fn concurrent_admission(findings: &mut Findings, queue: &api::ClusterQueue) {
    let spec = &queue.spec;
    let Some(policy) = &spec.concurrent_admission_policy else {
        return;
    };
    let groups = &spec.resource_groups;
    if groups.len() != 1 {
        findings.add(
            "spec.resourceGroups",
            "must have exactly one ResourceGroup when ConcurrentAdmissionPolicy is defined",
        );
    } else if groups[0].flavors.len() > CONCURRENT_ADMISSION_MAX_FLAVORS {
        findings.add(
            "spec.resourceGroups[0].flavors",
            format!(
                "cannot have more than {CONCURRENT_ADMISSION_MAX_FLAVORS} resource flavors in the \
                 ResourceGroup when ConcurrentAdmissionPolicy is defined"
            ),
        );
    }
    let migration = &policy.migration;
    let constraints = "spec.concurrentAdmissionPolicy.migration.constraints";
    match (&migration.constraints, migration.mode) {
        (None, _) => {}
        (Some(_), MigrationMode::RetainFirstAdmission) => findings.add(
            constraints,
            "may only be set when migration.mode is \"TryPreferredFlavors\" (got \"RetainFirstAdmission\")",
        ),
        (Some(c), MigrationMode::TryPreferredFlavors) => {
            let valid = flavors(queue);
            if let Some(last) = &c.last_acceptable_flavor_name
                && !valid.contains(last.as_str())
            {
                findings.add(
                    format!("{constraints}.lastAcceptableFlavorName"),
                    format!("must be one of the flavors defined in the ClusterQueue: {valid:?}"),
                );
            }
        }
    }
    if spec.queueing_strategy == Some(QueueingStrategy::StrictFifo) {
        findings.add(
            "spec.queueingStrategy",
            "StrictFIFO queueing strategy cannot be used when ConcurrentAdmissionPolicy is defined",
        );
    }
}
