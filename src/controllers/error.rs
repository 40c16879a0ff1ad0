//! Why the controller stopped.

use std::net::SocketAddr;

#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    #[error("cannot listen for {what} on {addr}: {source}")]
    Listen {
        what: &'static str,
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("serving {what} failed: {source}")]
    Serve {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the watches did not deliver their first lists within controller.cacheSyncTimeout \
         ({0:?}); the watch errors logged before say why"
    )]
    CacheSyncTimeout(std::time::Duration),
    #[error("the admission loop stopped")]
    LoopStopped,
    #[error("{task} panicked: {message}")]
    Panicked { task: &'static str, message: String },
    #[error("{task} was cancelled")]
    Cancelled { task: &'static str },
    #[error("leadership of Lease {lease} lost")]
    LostLeadership { lease: String },
    #[error(transparent)]
    Webhooks(#[from] crate::webhooks::WebhookError),
    #[error("webhook certificates: {0}")]
    Certificates(#[from] crate::tls::TlsError),
    #[error("cannot set up TLS for the metrics server: {0}")]
    MetricsTls(#[source] rustls::Error),
    #[error("cannot set up TLS for the visibility API server: {0}")]
    VisibilityTls(#[source] rustls::Error),
}
