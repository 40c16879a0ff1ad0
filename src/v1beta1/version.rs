//! The two served versions of Kueue's API group.

/// The API group both versions belong to.
pub const GROUP: &str = "kueue.x-k8s.io";

/// A served version of the Kueue API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Version {
    V1beta1,
    V1beta2,
}

impl Version {
    /// The version's name, as in `apiVersion`.
    pub fn name(self) -> &'static str {
        match self {
            Version::V1beta1 => "v1beta1",
            Version::V1beta2 => "v1beta2",
        }
    }

    /// `group/version`, as in an object's `apiVersion`.
    pub fn api_version(self) -> String {
        format!("{GROUP}/{}", self.name())
    }

    /// The version an `apiVersion` names, if it is one of Kueue's.
    pub fn from_api_version(api_version: &str) -> Option<Version> {
        match api_version.strip_prefix(GROUP)?.strip_prefix('/')? {
            "v1beta1" => Some(Version::V1beta1),
            "v1beta2" => Some(Version::V1beta2),
            _ => None,
        }
    }

    pub(crate) fn other(self) -> Version {
        match self {
            Version::V1beta1 => Version::V1beta2,
            Version::V1beta2 => Version::V1beta1,
        }
    }
}
