//! The Workload rules that compare the stored object with the update: what quota freezes, what an
//! admission may become, and what may be added after creation.

use std::collections::{BTreeMap, BTreeSet};

use super::findings::Findings;
use super::metadata;
use super::workload::{elastic, gated_by, gated_by_field, reserves_quota};
use crate::api::workload_status::{Admission, CheckState};
use crate::api::{self, keys};
use crate::engine::features::{Feature, FeatureGates};

/// The UPDATE-only rules, added to `findings`.
pub fn validate(
    findings: &mut Findings,
    gates: &FeatureGates,
    workload: &api::Workload,
    old: &api::Workload,
) {
    if reserves_quota(old) {
        frozen_pod_sets(findings, gates, workload, old);
    }
    if reserves_quota(workload) && reserves_quota(old) {
        reclaimable_pods(findings, gates, workload, old);
    }
    let admission = |w: &api::Workload| w.status.as_ref().and_then(|s| s.admission.clone());
    if let (Some(new), Some(old)) = (admission(workload), admission(old))
        && changed_admission(gates, new, old)
    {
        findings.add(
            "status.admission",
            "field is immutable: an admission may be set or cleared, not changed",
        );
    }
    ready_check_updates(findings, workload, old);
    cluster_name(findings, gates, workload, old);
    if gates.enabled(Feature::AdmissionGatedBy) {
        admission_gates(findings, workload, old);
    }
}

/// While the stored Workload holds quota its pod sets are frozen; an elastic job may only lower a
/// count.
fn frozen_pod_sets(
    findings: &mut Findings,
    gates: &FeatureGates,
    workload: &api::Workload,
    old: &api::Workload,
) {
    let (new, old) = (&workload.spec.pod_sets, &old.spec.pod_sets);
    if new.len() != old.len() {
        findings.add(
            "spec.podSets",
            "field is immutable while the Workload holds quota",
        );
        return;
    }
    for (i, (new, old)) in new.iter().zip(old).enumerate() {
        let mut new = new.clone();
        if gates.enabled(Feature::ElasticJobsViaWorkloadSlices) && new.count < old.count {
            new.count = old.count;
        }
        if &new != old {
            findings.add(
                format!("spec.podSets[{i}]"),
                "field is immutable while the Workload holds quota",
            );
        }
    }
}

/// While quota stays reserved, a reclaimable count may not shrink or disappear, except for the pod
/// sets an elastic job scaled down.
fn reclaimable_pods(
    findings: &mut Findings,
    gates: &FeatureGates,
    workload: &api::Workload,
    old: &api::Workload,
) {
    let counts = |w: &api::Workload| -> BTreeMap<String, i32> {
        w.status
            .iter()
            .flat_map(|s| &s.reclaimable_pods)
            .map(|p| (p.name.clone(), p.count))
            .collect()
    };
    let (new_counts, old_counts) = (counts(workload), counts(old));
    if new_counts == old_counts || old_counts.is_empty() {
        return;
    }
    let scaled_down = scaled_down(gates, workload);
    for (name, old_count) in &old_counts {
        let at = format!("status.reclaimablePods[{name}]");
        if scaled_down.contains(name.as_str()) {
            continue;
        }
        match new_counts.get(name) {
            None => findings.add(at, "cannot be removed"),
            Some(count) if count < old_count => {
                findings.add(
                    format!("{at}.count"),
                    format!("cannot be less than {old_count}"),
                );
            }
            Some(_) => {}
        }
    }
}

/// The pod sets of an elastic Workload admitted with more pods than its spec now asks for.
fn scaled_down<'a>(gates: &FeatureGates, workload: &'a api::Workload) -> BTreeSet<&'a str> {
    let admission = workload.status.as_ref().and_then(|s| s.admission.as_ref());
    let (true, Some(admission)) = (elastic(gates, workload), admission) else {
        return BTreeSet::new();
    };
    admission
        .pod_set_assignments
        .iter()
        .filter(|a| {
            let spec_count = workload
                .spec
                .pod_sets
                .iter()
                .find(|p| p.name == a.name)
                .map_or(0, |p| p.count);
            a.count.is_some_and(|c| c > spec_count)
        })
        .map(|a| a.name.as_str())
        .collect()
}

/// Whether an admission changed other than in what TAS may fill in later (`topologyAssignment`,
/// `delayedTopologyRequest`, with gate `TopologyAwareScheduling`).
fn changed_admission(gates: &FeatureGates, new: Admission, mut old: Admission) -> bool {
    if gates.enabled(Feature::TopologyAwareScheduling)
        && new.pod_set_assignments.len() == old.pod_set_assignments.len()
    {
        for (old, new) in old
            .pod_set_assignments
            .iter_mut()
            .zip(&new.pod_set_assignments)
        {
            old.topology_assignment = new.topology_assignment.clone();
            old.delayed_topology_request = new.delayed_topology_request;
        }
    }
    new != old
}

/// The pod-set updates of a check that stays `Ready` are frozen.
fn ready_check_updates(findings: &mut Findings, workload: &api::Workload, old: &api::Workload) {
    let checks = |w: &api::Workload| w.status.clone().unwrap_or_default().admission_checks;
    let old_checks = checks(old);
    for (i, check) in checks(workload).iter().enumerate() {
        let Some(before) = old_checks.iter().find(|c| c.name == check.name) else {
            continue;
        };
        if before.state == CheckState::Ready
            && check.state == CheckState::Ready
            && before.pod_set_updates != check.pod_set_updates
        {
            findings.add(
                format!("status.admissionChecks[{i}].podSetUpdates"),
                "field is immutable while the check is Ready",
            );
        }
    }
}

/// `status.clusterName` may only be set to one of the stored `nominatedClusterNames`; a
/// replacement slice of an elastic job is exempt.
fn cluster_name(
    findings: &mut Findings,
    gates: &FeatureGates,
    workload: &api::Workload,
    old: &api::Workload,
) {
    let replacement = workload
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(keys::annotations::WORKLOAD_SLICE_REPLACEMENT_FOR));
    if gates.enabled(Feature::ElasticJobsViaWorkloadSlices) && replacement {
        return;
    }
    let old_status = old.status.clone().unwrap_or_default();
    let new_name = workload
        .status
        .as_ref()
        .and_then(|s| s.cluster_name.as_ref());
    if let (None, Some(name)) = (&old_status.cluster_name, new_name)
        && !old_status.nominated_cluster_names.contains(name)
    {
        findings.add(
            "status.clusterName",
            "when setting clusterName it must be one of the nominatedClusterNames",
        );
    }
}

/// Admission gates may only be removed after creation.
fn admission_gates(findings: &mut Findings, workload: &api::Workload, old: &api::Workload) {
    let field = gated_by_field();
    let (before, after) = (
        gated_by(old).unwrap_or_default(),
        gated_by(workload).unwrap_or_default(),
    );
    metadata::gated_by_update(findings, &field, before, after);
    metadata::gated_by_format(findings, &field, after);
}
