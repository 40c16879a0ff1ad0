//! Why the webhook server could not start.

use std::net::SocketAddr;

#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    #[error("cannot listen for admission webhooks on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot set up TLS for the admission webhooks: {0}")]
    Tls(#[from] rustls::Error),
}
