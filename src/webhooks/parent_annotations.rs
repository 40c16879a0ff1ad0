//! Kueue's annotation rules for a parent run as pod groups (StatefulSet, LeaderWorkerSet), on
//! create and update: `kueue.x-k8s.io/elastic-job` is refused (neither kind is elastic in Kueue,
//! gate `ElasticJobsViaWorkloadSlices`), and with gate `AdmissionGatedBy` the
//! `kueue.x-k8s.io/admission-gated-by` value is well formed on create and its gates only removed
//! on update.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::findings::Findings;
use super::metadata;
use crate::api::keys::annotations;
use crate::engine::features::{Feature, FeatureGates};

fn annotation<'a>(meta: &'a ObjectMeta, key: &str) -> &'a str {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map_or("", String::as_str)
}

fn annotation_field(key: &str) -> String {
    format!("metadata.annotations[{key}]")
}

/// Adds to `findings` what the parent's annotations break. `gvk` is the kind as Kueue's message
/// spells it (`apps/v1, Kind=StatefulSet`).
pub fn check(
    findings: &mut Findings,
    gates: &FeatureGates,
    gvk: &str,
    old: Option<&ObjectMeta>,
    new: &ObjectMeta,
) {
    if gates.enabled(Feature::ElasticJobsViaWorkloadSlices)
        && annotation(new, annotations::ELASTIC_JOB) == "true"
    {
        findings.add(
            annotation_field(annotations::ELASTIC_JOB),
            format!("elastic job is not supported for {gvk:?}"),
        );
    }
    if gates.enabled(Feature::AdmissionGatedBy) {
        let field = annotation_field(annotations::ADMISSION_GATED_BY);
        let gated_by = annotation(new, annotations::ADMISSION_GATED_BY);
        match old {
            None => metadata::gated_by_format(findings, &field, gated_by),
            Some(old) => metadata::gated_by_update(
                findings,
                &field,
                annotation(old, annotations::ADMISSION_GATED_BY),
                gated_by,
            ),
        }
    }
}
