//! An HTTPS server for an axum router: TLS over each accepted connection with the certificate the
//! resolver gives for that handshake (so a rotated certificate is served without a restart), then
//! HTTP/1.1, as controller-runtime serves its webhook and metrics servers. Connections are
//! bounded in all and per peer ([`super::connections`]); the handshake and each request's headers
//! (which also bounds how long an idle kept-alive connection is held, longer than the API server
//! holds it) have deadlines. A server
//! told to drain ([`Draining`]) accepts nothing more, answers the calls it has, closes its idle
//! connections and returns.

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
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;

use super::connections::{
    ConnectionGate, ConnectionPermit, MAX_CONNECTIONS, MAX_CONNECTIONS_PER_PEER,
};
use super::options::ServerTls;

/// How long a client may take to complete the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a connection may wait for a request's headers, the wait of an idle kept-alive
/// connection for its next request included. Longer than the API server keeps an idle connection
/// to a webhook (Go's `http.Transport`, 90 s; controller-runtime's server keeps them as long): a
/// server that closes one first races the API server reusing it, and a review POSTed on a
/// connection closed under it fails without a retry, failing the user's call when the webhook
/// fails closed.
const HEADER_TIMEOUT: Duration = Duration::from_secs(120);
/// Pause after a failed `accept` (e.g. out of file descriptors) before trying again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Tells a server when to drain.
#[derive(Clone, Debug)]
pub struct Draining(watch::Receiver<bool>);

impl Draining {
    /// A handle that starts the draining, and the server's side.
    pub fn channel() -> (watch::Sender<bool>, Draining) {
        let (start, draining) = watch::channel(false);
        (start, Draining(draining))
    }

    /// A server that drains only when the process ends.
    pub fn never() -> Draining {
        Draining::channel().1
    }

    /// Resolves once draining has started; never if the handle is dropped before.
    async fn started(&mut self) {
        if self.0.wait_for(|drain| *drain).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// Serves `app` over TLS (as `tls` sets it up) on a bound listener until the process ends;
/// fails only if TLS cannot be set up. `what` names the server in logs.
pub async fn serve_https(
    listener: TcpListener,
    certs: Arc<dyn ResolvesServerCert>,
    tls: &ServerTls,
    app: Router,
    what: &'static str,
) -> Result<(), rustls::Error> {
    serve_https_until(listener, certs, tls, app, what, Draining::never()).await
}

/// As [`serve_https`], returning once `draining` has started and every call taken was answered.
pub async fn serve_https_until(
    listener: TcpListener,
    certs: Arc<dyn ResolvesServerCert>,
    tls: &ServerTls,
    app: Router,
    what: &'static str,
    draining: Draining,
) -> Result<(), rustls::Error> {
    serve_tls(
        listener,
        tls.server_config(certs, None)?,
        app,
        what,
        draining,
    )
    .await
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
        Draining::never(),
    )
    .await
}

async fn serve_tls(
    listener: TcpListener,
    config: rustls::ServerConfig,
    app: Router,
    what: &'static str,
    mut draining: Draining,
) -> Result<(), rustls::Error> {
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let gate = ConnectionGate::new(MAX_CONNECTIONS, MAX_CONNECTIONS_PER_PEER);
    let mut connections = JoinSet::new();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(%error, what, "accepting a connection failed");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
            Some(joined) = connections.join_next() => {
                rethrow_panic(joined);
                continue;
            }
            () = draining.started() => break,
        };
        let Some(permit) = gate.admit(peer.ip()) else {
            tracing::debug!(%peer, what, held = gate.held(), "too many connections; closed");
            continue;
        };
        connections.spawn(connection(
            acceptor.clone(),
            app.clone(),
            stream,
            peer,
            what,
            permit,
            draining.clone(),
        ));
    }
    drop(listener);
    tracing::info!(what, connections = connections.len(), "draining");
    while let Some(joined) = connections.join_next().await {
        rethrow_panic(joined);
    }
    Ok(())
}

/// Carries a connection task's panic on into the server's task, which the controller waits on.
fn rethrow_panic(joined: Result<(), tokio::task::JoinError>) {
    if let Err(error) = joined
        && let Ok(payload) = error.try_into_panic()
    {
        std::panic::resume_unwind(payload);
    }
}

async fn connection(
    acceptor: TlsAcceptor,
    app: Router,
    stream: TcpStream,
    peer: SocketAddr,
    what: &'static str,
    _held: ConnectionPermit,
    mut draining: Draining,
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
    let serving = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(TokioIo::new(tls), TowerToHyperService::new(app));
    tokio::pin!(serving);
    let served = tokio::select! {
        served = serving.as_mut() => served,
        () = draining.started() => {
            // The call being answered is finished; an idle connection closes at once.
            serving.as_mut().graceful_shutdown();
            serving.await
        }
    };
    if let Err(error) = served {
        tracing::debug!(%peer, %error, what, "connection ended with an error");
    }
}
