//! The webhook server: one POST route per webhook path, served over HTTPS
//! ([`crate::tls::serve_https_until`]) as controller-runtime serves webhooks, each call's body read
//! within the bounds [`super::intake`] sets.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::post;
use rustls::server::ResolvesServerCert;
use tokio::net::TcpListener;

use super::conversion;
use super::endpoints::Endpoint;
use super::error::WebhookError;
use super::intake::Intake;
use super::review::{self, Verdict};
use super::settings::Webhooks;
use crate::tls::{Draining, ServerTls, serve_https_until};

/// Binds `addr`; the returned future serves the webhooks until `draining` starts and the calls
/// taken are answered.
pub async fn listen(
    addr: SocketAddr,
    certs: Arc<dyn ResolvesServerCert>,
    tls: ServerTls,
    webhooks: Webhooks,
    draining: Draining,
) -> Result<impl Future<Output = Result<(), WebhookError>>, WebhookError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| WebhookError::Listen { addr, source })?;
    tracing::info!(%addr, "serving admission webhooks");
    Ok(serve(listener, certs, tls, webhooks, draining))
}

/// Serves the webhooks on a bound listener until `draining` starts and the calls taken are
/// answered; fails only if TLS cannot be set up.
pub async fn serve(
    listener: TcpListener,
    certs: Arc<dyn ResolvesServerCert>,
    tls: ServerTls,
    webhooks: Webhooks,
    draining: Draining,
) -> Result<(), WebhookError> {
    Ok(serve_https_until(
        listener,
        certs,
        &tls,
        routes(webhooks),
        "admission webhooks",
        draining,
    )
    .await?)
}

/// One POST route per webhook path, and the CRD conversion webhook's, all drawing on one
/// [`Intake`]: what [`serve`] serves over HTTPS, and what the fuzz tests call in process.
pub fn routes(webhooks: Webhooks) -> Router {
    let webhooks = Arc::new(webhooks);
    let intake = Intake::default();
    let (converting, reading) = (webhooks.clone(), intake.clone());
    let conversion = Router::new().route(
        conversion::PATH,
        post(move |request: Request<Body>| async move {
            match reading.read(request).await {
                Ok((body, _held)) => convert(&converting, &body),
                Err(refusal) => refusal.into_response(),
            }
        }),
    );
    Endpoint::all()
        .into_iter()
        .fold(conversion, |router, endpoint| {
            let (webhooks, intake) = (webhooks.clone(), intake.clone());
            router.route(
                &endpoint.path(),
                post(move |request: Request<Body>| async move {
                    match intake.read(request).await {
                        Ok((body, _held)) => answer(&webhooks, endpoint, &body),
                        Err(refusal) => {
                            let room = intake.room();
                            tracing::debug!(path = %endpoint.path(), ?refusal, room, "call not read");
                            refusal.into_response()
                        }
                    }
                }),
            )
        })
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
