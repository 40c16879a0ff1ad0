//! Why a configuration was refused. Messages name the field path and the reason, in the shape
//! Kubernetes field errors take (`waitForPodsReady.timeout: Invalid value: "-5m0s": ...`).

use std::fmt;
use std::path::PathBuf;

use thiserror::Error;

use crate::engine::features::FeatureGateError;

/// A configuration that cannot be used; the controller does not start.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// Wraps any other error with the `--config` file it came from.
    #[error("--config {path}: {source}", path = path.display())]
    InFile {
        path: PathBuf,
        source: Box<ConfigError>,
    },
    #[error("reading the file: {0}")]
    Read(#[source] std::io::Error),
    /// The YAML does not decode strictly into the configuration's version: syntax errors, unknown
    /// or duplicated fields, wrong types. `path` is the dotted path of the offending field.
    #[error("{message}")]
    Decode { path: String, message: String },
    #[error("Object 'Kind' is missing; expected kind: Configuration")]
    MissingKind,
    #[error("Object 'apiVersion' is missing; expected config.kueue.x-k8s.io/v1beta2 or v1beta1")]
    MissingApiVersion,
    #[error(
        "no kind {kind:?} is registered for version {api_version:?}; expected kind Configuration \
         of config.kueue.x-k8s.io/v1beta2 or config.kueue.x-k8s.io/v1beta1"
    )]
    UnsupportedType { api_version: String, kind: String },
    #[error("featureGates: feature gates for CLI and configuration cannot both specified")]
    FeatureGateSourcesConflict,
    /// A gate in `--feature-gates` (`field` is `--feature-gates`) or in the file's `featureGates`.
    #[error("{field}: {source}")]
    FeatureGate {
        field: &'static str,
        source: FeatureGateError,
    },
    /// Startup validation failed; every failing field is listed.
    #[error("{}", FieldErrors(.0))]
    Invalid(Vec<FieldError>),
    /// A `tls` block Kueue accepts of which kuota can serve nothing.
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsOptionsError),
    #[error("bind address {address:?}: {reason}")]
    BindAddress { address: String, reason: String },
}

/// One field that fails startup validation, in Kubernetes' field-error forms.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum FieldError {
    #[error("{field}: Required value: {detail}")]
    Required { field: String, detail: String },
    #[error("{field}: Invalid value: {value}: {detail}")]
    Invalid {
        field: String,
        value: String,
        detail: String,
    },
    #[error("{field}: Unsupported value: {value}: supported values: {}", quoted(.supported))]
    NotSupported {
        field: String,
        value: String,
        supported: Vec<String>,
    },
    #[error("{field}: Duplicate value: {value:?}")]
    Duplicate { field: String, value: String },
    /// A field of Kueue's that kuota refuses to run with.
    #[error("{field}: Forbidden: {detail}")]
    Forbidden { field: String, detail: String },
}

impl FieldError {
    /// The dotted path of the field.
    pub fn field(&self) -> &str {
        match self {
            FieldError::Required { field, .. }
            | FieldError::Invalid { field, .. }
            | FieldError::NotSupported { field, .. }
            | FieldError::Duplicate { field, .. }
            | FieldError::Forbidden { field, .. } => field,
        }
    }
}

fn quoted(values: &[String]) -> String {
    values
        .iter()
        .map(|v| format!("{v:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

struct FieldErrors<'a>(&'a [FieldError]);

impl fmt::Display for FieldErrors<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}
