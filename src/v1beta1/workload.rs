//! The fields of a Workload that differ between `v1beta1` and `v1beta2` (Kueue's
//! `workload_conversion.go`).

use serde_json::{Value, json};

use super::fields::{FieldGroup, Mapping, MemberError, Members, array_len};
use super::topology_assignment;
use crate::engine::features::FeatureGates;

/// `v1beta1`'s `priorityClassSource` naming a WorkloadPriorityClass.
pub(super) const WORKLOAD_PRIORITY_CLASS_SOURCE: &str = "kueue.x-k8s.io/workloadpriorityclass";
/// `v1beta1`'s `priorityClassSource` naming a pod PriorityClass.
pub(super) const POD_PRIORITY_CLASS_SOURCE: &str = "scheduling.k8s.io/priorityclass";

/// `v1beta2`'s `priorityClassRef` group and kind for each `v1beta1` source.
const PRIORITY_CLASS_REFS: [(&str, &str, &str); 2] = [
    (
        WORKLOAD_PRIORITY_CLASS_SOURCE,
        "kueue.x-k8s.io",
        "WorkloadPriorityClass",
    ),
    (
        POD_PRIORITY_CLASS_SOURCE,
        "scheduling.k8s.io",
        "PriorityClass",
    ),
];

/// `spec.priorityClassName` and `spec.priorityClassSource` are `spec.priorityClassRef`;
/// `spec.preemptionGates`, `status.preemptionGates` and each pod set's
/// `topologyRequest.podsetSliceRequiredTopologyConstraints` are only in `v1beta2`;
/// `status.accumulatedPastExexcutionTimeSeconds` (sic) is
/// `status.accumulatedPastExecutionTimeSeconds`; each topology assignment's `domains` is
/// `slices`.
pub(super) fn groups(object: &Value) -> Vec<FieldGroup> {
    let mut groups = vec![
        FieldGroup::new(
            "/spec",
            &["priorityClassName", "priorityClassSource"],
            &["priorityClassRef"],
            Mapping::Mapped {
                up: priority_class_up,
                down: priority_class_down,
            },
        ),
        FieldGroup::new("/spec", &[], &["preemptionGates"], Mapping::V1beta2Only),
        FieldGroup::new(
            "/status",
            &["accumulatedPastExexcutionTimeSeconds"],
            &["accumulatedPastExecutionTimeSeconds"],
            Mapping::Renamed,
        ),
        FieldGroup::new("/status", &[], &["preemptionGates"], Mapping::V1beta2Only),
    ];
    for i in 0..array_len(object, "/spec/podSets") {
        groups.push(FieldGroup::new(
            format!("/spec/podSets/{i}/topologyRequest"),
            &[],
            &["podsetSliceRequiredTopologyConstraints"],
            Mapping::V1beta2Only,
        ));
    }
    for i in 0..array_len(object, "/status/admission/podSetAssignments") {
        groups.push(FieldGroup::new(
            format!("/status/admission/podSetAssignments/{i}"),
            &["topologyAssignment"],
            &["topologyAssignment"],
            Mapping::Mapped {
                up: topology_assignment::up,
                down: topology_assignment::down,
            },
        ));
    }
    groups
}

/// Kueue names the class by a reference for either known source, and drops the name when the
/// source is neither.
fn priority_class_up(members: &Members, _: &FeatureGates) -> Result<Members, MemberError> {
    let source = optional_text(members, "priorityClassSource")?.unwrap_or_default();
    let name = optional_text(members, "priorityClassName")?.unwrap_or_default();
    let mut out = Members::new();
    if let Some((_, group, kind)) = PRIORITY_CLASS_REFS.iter().find(|(s, ..)| *s == source) {
        out.insert(
            "priorityClassRef".into(),
            json!({ "group": group, "kind": kind, "name": name }),
        );
    }
    Ok(out)
}

/// Kueue names the class and its source for either known group and kind, and drops any other
/// reference.
fn priority_class_down(members: &Members, _: &FeatureGates) -> Result<Members, MemberError> {
    let mut out = Members::new();
    let reference = match members.get("priorityClassRef") {
        None | Some(Value::Null) => return Ok(out),
        Some(Value::Object(reference)) => reference,
        Some(_) => return Err(MemberError::new("priorityClassRef", "must be an object")),
    };
    let text = |member: &str| match reference.get(member) {
        None | Some(Value::Null) => Ok(""),
        Some(Value::String(text)) => Ok(text.as_str()),
        Some(_) => Err(MemberError::new(
            format!("priorityClassRef.{member}"),
            "must be a string",
        )),
    };
    let (group, kind, name) = (text("group")?, text("kind")?, text("name")?);
    if let Some((source, ..)) = PRIORITY_CLASS_REFS
        .iter()
        .find(|(_, g, k)| *g == group && *k == kind)
    {
        out.insert(
            "priorityClassSource".into(),
            Value::String(source.to_string()),
        );
        if !name.is_empty() {
            out.insert("priorityClassName".into(), Value::String(name.into()));
        }
    }
    Ok(out)
}

fn optional_text<'a>(members: &'a Members, member: &str) -> Result<Option<&'a str>, MemberError> {
    match members.get(member) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(MemberError::new(member, "must be a string")),
    }
}
