//! A pod set's topology assignment: `v1beta1` lists every domain, `v1beta2` encodes them in
//! compact slices (Kueue's `Convert_*_TopologyAssignment_*`, through `pkg/util/tas`).

use serde_json::{Map, Value, json};

use super::fields::{MemberError, Members};
use crate::api::topology_assignment::{
    TopologyAssignment, TopologyAssignmentSlice, TopologyAssignmentSliceLevelValues,
};
use crate::engine::features::FeatureGates;
use crate::engine::topology::encode;
use crate::engine::topology::model::{DomainAssignment, DomainList};

const MEMBER: &str = "topologyAssignment";

/// Encodes the `v1beta1` domain list as Kueue's scheduler would write it under `gates`.
pub(super) fn up(members: &Members, gates: &FeatureGates) -> Result<Members, MemberError> {
    let Some(assignment) = assignment(members)? else {
        return Ok(members.clone());
    };
    let levels = levels(assignment)?;
    let domains = match assignment.get("domains") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(domains)) => domains
            .iter()
            .enumerate()
            .map(|(i, domain)| v1beta1_domain(i, domain, levels.len()))
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(MemberError::new(
                format!("{MEMBER}.domains"),
                "must be a list",
            ));
        }
    };
    let encoded = encode(&DomainList { levels, domains }, gates);
    let value = serde_json::to_value(encoded)
        .map_err(|e| MemberError::new(MEMBER, format!("cannot be written: {e}")))?;
    Ok(Members::from_iter([(MEMBER.to_string(), value)]))
}

/// Lists every domain the `v1beta2` slices encode, in order.
pub(super) fn down(members: &Members, _: &FeatureGates) -> Result<Members, MemberError> {
    let Some(assignment) = assignment(members)? else {
        return Ok(members.clone());
    };
    let typed: TopologyAssignment = serde_json::from_value(Value::Object(assignment.clone()))
        .map_err(|e| MemberError::new(MEMBER, e.to_string()))?;
    let mut domains = Vec::new();
    for (s, slice) in typed.slices.iter().enumerate() {
        expand_slice(s, slice, typed.levels.len(), &mut domains)?;
    }
    let value = json!({ "levels": typed.levels, "domains": domains });
    Ok(Members::from_iter([(MEMBER.to_string(), value)]))
}

fn assignment(members: &Members) -> Result<Option<&Map<String, Value>>, MemberError> {
    match members.get(MEMBER) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(assignment)) => Ok(Some(assignment)),
        Some(_) => Err(MemberError::new(MEMBER, "must be an object")),
    }
}

fn levels(assignment: &Map<String, Value>) -> Result<Vec<String>, MemberError> {
    match assignment.get("levels") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(levels) => serde_json::from_value(levels.clone()).map_err(|_| {
            MemberError::new(format!("{MEMBER}.levels"), "must be a list of label keys")
        }),
    }
}

fn v1beta1_domain(
    i: usize,
    domain: &Value,
    levels: usize,
) -> Result<DomainAssignment, MemberError> {
    let field = |name: &str| format!("{MEMBER}.domains[{i}].{name}");
    let values: Vec<String> = domain
        .get("values")
        .map(|v| serde_json::from_value(v.clone()))
        .transpose()
        .map_err(|_| MemberError::new(field("values"), "must be a list of strings"))?
        .unwrap_or_default();
    if values.len() != levels {
        return Err(MemberError::new(
            field("values"),
            format!("has {} values for {levels} levels", values.len()),
        ));
    }
    let count = domain
        .get("count")
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok())
        .and_then(|c| u32::try_from(c).ok())
        .ok_or_else(|| MemberError::new(field("count"), "must be a non-negative 32-bit integer"))?;
    Ok(DomainAssignment { values, count })
}

fn expand_slice(
    s: usize,
    slice: &TopologyAssignmentSlice,
    levels: usize,
    domains: &mut Vec<Value>,
) -> Result<(), MemberError> {
    let field = |name: &str| format!("{MEMBER}.slices[{s}].{name}");
    let count = usize::try_from(slice.domain_count)
        .map_err(|_| MemberError::new(field("domainCount"), "must not be negative"))?;
    if slice.values_per_level.len() != levels {
        return Err(MemberError::new(
            field("valuesPerLevel"),
            format!(
                "has {} entries for {levels} levels",
                slice.values_per_level.len()
            ),
        ));
    }
    for (l, level) in slice.values_per_level.iter().enumerate() {
        check_level(level, count)
            .map_err(|reason| MemberError::new(field(&format!("valuesPerLevel[{l}]")), reason))?;
    }
    let counts = &slice.pod_counts;
    match (counts.universal, &counts.individual) {
        (Some(_), None) => {}
        (None, Some(individual)) if individual.len() == count => {}
        (None, Some(_)) => {
            return Err(MemberError::new(
                field("podCounts.individual"),
                "must have domainCount entries",
            ));
        }
        _ => {
            return Err(MemberError::new(
                field("podCounts"),
                "exactly one of universal and individual must be set",
            ));
        }
    }
    for d in 0..count {
        let values: Vec<String> = slice
            .values_per_level
            .iter()
            .map(|level| value_at(level, d))
            .collect();
        let pods = counts
            .universal
            .or_else(|| counts.individual.as_ref().map(|c| c[d]))
            .unwrap_or_default();
        domains.push(json!({ "values": values, "count": pods }));
    }
    Ok(())
}

fn check_level(level: &TopologyAssignmentSliceLevelValues, count: usize) -> Result<(), String> {
    match (&level.universal, &level.individual) {
        (Some(_), None) => Ok(()),
        (None, Some(individual)) if individual.roots.len() == count => Ok(()),
        (None, Some(_)) => Err("individual.roots must have domainCount entries".into()),
        _ => Err("exactly one of universal and individual must be set".into()),
    }
}

/// Domain `d`'s value at a level already checked by [`check_level`].
fn value_at(level: &TopologyAssignmentSliceLevelValues, d: usize) -> String {
    match (&level.universal, &level.individual) {
        (Some(universal), _) => universal.clone(),
        (None, Some(individual)) => format!(
            "{}{}{}",
            individual.prefix.as_deref().unwrap_or_default(),
            individual.roots[d],
            individual.suffix.as_deref().unwrap_or_default()
        ),
        (None, None) => String::new(),
    }
}
