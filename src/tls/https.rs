//! An HTTPS server for an axum router: TLS over each accepted connection with the certificate the
//! resolver gives for that handshake (so a rotated certificate is served without a restart), then
//! HTTP/1.1, as controller-runtime serves its webhook and metrics servers.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use rustls::server::ResolvesServerCert;
use rustls::server::danger::ClientCertVerifier;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

use super::options::ServerTls;

/// How long a client may take to complete the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client may take to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(30);
/// Pause after a failed `accept` (e.g. out of file descriptors) before trying again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Serves `app` over TLS (as `tls` sets it up) on a bound listener until the process ends;
/// fails only if TLS cannot be set up. `what` names the server in logs.
pub async fn serve_https(
    listener: TcpListener,
    certs: Arc<dyn ResolvesServerCert>,
    tls: &ServerTls,
    app: Router,
    what: &'static str,
) -> Result<(), rustls::Error> {
    serve_tls(listener, tls.server_config(certs, None)?, app, what).await
}

/// As [`serve_https`], for clients `clients` accepts only: the handshake fails for any other.
pub async fn serve_https_to(
    listener: TcpListener,
    certs: Arc<dyn ResolvesServerCert>,
    clients: Arc<dyn ClientCertVerifier>,
    tls: &ServerTls,
    app: Router,
    what: &'static str,
) -> Result<(), rustls::Error> {
    serve_tls(
        listener,
        tls.server_config(certs, Some(clients))?,
        app,
        what,
    )
    .await
}

async fn serve_tls(
    listener: TcpListener,
    config: rustls::ServerConfig,
    app: Router,
    what: &'static str,
) -> Result<(), rustls::Error> {
    let acceptor = TlsAcceptor::from(Arc::new(config));
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::warn!(%error, what, "accepting a connection failed");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        tokio::spawn(connection(
            acceptor.clone(),
            app.clone(),
            stream,
            peer,
            what,
        ));
    }
}

async fn connection(
    acceptor: TlsAcceptor,
    app: Router,
    stream: TcpStream,
    peer: SocketAddr,
    what: &'static str,
) {
    let tls = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
        Ok(Ok(tls)) => tls,
        Ok(Err(error)) => {
            tracing::debug!(%peer, %error, what, "TLS handshake failed");
            return;
        }
        Err(_) => {
            tracing::debug!(%peer, what, "TLS handshake timed out");
            return;
        }
    };
    let served = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(TokioIo::new(tls), TowerToHyperService::new(app))
        .await;
    if let Err(error) = served {
        tracing::debug!(%peer, %error, what, "connection ended with an error");
    }
}
