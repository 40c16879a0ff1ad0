//! The strategic merge patch the trainer applies to a runtime's JobSet spec with each of a
//! TrainJob's `spec.runtimePatches`, and to the trainer container's resources with
//! `spec.trainer.resourcesPerNode`: maps merge, a `null` removes its key, lists merge item by
//! item on their Kubernetes merge key, and every other list is replaced.
//!
//! Only the fields a runtime patch can hold (the trainer's `JobSetSpecPatch`) need a merge key.

use serde_json::{Map, Value};

/// The merge key of a list field, by the field's name, for the lists a runtime patch reaches
/// (`patchMergeKey` of the JobSet and core API types).
fn merge_key(field: &str) -> Option<&'static str> {
    match field {
        "replicatedJobs" | "containers" | "initContainers" | "env" | "volumes"
        | "schedulingGates" | "imagePullSecrets" => Some("name"),
        "volumeMounts" => Some("mountPath"),
        _ => None,
    }
}

/// Merges `patch` into `target`.
pub fn strategic_merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => merge_maps(target, patch),
        (target, patch) => *target = patch.clone(),
    }
}

fn merge_maps(target: &mut Map<String, Value>, patch: &Map<String, Value>) {
    for (field, value) in patch {
        match (value, target.get_mut(field)) {
            (Value::Null, _) => {
                target.remove(field);
            }
            (Value::Array(items), Some(Value::Array(existing))) => match merge_key(field) {
                Some(key) => merge_lists(existing, items, key),
                None => *existing = items.clone(),
            },
            (Value::Object(patch), Some(existing @ Value::Object(_))) => {
                if let Value::Object(existing) = existing {
                    merge_maps(existing, patch);
                }
            }
            (value, _) => {
                target.insert(field.clone(), value.clone());
            }
        }
    }
}

/// Items of `patch` merged into the item of `existing` with the same key, the others appended.
fn merge_lists(existing: &mut Vec<Value>, patch: &[Value], key: &str) {
    for item in patch {
        let wanted = item.get(key);
        match existing
            .iter_mut()
            .find(|e| wanted.is_some() && e.get(key) == wanted)
        {
            Some(found) => strategic_merge(found, item),
            None => existing.push(item.clone()),
        }
    }
}

#[cfg(test)]
mod tests;
