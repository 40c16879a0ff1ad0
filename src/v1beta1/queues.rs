//! The fields of ClusterQueue, Cohort, LocalQueue and AdmissionCheck that differ between
//! `v1beta1` and `v1beta2` (Kueue's `clusterqueue_conversion.go`, `localqueue_conversion.go`,
//! `fairsharing_conversion.go`, `admissioncheck_conversion.go`).

use serde_json::{Value, json};

use super::fields::{FieldGroup, Mapping, MemberError, Members};
use crate::engine::features::FeatureGates;

/// ClusterQueue: `spec.cohort` is `spec.cohortName`; `spec.admissionChecks` becomes
/// `spec.admissionChecksStrategy`; the flavor-fungibility policies `Borrow` and `Preempt` become
/// `MayStopSearch`; `spec.concurrentAdmissionPolicy` is only in `v1beta2`;
/// `status.pendingWorkloadsStatus` and `status.fairSharing.admissionFairSharingStatus` only in
/// `v1beta1`.
pub(super) fn cluster_queue() -> Vec<FieldGroup> {
    vec![
        FieldGroup::new("/spec", &["cohort"], &["cohortName"], Mapping::Renamed),
        FieldGroup::new(
            "/spec",
            &["admissionChecks", "admissionChecksStrategy"],
            &["admissionChecksStrategy"],
            Mapping::Mapped {
                up: admission_checks_up,
                down: same,
            },
        ),
        FieldGroup::new(
            "/spec",
            &[],
            &["concurrentAdmissionPolicy"],
            Mapping::V1beta2Only,
        ),
        FieldGroup::new(
            "/spec/flavorFungibility",
            &["whenCanBorrow", "whenCanPreempt"],
            &["whenCanBorrow", "whenCanPreempt"],
            Mapping::Mapped {
                up: flavor_fungibility_up,
                down: same,
            },
        ),
        FieldGroup::new(
            "/status",
            &["pendingWorkloadsStatus"],
            &[],
            Mapping::V1beta1Only,
        ),
        fair_sharing_status(),
    ]
}

/// Cohort: `status.fairSharing.admissionFairSharingStatus` is only in `v1beta1`.
pub(super) fn cohort() -> Vec<FieldGroup> {
    vec![fair_sharing_status()]
}

/// LocalQueue: `status.flavorUsage` is `status.flavorsUsage`; `status.flavors` is only in
/// `v1beta1`.
pub(super) fn local_queue() -> Vec<FieldGroup> {
    vec![
        FieldGroup::new(
            "/status",
            &["flavorUsage"],
            &["flavorsUsage"],
            Mapping::Renamed,
        ),
        FieldGroup::new("/status", &["flavors"], &[], Mapping::V1beta1Only),
    ]
}

/// AdmissionCheck: `spec.retryDelayMinutes` is only in `v1beta1`.
pub(super) fn admission_check() -> Vec<FieldGroup> {
    vec![FieldGroup::new(
        "/spec",
        &["retryDelayMinutes"],
        &[],
        Mapping::V1beta1Only,
    )]
}

/// `v1beta2`'s fair-sharing status of ClusterQueues and Cohorts has no Admission Fair Sharing
/// state (LocalQueues keep theirs).
fn fair_sharing_status() -> FieldGroup {
    FieldGroup::new(
        "/status/fairSharing",
        &["admissionFairSharingStatus"],
        &[],
        Mapping::V1beta1Only,
    )
}

fn same(members: &Members, _: &FeatureGates) -> Result<Members, MemberError> {
    Ok(members.clone())
}

/// Kueue turns a non-empty `admissionChecks` list into a strategy of the same checks on every
/// flavor, replacing any strategy given beside it.
fn admission_checks_up(members: &Members, _: &FeatureGates) -> Result<Members, MemberError> {
    let mut out = Members::new();
    let checks = match members.get("admissionChecks") {
        None | Some(Value::Null) => &Vec::new(),
        Some(Value::Array(checks)) => checks,
        Some(_) => return Err(MemberError::new("admissionChecks", "must be a list")),
    };
    if checks.is_empty() {
        if let Some(strategy) = members.get("admissionChecksStrategy") {
            out.insert("admissionChecksStrategy".into(), strategy.clone());
        }
        return Ok(out);
    }
    let rules = checks
        .iter()
        .enumerate()
        .map(|(i, check)| match check {
            Value::String(name) => Ok(json!({ "name": name })),
            _ => Err(MemberError::new(
                format!("admissionChecks[{i}]"),
                "must be an AdmissionCheck name",
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    out.insert(
        "admissionChecksStrategy".into(),
        json!({ "admissionChecks": rules }),
    );
    Ok(out)
}

/// `v1beta2` has no `Borrow` nor `Preempt` policy; Kueue reads both as `MayStopSearch`.
fn flavor_fungibility_up(members: &Members, _: &FeatureGates) -> Result<Members, MemberError> {
    let mut out = members.clone();
    for (member, retired) in [("whenCanBorrow", "Borrow"), ("whenCanPreempt", "Preempt")] {
        if out.get(member).and_then(Value::as_str) == Some(retired) {
            out.insert(member.into(), Value::String("MayStopSearch".into()));
        }
    }
    Ok(out)
}
