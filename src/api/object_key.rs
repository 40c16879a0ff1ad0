//! An object's identity inside the cluster: its namespace and name (Kueue's `NamespacedName`,
//! kube-runtime's `ObjectRef` without the kind). Maps, busy markers and retries are keyed by
//! it, never by an `"ns/name"` string that has to be parsed back.

use std::fmt;

use kube::ResourceExt;

/// A namespaced object's namespace and name; cluster-scoped objects have an empty namespace.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    pub namespace: String,
    pub name: String,
}

impl ObjectKey {
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        ObjectKey {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// The key of an object as read from the API.
    pub fn of<K: ResourceExt>(object: &K) -> Self {
        ObjectKey {
            namespace: object.namespace().unwrap_or_default(),
            name: object.name_any(),
        }
    }
}

/// Written as the API's `namespace/name` (just `name` for a cluster-scoped object), for logs
/// and messages only.
impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            f.write_str(&self.name)
        } else {
            write!(f, "{}/{}", self.namespace, self.name)
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;

    use super::*;

    #[test]
    fn a_key_is_read_from_the_object_and_ordered_by_namespace_then_name() {
        let mut pod = Pod::default();
        pod.metadata.namespace = Some("team-a".into());
        pod.metadata.name = Some("p-1".into());
        let key = ObjectKey::of(&pod);
        assert_eq!(key, ObjectKey::new("team-a", "p-1"));
        assert_eq!(key.to_string(), "team-a/p-1");
        assert_eq!(ObjectKey::new("", "node-1").to_string(), "node-1");
        assert!(ObjectKey::new("a", "z") < ObjectKey::new("b", "a"));
    }
}
