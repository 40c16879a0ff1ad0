//! Input the engine refuses, with the object, field and reason named.

use thiserror::Error;

/// A snapshot the engine cannot work with. Configuration that Kueue tolerates at run time (a missing
/// LocalQueue, ClusterQueue or Cohort, a namespace the ClusterQueue does not select, a cohort cycle)
/// is not an error: it leaves workloads pending with a reason instead.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ModelError {
    /// Two objects of one kind share a name.
    #[error("{kind} {name:?} appears more than once")]
    Duplicate { kind: &'static str, name: String },
    /// A field holds a value the API would reject.
    #[error("{kind} {name:?}: field {field}: {reason}")]
    InvalidField {
        kind: &'static str,
        name: String,
        field: String,
        reason: String,
    },
}

impl ModelError {
    /// An [`ModelError::InvalidField`].
    pub fn invalid(
        kind: &'static str,
        name: impl Into<String>,
        field: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        ModelError::InvalidField {
            kind,
            name: name.into(),
            field: field.into(),
            reason: reason.into(),
        }
    }
}
