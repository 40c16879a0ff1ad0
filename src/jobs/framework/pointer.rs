//! Reading fields of a job's JSON by JSON pointer (RFC 6901), for the kinds' rules.

use kube::api::DynamicObject;
use serde_json::Value;

use crate::api::CONDITION_TRUE;

/// The string at `pointer`, if it is one.
pub fn str_at<'a>(job: &'a DynamicObject, pointer: &str) -> Option<&'a str> {
    job.data.pointer(pointer).and_then(Value::as_str)
}

/// The boolean at `pointer`, if it is one.
pub fn bool_at(job: &DynamicObject, pointer: &str) -> Option<bool> {
    job.data.pointer(pointer).and_then(Value::as_bool)
}

/// The integer at `pointer`, if it is one that fits an `i32`.
pub fn i32_at(job: &DynamicObject, pointer: &str) -> Option<i32> {
    job.data
        .pointer(pointer)
        .and_then(Value::as_i64)
        .and_then(|n| i32::try_from(n).ok())
}

/// The message of the first condition in the list at `pointer` whose type is one of `types` and
/// whose status is `True`, with that type.
pub fn true_condition<'a>(
    job: &'a DynamicObject,
    pointer: &str,
    types: &[&'a str],
) -> Option<(&'a str, &'a str)> {
    job.data
        .pointer(pointer)?
        .as_array()?
        .iter()
        .find_map(|condition| {
            let type_ = condition.get("type")?.as_str()?;
            let wanted = types.iter().find(|t| **t == type_)?;
            (condition.get("status")?.as_str()? == CONDITION_TRUE).then(|| {
                let message = condition.get("message").and_then(Value::as_str);
                (*wanted, message.unwrap_or_default())
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(data: Value) -> DynamicObject {
        DynamicObject {
            types: None,
            metadata: Default::default(),
            data,
        }
    }

    #[test]
    fn reads_typed_fields_and_refuses_other_types() {
        let j = job(
            serde_json::json!({"spec": {"suspend": true, "replicas": 3, "name": "x", "big": 1_i64 << 40}}),
        );
        assert_eq!(bool_at(&j, "/spec/suspend"), Some(true));
        assert_eq!(i32_at(&j, "/spec/replicas"), Some(3));
        assert_eq!(i32_at(&j, "/spec/big"), None);
        assert_eq!(str_at(&j, "/spec/name"), Some("x"));
        assert_eq!(str_at(&j, "/spec/replicas"), None);
        assert_eq!(bool_at(&j, "/spec/missing"), None);
    }

    #[test]
    fn finds_the_first_true_condition_of_the_types_asked() {
        let j = job(serde_json::json!({"status": {"conditions": [
            {"type": "Failed", "status": "False", "message": "no"},
            {"type": "Completed", "status": "True", "message": "all done"},
        ]}}));
        let found = true_condition(&j, "/status/conditions", &["Failed", "Completed"]);
        assert_eq!(found, Some(("Completed", "all done")));
        assert_eq!(true_condition(&j, "/status/conditions", &["Failed"]), None);
    }
}
