//! The rule violations found in one object, each naming the object, the field and the reason.

use crate::engine::ModelError;

/// Violations collected for one object; a webhook reports all of them, as Kueue does.
#[derive(Debug)]
pub struct Findings {
    kind: &'static str,
    name: String,
    errors: Vec<ModelError>,
}

impl Findings {
    pub fn new(kind: &'static str, name: impl Into<String>) -> Self {
        Findings {
            kind,
            name: name.into(),
            errors: Vec::new(),
        }
    }

    pub fn kind(&self) -> &'static str {
        self.kind
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Records that `field` breaks a rule for `reason`.
    pub fn add(&mut self, field: impl Into<String>, reason: impl Into<String>) {
        self.errors
            .push(ModelError::invalid(self.kind, &self.name, field, reason));
    }

    /// Records the error a shared conversion or check returned, if any.
    pub fn check(&mut self, result: Result<(), ModelError>) {
        if let Err(error) = result {
            self.errors.push(error);
        }
    }

    pub fn into_errors(self) -> Vec<ModelError> {
        self.errors
    }
}
