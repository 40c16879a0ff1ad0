//! The controller's HTTP endpoints: liveness and readiness probes, and Prometheus metrics.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use tokio::net::TcpListener;

use super::admission::Ready;
use super::error::ControllerError;
use super::metrics::Metrics;
use crate::tls::CertStore;

/// What `/readyz` waits for.
#[derive(Clone, Debug)]
pub struct Readiness {
    /// Every cache holds its first full list.
    pub caches: Ready,
    /// The webhook server's certificate, when this replica serves webhooks: a replica the API
    /// server cannot call yet is not ready, or the Service would route calls that fail.
    pub certificate: Option<CertStore>,
}

impl Readiness {
    /// `Err` says what is still missing.
    pub fn check(&self) -> Result<(), &'static str> {
        if !self.caches.get() {
            return Err("caches are not synced yet");
        }
        match &self.certificate {
            Some(store) if !store.is_ready() => {
                Err("the webhook certificate is not served or not trusted yet")
            }
            _ => Ok(()),
        }
    }
}

/// Where the probes answer.
#[derive(Clone, Debug)]
pub struct ProbePaths {
    /// Kueue's `health.readinessEndpointName` (`/readyz`).
    pub readiness: String,
    /// Kueue's `health.livenessEndpointName`.
    pub liveness: String,
}

/// An endpoint name as a route: Kueue's names start with a slash, a bare name gets one.
fn route(name: &str) -> String {
    format!("/{}", name.trim_start_matches('/'))
}

async fn listen(what: &'static str, addr: SocketAddr) -> Result<TcpListener, ControllerError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| ControllerError::Listen { what, addr, source })
}

/// Binds the probe server; the returned future serves until the process ends. `/<liveness>`
/// answers while the process runs; `/<readiness>` once [`Readiness::check`] passes.
pub async fn health(
    addr: SocketAddr,
    paths: ProbePaths,
    ready: Readiness,
) -> Result<impl Future<Output = Result<(), ControllerError>>, ControllerError> {
    let listener = listen("health probes", addr).await?;
    let app = Router::new()
        .route(&route(&paths.liveness), get(|| async { "ok" }))
        .route(
            &route(&paths.readiness),
            get(move || {
                let ready = ready.clone();
                async move {
                    match ready.check() {
                        Ok(()) => (StatusCode::OK, "ok"),
                        Err(missing) => (StatusCode::SERVICE_UNAVAILABLE, missing),
                    }
                }
            }),
        );
    tracing::info!(%addr, "serving health probes");
    Ok(async move {
        axum::serve(listener, app)
            .await
            .map_err(|source| ControllerError::Serve {
                what: "health probes",
                source,
            })
    })
}

/// Binds the metrics server; the returned future serves `/metrics` until the process ends.
pub async fn metrics(
    addr: SocketAddr,
    metrics: Arc<Metrics>,
) -> Result<impl Future<Output = Result<(), ControllerError>>, ControllerError> {
    let listener = listen("metrics", addr).await?;
    let app = Router::new().route(
        "/metrics",
        get(move || {
            let metrics = metrics.clone();
            async move {
                (
                    [(
                        header::CONTENT_TYPE,
                        "text/plain; version=0.0.4; charset=utf-8",
                    )],
                    metrics.encode(),
                )
                    .into_response()
            }
        }),
    );
    tracing::info!(%addr, "serving metrics");
    Ok(async move {
        axum::serve(listener, app)
            .await
            .map_err(|source| ControllerError::Serve {
                what: "metrics",
                source,
            })
    })
}
