//! Validation of a Workload on CREATE and UPDATE: the conversion the state caches use, then the
//! rules Kueue's webhook adds on fields the engine never reads (pod template metadata, conditions,
//! reclaimable pods, admission-check updates, Kueue annotations) and on the recorded admission.

use std::collections::BTreeSet;

use kube::ResourceExt;

use super::findings::Findings;
use super::metadata;
use crate::api::ConditionEntry;
use crate::api::{self, keys};
use crate::engine::features::{Feature, FeatureGates};
use crate::engine::quantity::Quantity;
use crate::state::admission_input::{self, WorkloadDefaults};
use crate::state::queue_order::QueueOrdering;

/// The rules a Workload breaks on CREATE and UPDATE; `old` is the stored object on UPDATE, which
/// some rules tolerate (the UPDATE-only rules are [`super::workload_update`]'s).
pub fn validate(
    gates: &FeatureGates,
    workload: &api::Workload,
    old: Option<&api::Workload>,
) -> Findings {
    let label = format!(
        "{}/{}",
        workload.namespace().unwrap_or_default(),
        workload.name_any()
    );
    let mut findings = Findings::new("Workload", label);
    findings.check(
        admission_input::workload(
            workload,
            WorkloadDefaults::default(),
            &QueueOrdering::default(),
        )
        .map(drop),
    );
    if workload.spec.pod_sets.iter().any(|p| p.min_count.is_some()) && elastic(gates, workload) {
        findings.add(
            "spec.podSets",
            "partial admission and elastic job cannot be used together",
        );
    }
    if gates.enabled(Feature::WorkloadValidationForPodSetMetadata) {
        template_metadata(&mut findings, workload);
    }
    if reserves_quota(workload) {
        admission(&mut findings, workload, old);
    }
    let status = workload.status.clone().unwrap_or_default();
    metadata::conditions(&mut findings, "status.conditions", &status.conditions);
    reclaimable_pods(&mut findings, gates, workload, old);
    pod_set_updates(&mut findings, workload);
    if gates.enabled(Feature::PriorityBoost) {
        priority_boost(&mut findings, workload);
    }
    // On UPDATE the gates' form is checked with how they changed.
    if old.is_none() && gates.enabled(Feature::AdmissionGatedBy) {
        let value = gated_by(workload).unwrap_or_default();
        metadata::gated_by_format(&mut findings, &gated_by_field(), value);
    }
    findings
}

/// Whether the Workload's `QuotaReserved` condition is true.
pub fn reserves_quota(workload: &api::Workload) -> bool {
    workload.status.as_ref().is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == keys::condition_types::QUOTA_RESERVED && c.is_true())
    })
}

/// Whether the Workload is a slice of an elastic job (gate `ElasticJobsViaWorkloadSlices`).
pub fn elastic(gates: &FeatureGates, workload: &api::Workload) -> bool {
    gates.enabled(Feature::ElasticJobsViaWorkloadSlices)
        && workload
            .annotations()
            .get(keys::annotations::ELASTIC_JOB)
            .is_some_and(|v| v == "true")
}

pub fn gated_by(workload: &api::Workload) -> Option<&str> {
    workload
        .annotations()
        .get(keys::annotations::ADMISSION_GATED_BY)
        .map(String::as_str)
}

pub fn gated_by_field() -> String {
    format!(
        "metadata.annotations[{}]",
        keys::annotations::ADMISSION_GATED_BY
    )
}

fn template_metadata(findings: &mut Findings, workload: &api::Workload) {
    for (i, pod_set) in workload.spec.pod_sets.iter().enumerate() {
        let Some(meta) = &pod_set.template.metadata else {
            continue;
        };
        let at = format!("spec.podSets[{i}].template.metadata");
        if let Some(labels) = &meta.labels {
            metadata::labels(findings, &format!("{at}.labels"), labels);
        }
        if let Some(annotations) = &meta.annotations {
            metadata::annotations(findings, &format!("{at}.annotations"), annotations);
        }
    }
}

/// With quota reserved, the admission is recorded (unless it was already missing: Kueue lets such
/// a Workload converge), names pod sets of the spec, and its usage divides by its pod count.
fn admission(findings: &mut Findings, workload: &api::Workload, old: Option<&api::Workload>) {
    let admission = workload.status.as_ref().and_then(|s| s.admission.as_ref());
    let Some(admission) = admission else {
        let already_missing = old.is_some_and(|old| {
            reserves_quota(old) && old.status.as_ref().is_none_or(|s| s.admission.is_none())
        });
        if !already_missing {
            findings.add(
                "status.admission",
                "must be set while the QuotaReserved condition is true",
            );
        }
        return;
    };
    let pod_sets: BTreeSet<&str> = workload
        .spec
        .pod_sets
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    for (i, assignment) in admission.pod_set_assignments.iter().enumerate() {
        let at = format!("status.admission.podSetAssignments[{i}]");
        if !pod_sets.contains(assignment.name.as_str()) {
            findings.add(
                format!("{at}.name"),
                format!("{:?} is not a pod set of spec.podSets", assignment.name),
            );
        }
        let count = assignment.count.unwrap_or(0);
        if count <= 0 {
            continue;
        }
        for (resource, amount) in &assignment.resource_usage {
            let Ok(amount) = amount.0.parse::<Quantity>() else {
                continue; // the conversion reports an unreadable amount
            };
            if resource_value(resource, amount) % i128::from(count) != 0 {
                findings.add(
                    format!("{at}.resourceUsage.{resource}"),
                    format!("is not a multiple of {count}"),
                );
            }
        }
    }
}

/// The integer Kueue counts a resource in: milli-units for `cpu`, units otherwise, rounded away
/// from zero.
fn resource_value(resource: &str, amount: Quantity) -> i128 {
    let unit: i128 = if resource == "cpu" {
        1_000_000
    } else {
        1_000_000_000
    };
    let nanos = amount.nanos();
    let whole = nanos / unit;
    if nanos % unit == 0 {
        whole
    } else {
        whole + nanos.signum()
    }
}

/// Reclaimable pods name pod sets and count at most the pod set's pods; an elastic Workload may
/// keep a count it already had after scaling down.
fn reclaimable_pods(
    findings: &mut Findings,
    gates: &FeatureGates,
    workload: &api::Workload,
    old: Option<&api::Workload>,
) {
    let Some(status) = &workload.status else {
        return;
    };
    let old_pods = old
        .and_then(|o| o.status.as_ref())
        .map(|s| &s.reclaimable_pods[..])
        .unwrap_or_default();
    let names: Vec<&str> = workload
        .spec
        .pod_sets
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    for pods in &status.reclaimable_pods {
        let at = format!("status.reclaimablePods[{}]", pods.name);
        let Some(pod_set) = workload.spec.pod_sets.iter().find(|p| p.name == pods.name) else {
            findings.add(
                format!("{at}.name"),
                format!("must name a pod set of spec.podSets (supported values: {names:?})"),
            );
            continue;
        };
        let stale = old.is_some() && elastic(gates, workload) && old_pods.contains(pods);
        if pods.count > pod_set.count && !stale {
            findings.add(
                format!("{at}.count"),
                format!("should be less or equal to {}", pod_set.count),
            );
        }
    }
}

/// Admission checks' pod-set updates name pod sets and hold valid labels, annotations, node
/// selectors and toleration keys.
fn pod_set_updates(findings: &mut Findings, workload: &api::Workload) {
    let Some(status) = &workload.status else {
        return;
    };
    let names: Vec<&str> = workload
        .spec
        .pod_sets
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    for (i, check) in status.admission_checks.iter().enumerate() {
        for (j, update) in check.pod_set_updates.iter().enumerate() {
            let at = format!("status.admissionChecks[{i}].podSetUpdates[{j}]");
            if !names.contains(&update.name.as_str()) {
                findings.add(
                    format!("{at}.name"),
                    format!(
                        "{:?} is not a pod set of spec.podSets (supported values: {names:?})",
                        update.name
                    ),
                );
            }
            metadata::toleration_keys(findings, &format!("{at}.tolerations"), &update.tolerations);
            metadata::annotations(findings, &format!("{at}.annotations"), &update.annotations);
            metadata::labels(
                findings,
                &format!("{at}.nodeSelector"),
                &update.node_selector,
            );
            metadata::labels(findings, &format!("{at}.labels"), &update.labels);
        }
    }
}

/// `kueue.x-k8s.io/priority-boost` is a signed 32-bit integer; an empty value is refused.
fn priority_boost(findings: &mut Findings, workload: &api::Workload) {
    let Some(value) = workload
        .annotations()
        .get(keys::annotations::PRIORITY_BOOST)
    else {
        return;
    };
    let field = format!(
        "metadata.annotations[{}]",
        keys::annotations::PRIORITY_BOOST
    );
    if value.is_empty() {
        findings.add(
            field,
            "must be a valid signed integer; use \"0\" explicitly, empty string is not allowed",
        );
    } else if value.parse::<i32>().is_err() {
        findings.add(
            field,
            format!("must be a valid signed integer, found {value:?}"),
        );
    }
}
