//! The webhook server: one POST route per webhook path, served over HTTPS
//! ([`crate::tls::serve_https`]) as controller-runtime serves webhooks.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Json, Response};
use axum::routing::post;
use rustls::server::ResolvesServerCert;
use tokio::net::TcpListener;

use super::conversion;
use super::endpoints::Endpoint;
use super::error::WebhookError;
use super::review::{self, Verdict};
use super::settings::Webhooks;
use crate::tls::{ServerTls, serve_https};

/// controller-runtime's limit on an AdmissionReview body: an UPDATE carries two objects.
const MAX_BODY_BYTES: usize = 7 * 1024 * 1024;

/// Binds `addr`; the returned future serves the webhooks until the process ends.
pub async fn listen(
    addr: SocketAddr,
    certs: Arc<dyn ResolvesServerCert>,
    tls: ServerTls,
    webhooks: Webhooks,
) -> Result<impl Future<Output = Result<(), WebhookError>>, WebhookError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| WebhookError::Listen { addr, source })?;
    tracing::info!(%addr, "serving admission webhooks");
    Ok(serve(listener, certs, tls, webhooks))
}

/// Serves the webhooks on a bound listener until the process ends; fails only if TLS cannot be set
/// up.
pub async fn serve(
    listener: TcpListener,
    certs: Arc<dyn ResolvesServerCert>,
    tls: ServerTls,
    webhooks: Webhooks,
) -> Result<(), WebhookError> {
    Ok(serve_https(
        listener,
        certs,
        &tls,
        router(webhooks),
        "admission webhooks",
    )
    .await?)
}

/// One POST route per webhook path, and the CRD conversion webhook's.
fn router(webhooks: Webhooks) -> Router {
    let webhooks = Arc::new(webhooks);
    let converting = webhooks.clone();
    let conversion = Router::new().route(
        conversion::PATH,
        post(move |body: Bytes| async move { convert(&converting, &body) }),
    );
    Endpoint::all()
        .into_iter()
        .fold(conversion, |router, endpoint| {
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

/// The ConversionReview answering `body`, or `400` when the body is not a ConversionReview.
fn convert(webhooks: &Webhooks, body: &[u8]) -> Response {
    match conversion::review(body, &webhooks.gates) {
        Ok(review) => {
            let status = review.pointer("/response/result/status").cloned();
            tracing::debug!(path = conversion::PATH, ?status, "conversion request");
            Json(review).into_response()
        }
        Err(message) => {
            tracing::debug!(path = conversion::PATH, %message, "malformed conversion request");
            (StatusCode::BAD_REQUEST, message).into_response()
        }
    }
}
