//! The JSONPatch (RFC 6902) from one JSON document to another, for changes computed on a typed
//! object (a defaulting webhook's, a Job started or stopped): the patch is computed between the
//! object as read and the object as changed, both written through the same types, so fields the
//! types do not know (a newer API server's) appear on neither side and the patch never touches
//! them — what controller-runtime's lossless defaulter achieves for Kueue.

use serde::Serialize;
use serde_json::Value;

/// One JSONPatch (RFC 6902) operation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PatchOp {
    pub op: &'static str,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
}

impl PatchOp {
    pub fn add(path: impl Into<String>, value: Value) -> Self {
        PatchOp {
            op: "add",
            path: path.into(),
            value: Some(value),
        }
    }

    pub fn remove(path: impl Into<String>) -> Self {
        PatchOp {
            op: "remove",
            path: path.into(),
            value: None,
        }
    }

    /// Fails the whole patch unless the member at `path` equals `value`: a write fenced by what
    /// was read (`/metadata/resourceVersion`).
    pub fn test(path: impl Into<String>, value: Value) -> Self {
        PatchOp {
            op: "test",
            path: path.into(),
            value: Some(value),
        }
    }
}

/// Operations turning `old` into `new`: objects are compared key by key, anything else (arrays
/// included) is replaced as a whole. `add` also replaces an existing member (RFC 6902 4.1), so
/// a value present in the request as `null` is written over.
pub fn diff(old: &Value, new: &Value) -> Vec<PatchOp> {
    let mut ops = Vec::new();
    walk(&mut String::new(), old, new, &mut ops);
    ops
}

fn walk(path: &mut String, old: &Value, new: &Value, ops: &mut Vec<PatchOp>) {
    match (old, new) {
        (Value::Object(old), Value::Object(new)) => {
            for (key, old_value) in old {
                let len = path.len();
                push_token(path, key);
                match new.get(key) {
                    Some(new_value) => walk(path, old_value, new_value, ops),
                    None => ops.push(PatchOp::remove(path.clone())),
                }
                path.truncate(len);
            }
            for (key, new_value) in new.iter().filter(|(key, _)| !old.contains_key(*key)) {
                let len = path.len();
                push_token(path, key);
                ops.push(PatchOp::add(path.clone(), new_value.clone()));
                path.truncate(len);
            }
        }
        (old, new) if old == new => {}
        (_, new) => ops.push(PatchOp::add(path.clone(), new.clone())),
    }
}

/// Appends `/key` with JSON Pointer's escapes (`~` as `~0`, `/` as `~1`): label keys such as
/// `kueue.x-k8s.io/managed` hold a slash.
fn push_token(path: &mut String, key: &str) {
    path.push('/');
    path.push_str(&key.replace('~', "~0").replace('/', "~1"));
}

#[cfg(test)]
mod tests;
