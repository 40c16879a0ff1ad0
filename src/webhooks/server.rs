//! The HTTPS server: TLS over each accepted connection with the certificate the resolver gives for
//! that handshake (so a rotated certificate is served without a restart), HTTP/1.1 as
//! controller-runtime serves webhooks, and one POST route per webhook path.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Json, Response};
use axum::routing::post;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use rustls::ServerConfig;
use rustls::server::ResolvesServerCert;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

use super::endpoints::Endpoint;
use super::error::WebhookError;
use super::review::{self, Verdict};
use super::settings::Webhooks;

/// controller-runtime's limit on an AdmissionReview body: an UPDATE carries two objects.
const MAX_BODY_BYTES: usize = 7 * 1024 * 1024;
/// How long a client may take to complete the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client may take to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(30);
/// Pause after a failed `accept` (e.g. out of file descriptors) before trying again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Binds `addr`; the returned future serves the webhooks until the process ends.
pub async fn listen(
    addr: SocketAddr,
    certs: Arc<dyn ResolvesServerCert>,
    webhooks: Webhooks,
) -> Result<impl Future<Output = Result<(), WebhookError>>, WebhookError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| WebhookError::Listen { addr, source })?;
    tracing::info!(%addr, "serving admission webhooks");
    Ok(serve(listener, certs, webhooks))
}

/// Serves the webhooks on a bound listener until the process ends; fails only if TLS cannot be set
/// up.
pub async fn serve(
    listener: TcpListener,
    certs: Arc<dyn ResolvesServerCert>,
    webhooks: Webhooks,
) -> Result<(), WebhookError> {
    let acceptor = TlsAcceptor::from(Arc::new(tls_config(certs)?));
    let app = router(webhooks);
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::warn!(%error, "accepting a webhook connection failed");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        tokio::spawn(connection(acceptor.clone(), app.clone(), stream, peer));
    }
}

fn tls_config(certs: Arc<dyn ResolvesServerCert>) -> Result<ServerConfig, rustls::Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_cert_resolver(certs);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

async fn connection(acceptor: TlsAcceptor, app: Router, stream: TcpStream, peer: SocketAddr) {
    let tls = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
        Ok(Ok(tls)) => tls,
        Ok(Err(error)) => {
            tracing::debug!(%peer, %error, "webhook TLS handshake failed");
            return;
        }
        Err(_) => {
            tracing::debug!(%peer, "webhook TLS handshake timed out");
            return;
        }
    };
    let served = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(TokioIo::new(tls), TowerToHyperService::new(app))
        .await;
    if let Err(error) = served {
        tracing::debug!(%peer, %error, "webhook connection ended with an error");
    }
}

/// One POST route per webhook path.
fn router(webhooks: Webhooks) -> Router {
    let webhooks = Arc::new(webhooks);
    Endpoint::all()
        .into_iter()
        .fold(Router::new(), |router, endpoint| {
            let webhooks = webhooks.clone();
            router.route(
                &endpoint.path(),
                post(move |body: Bytes| async move { answer(&webhooks, endpoint, &body) }),
            )
        })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

/// The AdmissionReview answering `body`, or `400` when the body is not an AdmissionReview.
fn answer(webhooks: &Webhooks, endpoint: Endpoint, body: &[u8]) -> Response {
    let request = match review::parse(body) {
        Ok(request) => request,
        Err(message) => {
            tracing::debug!(path = %endpoint.path(), %message, "malformed admission request");
            return (StatusCode::BAD_REQUEST, message).into_response();
        }
    };
    let verdict = endpoint.decide(webhooks, &request);
    let outcome = match &verdict {
        Verdict::Allow | Verdict::Patch(_) => "allowed",
        Verdict::Deny(_) => "denied",
        Verdict::Invalid(_) => "unreadable",
    };
    tracing::debug!(
        path = %endpoint.path(),
        uid = %request.uid,
        operation = ?request.operation,
        namespace = request.namespace.as_deref().unwrap_or_default(),
        name = %request.name,
        outcome,
        "admission request"
    );
    Json(review::respond(&request.uid, &verdict)).into_response()
}
