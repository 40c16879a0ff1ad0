//! The admission webhook server beside the controller: every replica serves it, leader or not,
//! so the API server's calls succeed whichever pod the Service picks. Its certificate comes from
//! kuota's own management (the Secret, rotated in process) or from files someone else keeps.

use std::net::SocketAddr;
use std::path::PathBuf;

use kube::{Client, ResourceExt};
use tokio::sync::mpsc;
use tokio::task::{JoinHandle, JoinSet};

use super::error::ControllerError;
use super::watches::{metadata_events, shared::SharedWatches};
use crate::clock::Clock;
use crate::jobs::{DEFAULT_LOCAL_QUEUE, DEFAULT_WORKLOAD_PRIORITY_CLASS};
use crate::tls::{self, CertStore, Draining, ServerTls, TlsSettings};
use crate::webhooks::{self, NamespaceView, ViewChange, Webhooks};

/// Changes waiting for the webhooks' namespace view.
const VIEW_DEPTH: usize = 1024;

/// Where the webhook server listens, where its certificate comes from, what it decides with.
#[derive(Clone, Debug)]
pub struct WebhookServing {
    pub addr: SocketAddr,
    pub certificates: CertificateSource,
    pub webhooks: Webhooks,
}

/// Where the serving certificate comes from.
#[derive(Clone, Debug)]
pub enum CertificateSource {
    /// Issued, stored and rotated by kuota (Kueue's `internalCertManagement.enable: true`).
    Managed(Box<TlsSettings>),
    /// `tls.crt` and `tls.key` in a directory someone else keeps current (cert-manager), with
    /// the objects (converted CRDs, visibility APIServices) to keep trusting its `ca.crt`, and
    /// the webhook configurations whose bundles its injector writes, read to know when it has.
    Files {
        dir: PathBuf,
        trusted_by: Box<TlsSettings>,
    },
}

/// The webhook server once started.
pub struct Started {
    /// Whose readiness says whether the API server can call in.
    pub store: CertStore,
    /// What the Pod webhook reads namespaces from; it is ready once listed.
    pub namespaces: NamespaceView,
    /// The server: it ends once draining has started and the calls it took are answered.
    pub server: JoinHandle<Result<(), ControllerError>>,
}

/// Binds the webhook port and starts the server, and its certificate source as tasks of
/// `servers`.
pub async fn start(
    client: &Client,
    serving: WebhookServing,
    tls: ServerTls,
    draining: Draining,
    watches: &mut SharedWatches,
    servers: &mut JoinSet<Result<(), ControllerError>>,
    clock: &Clock,
) -> Result<Started, ControllerError> {
    let store = CertStore::new();
    let mut decide_with = serving.webhooks;
    // The Pod webhook reads namespace labels and default LocalQueues from memory; the shared
    // watches that keep them end with the process, like the server.
    let (changes, received) = mpsc::channel(VIEW_DEPTH);
    watches
        .namespaces
        .subscribe(&changes, |c| ViewChange::Namespaces(metadata_events(c)));
    watches.local_queues.subscribe_to(
        &changes,
        |c| ViewChange::DefaultQueues(metadata_events(c)),
        |queue| queue.name_any() == DEFAULT_LOCAL_QUEUE,
    );
    watches.workload_priority_classes.subscribe_to(
        &changes,
        |c| ViewChange::DefaultClass(metadata_events(c)),
        |class| class.name_any() == DEFAULT_WORKLOAD_PRIORITY_CLASS,
    );
    let (namespaces, applying) = NamespaceView::fed(received);
    decide_with.pods.namespaces = namespaces.clone();
    tokio::spawn(applying);
    let server =
        webhooks::listen(serving.addr, store.resolver(), tls, decide_with, draining).await?;
    let server = tokio::spawn(async move { server.await.map_err(ControllerError::from) });
    match serving.certificates {
        CertificateSource::Managed(settings) => {
            settings.validate()?;
            let (client, store, clock) = (client.clone(), store.clone(), clock.clone());
            servers.spawn(async move {
                match tls::manage(client, *settings, store, clock).await {
                    Err(error) => Err(ControllerError::from(error)),
                }
            });
        }
        CertificateSource::Files { dir, trusted_by } => {
            let (presented, presenting) = (dir.clone(), store.clone());
            servers.spawn(async move {
                match tls::watch_dir(presented, presenting, tls::FILE_CHECK_PERIOD).await {}
            });
            store.await_injection();
            let (client, clock, trusted) = (client.clone(), clock.clone(), store.clone());
            servers.spawn(async move {
                match tls::trust_ca_file(client, *trusted_by, dir, trusted, clock).await {}
            });
        }
    }
    Ok(Started {
        store,
        namespaces,
        server,
    })
}
