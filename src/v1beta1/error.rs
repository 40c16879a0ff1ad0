//! Why an object could not be converted.

/// Why an object could not be converted: the object, the field and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{object}: {field}: {reason}")]
pub struct ConversionError {
    /// `Kind namespace/name` as far as the object tells them.
    pub object: String,
    /// The field, as a path from the object's root.
    pub field: String,
    pub reason: String,
}

impl ConversionError {
    pub(crate) fn field(field: impl Into<String>, reason: impl Into<String>) -> Self {
        ConversionError {
            object: String::new(),
            field: field.into(),
            reason: reason.into(),
        }
    }
}
