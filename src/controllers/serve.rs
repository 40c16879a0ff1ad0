//! The controller's HTTP endpoints: liveness and readiness probes, and Prometheus metrics — over
//! HTTPS for callers the API server authenticates and authorizes, as Kueue's manager serves them,
//! or over plain HTTP for anyone when asked (`kuota controller --metrics-secure=false`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::future::BoxFuture;
use kube::Client;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use super::admission::Ready;
use super::error::ControllerError;
use super::metrics::Metrics;
use super::metrics_auth::{MetricsAuth, ReviewError};
use crate::clock::Clock;
use crate::tls::{
    CertStore, FILE_CHECK_PERIOD, ServerTls, self_signed_store, serve_https, watch_dir,
};
use crate::webhooks::NamespaceView;

/// The one path the metrics server answers.
const METRICS_PATH: &str = "/metrics";

/// What `/readyz` waits for.
#[derive(Clone, Debug)]
pub struct Readiness {
    /// Every cache holds its first full list.
    pub caches: Ready,
    /// What the Pod webhook reads namespace labels and default LocalQueues from, when this
    /// replica serves webhooks: until it is listed, a pod would be judged without them.
    pub webhook_namespaces: Option<NamespaceView>,
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
        if self
            .webhook_namespaces
            .as_ref()
            .is_some_and(|view| !view.is_listed())
        {
            return Err("the webhooks' namespace cache is not listed yet");
        }
        match &self.certificate {
            Some(store) if !store.serves_trusted() => {
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

/// How the configuration asks for `/metrics` to be served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MetricsSecurity {
    /// Plain HTTP, for anyone (a workstation).
    Plain,
    /// HTTPS with this certificate, callers authenticated and authorized (Kueue's only way).
    Secure(MetricsCertificate),
}

/// Where the metrics server's certificate comes from, as in Kueue's manager.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MetricsCertificate {
    /// Made in memory at startup (with internal cert management).
    SelfSigned,
    /// `tls.crt` and `tls.key` in this directory, read again when they change (cert-manager's
    /// Secret mounted at `/etc/kueue/metrics/certs`).
    Files(PathBuf),
}

impl MetricsServing {
    /// What serves `security`; a certificate read from files is watched by a task of `servers`.
    pub fn start(
        client: &Client,
        security: &MetricsSecurity,
        servers: &mut JoinSet<Result<(), ControllerError>>,
        clock: &Clock,
    ) -> Result<Self, ControllerError> {
        let certificate = match security {
            MetricsSecurity::Plain => return Ok(MetricsServing::Plain),
            MetricsSecurity::Secure(certificate) => certificate,
        };
        let certs = match certificate {
            MetricsCertificate::SelfSigned => self_signed_store(clock.utc())?,
            MetricsCertificate::Files(dir) => {
                let (store, dir) = (CertStore::new(), dir.clone());
                let watched = store.clone();
                servers.spawn(
                    async move { match watch_dir(dir, watched, FILE_CHECK_PERIOD).await {} },
                );
                store
            }
        };
        Ok(MetricsServing::Secure {
            certs,
            auth: Arc::new(MetricsAuth::new(client.clone(), clock.clone())),
        })
    }
}

/// How `/metrics` is served.
pub enum MetricsServing {
    /// Plain HTTP; anyone may read.
    Plain,
    /// HTTPS with this certificate; each caller is reviewed by the API server.
    Secure {
        certs: CertStore,
        auth: Arc<MetricsAuth>,
    },
}

/// Binds the metrics server; the returned future serves `/metrics` until the process ends.
pub async fn metrics(
    addr: SocketAddr,
    metrics: Arc<Metrics>,
    serving: MetricsServing,
    tls: ServerTls,
) -> Result<BoxFuture<'static, Result<(), ControllerError>>, ControllerError> {
    let listener = listen("metrics", addr).await?;
    match serving {
        MetricsServing::Plain => {
            let app = Router::new().route(
                METRICS_PATH,
                get(move || {
                    let metrics = metrics.clone();
                    async move { exposition(&metrics) }
                }),
            );
            tracing::info!(%addr, "serving metrics over plain HTTP to anyone");
            Ok(Box::pin(async move {
                axum::serve(listener, app)
                    .await
                    .map_err(|source| ControllerError::Serve {
                        what: "metrics",
                        source,
                    })
            }))
        }
        MetricsServing::Secure { certs, auth } => {
            let app = Router::new().route(
                METRICS_PATH,
                get(move |method: Method, headers: HeaderMap| {
                    let (metrics, auth) = (metrics.clone(), auth.clone());
                    async move { authorized(&auth, &method, &headers, &metrics).await }
                }),
            );
            tracing::info!(%addr, "serving metrics over HTTPS to authorized callers");
            Ok(Box::pin(async move {
                serve_https(listener, certs.resolver(), &tls, app, "metrics")
                    .await
                    .map_err(ControllerError::MetricsTls)
            }))
        }
    }
}

/// The exposition for a caller the API server lets `get /metrics`, else controller-runtime's
/// refusal.
async fn authorized(
    auth: &MetricsAuth,
    method: &Method,
    headers: &HeaderMap,
    metrics: &Metrics,
) -> Response {
    let verb = method.as_str().to_ascii_lowercase();
    match auth.check(headers, &verb, METRICS_PATH).await {
        Ok(access) => match access.refusal() {
            None => exposition(metrics),
            Some(refusal) => {
                tracing::debug!(?access, "a /metrics request was refused");
                refusal.into_response()
            }
        },
        Err(ReviewError::Throttled) => {
            tracing::debug!("a /metrics caller was not reviewed: too many at once");
            (
                StatusCode::TOO_MANY_REQUESTS,
                [(header::RETRY_AFTER, "1")],
                "Too many requests to authenticate\n",
            )
                .into_response()
        }
        Err(error) => {
            tracing::warn!(%error, "a /metrics caller could not be reviewed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "Authentication or authorization failed\n",
            )
                .into_response()
        }
    }
}

fn exposition(metrics: &Metrics) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        metrics.encode(),
    )
        .into_response()
}

#[cfg(test)]
mod tests;
