//! Groups of sibling fields that differ between `v1beta1` and `v1beta2`, and the conversion data
//! that makes converting them lossless.
//!
//! Kueue's conversion drops what the target version has no field for (a `v1beta1` AdmissionCheck's
//! `retryDelayMinutes`, a `v1beta2` Workload's `preemptionGates`) and maps some values onto one
//! (`Borrow` and `MayStopSearch` both become `MayStopSearch`). kuota converts each group as Kueue
//! does, and where converting the result back would not give the group as it was, it records the
//! group in both versions in the [`CONVERSION_DATA`] annotation. The next conversion back uses
//! the recorded group when the object still holds what was written, so an unchanged object
//! survives any number of round trips; a group changed in between converts afresh.

use serde_json::{Map, Value};

use super::error::ConversionError;
use super::version::Version;
use crate::api::keys::kuota_annotations::CONVERSION_DATA;
use crate::engine::features::FeatureGates;

/// The members of one group, by name, as one version holds them (absent members are left out).
pub(crate) type Members = Map<String, Value>;

/// Why a group's members cannot be converted: the member and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MemberError {
    pub member: String,
    pub reason: String,
}

impl MemberError {
    pub(crate) fn new(member: impl Into<String>, reason: impl Into<String>) -> Self {
        MemberError {
            member: member.into(),
            reason: reason.into(),
        }
    }
}

/// Converts a group's members from one version to the other.
pub(crate) type MapMembers = fn(&Members, &FeatureGates) -> Result<Members, MemberError>;

/// How a group's members correspond between the versions.
#[derive(Clone, Copy)]
pub(crate) enum Mapping {
    /// The same values under other names, pairwise.
    Renamed,
    /// Only `v1beta1` has these members; Kueue drops them on the way up.
    V1beta1Only,
    /// Only `v1beta2` has these members; Kueue drops them on the way down.
    V1beta2Only,
    /// Values that change on the way up, on the way down, or both.
    Mapped { up: MapMembers, down: MapMembers },
}

/// One group of sibling fields, under the object at a JSON pointer.
pub(crate) struct FieldGroup {
    /// JSON pointer to the object holding the members; the group is skipped where it is absent.
    pub parent: String,
    pub v1beta1: &'static [&'static str],
    pub v1beta2: &'static [&'static str],
    pub mapping: Mapping,
}

impl FieldGroup {
    pub(crate) fn new(
        parent: impl Into<String>,
        v1beta1: &'static [&'static str],
        v1beta2: &'static [&'static str],
        mapping: Mapping,
    ) -> Self {
        FieldGroup {
            parent: parent.into(),
            v1beta1,
            v1beta2,
            mapping,
        }
    }

    /// The key of the group in the conversion data: its parent and its first member in `v1beta2`
    /// (in `v1beta1` for a group only `v1beta1` has).
    fn key(&self) -> String {
        let name = self.v1beta2.first().or(self.v1beta1.first()).unwrap_or(&"");
        format!("{}/{}", self.parent, name)
    }

    fn members(&self, version: Version) -> &'static [&'static str] {
        match version {
            Version::V1beta1 => self.v1beta1,
            Version::V1beta2 => self.v1beta2,
        }
    }

    /// Kueue's conversion of the group's members from `from` to the other version.
    fn convert(
        &self,
        from: Version,
        members: &Members,
        gates: &FeatureGates,
    ) -> Result<Members, MemberError> {
        let to = from.other();
        match self.mapping {
            Mapping::Renamed => Ok(self
                .members(from)
                .iter()
                .zip(self.members(to))
                .filter_map(|(old, new)| Some((new.to_string(), members.get(*old)?.clone())))
                .collect()),
            Mapping::V1beta1Only | Mapping::V1beta2Only => Ok(Members::new()),
            Mapping::Mapped { up, down } => match from {
                Version::V1beta1 => up(members, gates),
                Version::V1beta2 => down(members, gates),
            },
        }
    }
}

/// Converts the groups of `object` from `from` to the other version, keeping what the target
/// cannot hold in the conversion data. `object` must be a JSON object.
pub(crate) fn convert_groups(
    object: &mut Value,
    groups: &[FieldGroup],
    from: Version,
    gates: &FeatureGates,
) -> Result<(), ConversionError> {
    let to = from.other();
    let recorded = take_conversion_data(object)?;
    let mut written = Map::new();
    for group in groups {
        let key = group.key();
        let Some(parent) = object.pointer_mut(&group.parent) else {
            continue;
        };
        let Some(parent) = parent.as_object_mut() else {
            return Err(ConversionError::field(
                pointer_to_field(&group.parent),
                "must be an object",
            ));
        };
        let current: Members = group
            .members(from)
            .iter()
            .filter_map(|name| Some((name.to_string(), parent.remove(*name)?)))
            .collect();
        let member_error = |e: MemberError| {
            ConversionError::field(
                format!("{}.{}", pointer_to_field(&group.parent), e.member),
                e.reason,
            )
        };
        let restored = recorded
            .get(&key)
            .filter(|entry| entry.get(from.name()) == Some(&Value::Object(current.clone())))
            .and_then(|entry| entry.get(to.name()))
            .and_then(Value::as_object)
            .cloned();
        let converted = match restored {
            Some(members) => members,
            None => group.convert(from, &current, gates).map_err(member_error)?,
        };
        let back = group.convert(to, &converted, gates).map_err(member_error)?;
        if back != current {
            let mut entry = Map::new();
            entry.insert(from.name().to_string(), Value::Object(current));
            entry.insert(to.name().to_string(), Value::Object(converted.clone()));
            written.insert(key, Value::Object(entry));
        }
        parent.extend(converted);
    }
    put_conversion_data(object, written)
}

/// Removes the conversion data from `object` and parses it; none gives an empty map.
fn take_conversion_data(object: &mut Value) -> Result<Map<String, Value>, ConversionError> {
    let field = || format!("metadata.annotations[{CONVERSION_DATA}]");
    let Some(annotations) = object
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    else {
        return Ok(Map::new());
    };
    let Some(raw) = annotations.remove(CONVERSION_DATA) else {
        return Ok(Map::new());
    };
    if annotations.is_empty()
        && let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut)
    {
        metadata.remove("annotations");
    }
    let text = raw
        .as_str()
        .ok_or_else(|| ConversionError::field(field(), "must be a string"))?;
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ConversionError::field(field(), "must hold a JSON object")),
        Err(e) => Err(ConversionError::field(field(), format!("is not JSON: {e}"))),
    }
}

/// Writes `data` as the conversion data of `object`, unless it is empty.
fn put_conversion_data(
    object: &mut Value,
    data: Map<String, Value>,
) -> Result<(), ConversionError> {
    if data.is_empty() {
        return Ok(());
    }
    let text = Value::Object(data).to_string();
    let metadata = object
        .as_object_mut()
        .ok_or_else(|| ConversionError::field("", "must be an object"))?
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| ConversionError::field("metadata", "must be an object"))?;
    metadata
        .entry("annotations")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| ConversionError::field("metadata.annotations", "must be an object"))?
        .insert(CONVERSION_DATA.to_string(), Value::String(text));
    Ok(())
}

/// `/spec/podSets/0/topologyRequest` as `spec.podSets[0].topologyRequest`.
fn pointer_to_field(pointer: &str) -> String {
    let mut field = String::new();
    for step in pointer.split('/').filter(|s| !s.is_empty()) {
        if step.bytes().all(|b| b.is_ascii_digit()) {
            field.push_str(&format!("[{step}]"));
        } else {
            if !field.is_empty() {
                field.push('.');
            }
            field.push_str(step);
        }
    }
    field
}

/// The number of items of the array at `pointer`, or none when it is absent or not an array.
pub(crate) fn array_len(object: &Value, pointer: &str) -> usize {
    object
        .pointer(pointer)
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}
