//! Kueue's visibility API server (`visibility.kueue.x-k8s.io`), served by every replica behind
//! the API server's aggregation layer: the API server authenticates and authorizes each call,
//! then proxies it here with its front-proxy client certificate, which is the only client this
//! server accepts ([`crate::tls::FrontProxy`], its CA read from
//! `kube-system/extension-apiserver-authentication` and read again every minute so a rotated
//! CA is picked up). The lists come from the admission loop's engine (`routes.rs` asks,
//! `admission/pending_queries.rs` answers).

mod routes;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::{Api, Client};
use rustls::server::ResolvesServerCert;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::admission::pending_queries::PendingQuery;
use super::error::ControllerError;
use crate::tls::{CONFIG_MAP_NAME, CONFIG_MAP_NAMESPACE, FrontProxy, ServerTls, Trust};

/// How often the front proxy's CA is read again.
const TRUST_PERIOD: Duration = Duration::from_secs(60);
/// How soon it is read again while none could be read.
const TRUST_RETRY: Duration = Duration::from_secs(5);
const WHAT: &str = "the visibility API";

/// Binds `addr` and starts the server and the reading of its front proxy's CA as tasks of
/// `servers`. Calls go to the admission loop through `queries`.
pub async fn start(
    client: &Client,
    addr: SocketAddr,
    certs: Arc<dyn ResolvesServerCert>,
    tls: ServerTls,
    queries: mpsc::Sender<PendingQuery>,
    servers: &mut JoinSet<Result<(), ControllerError>>,
) -> Result<(), ControllerError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| ControllerError::Listen {
            what: WHAT,
            addr,
            source,
        })?;
    tracing::info!(%addr, "serving the visibility API");
    let front_proxy = Arc::new(FrontProxy::new(tls.provider().clone()));
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), CONFIG_MAP_NAMESPACE);
    tokio::spawn(read_trust(config_maps, front_proxy.clone()));
    servers.spawn(async move {
        crate::tls::serve_https_to(
            listener,
            certs,
            front_proxy,
            &tls,
            routes::router(queries),
            WHAT,
        )
        .await
        .map_err(ControllerError::VisibilityTls)
    });
    Ok(())
}

/// Keeps `front_proxy` trusting what the ConfigMap says, for as long as the process runs.
async fn read_trust(config_maps: Api<ConfigMap>, front_proxy: Arc<FrontProxy>) {
    let mut read: Option<std::collections::BTreeMap<String, String>> = None;
    loop {
        let wait = match config_maps.get_opt(CONFIG_MAP_NAME).await {
            Ok(Some(map)) => {
                let data = map.data.unwrap_or_default();
                if read.as_ref() != Some(&data) {
                    match Trust::from_data(&data, front_proxy.provider()) {
                        Ok(trust) => {
                            tracing::info!(?trust, "trusting the API server's front proxy");
                            front_proxy.install(trust);
                        }
                        Err(error) => {
                            tracing::warn!(%error, "the visibility API accepts no caller")
                        }
                    }
                    read = Some(data);
                }
                TRUST_PERIOD
            }
            Ok(None) => {
                tracing::warn!(
                    "ConfigMap {CONFIG_MAP_NAMESPACE}/{CONFIG_MAP_NAME} is absent; the \
                     visibility API accepts no caller"
                );
                TRUST_RETRY
            }
            Err(error) => {
                tracing::warn!(
                    %error,
                    "cannot read ConfigMap {CONFIG_MAP_NAMESPACE}/{CONFIG_MAP_NAME} (is kuota \
                     bound to Role extension-apiserver-authentication-reader?)"
                );
                TRUST_RETRY
            }
        };
        tokio::time::sleep(wait).await;
    }
}
