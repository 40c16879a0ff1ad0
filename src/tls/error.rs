//! Why certificate management could not do its part.

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("TLS settings: {0}")]
    Settings(String),
    #[error("generating {what}: {source}")]
    Generate {
        what: &'static str,
        #[source]
        source: rcgen::Error,
    },
    #[error("{what} just made is unusable: {reason}")]
    Unusable { what: &'static str, reason: String },
    #[error("{verb} {object}: {source}")]
    Api {
        verb: &'static str,
        object: String,
        #[source]
        source: kube::Error,
    },
    #[error("{verb} {object} took too long")]
    Timeout { verb: &'static str, object: String },
    #[error("{object} does not exist{hint}")]
    Absent { object: String, hint: &'static str },
    #[error("{object} changed on every one of {attempts} attempts to write it")]
    Contended { object: String, attempts: usize },
}

impl TlsError {
    /// Whether trying again cannot help: the settings or this build are at fault, not the cluster.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            TlsError::Settings(_) | TlsError::Generate { .. } | TlsError::Unusable { .. }
        )
    }
}
