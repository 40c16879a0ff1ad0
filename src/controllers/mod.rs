//! The controller: watches feed the state caches, one admission loop decides and hands its
//! decisions to the writer, a node-health loop tells it which assigned nodes failed, and the probes, metrics and admission webhooks are served beside
//! them. `kuota
//! controller` builds its [`Settings`] from Kueue's configuration file and calls [`run`].

pub mod admission;
mod class_values;
mod error;
pub mod events;
pub mod jobs;
pub mod leader;
pub mod leaderworkersets;
pub mod metrics;
mod metrics_auth;
mod metrics_feed;
pub mod node_health;
pub mod panics;
pub mod pods;
mod provisioning;
pub mod queue_gauges;
pub mod queue_status;
mod retention;
mod serve;
pub mod statefulsets;
mod storage_migration;
mod topology_ungater;
mod visibility;
pub mod watches;
mod webhook_serving;
pub mod work_queue;
pub mod writer;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use kube::Client;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

pub use error::ControllerError;
pub use serve::{MetricsCertificate, MetricsSecurity, ProbePaths};
pub use webhook_serving::{CertificateSource, WebhookServing};

use self::admission::task::AdmissionInputs;
use self::admission::{AdmissionLoop, Ready};
use self::events::EventSink;
use self::leader::{Candidate, LeaseSettings, Tenure};
use self::metrics::{BuildInfo, Metrics, MetricsOptions, ReplicaRole};
use self::metrics_feed::MetricsFeed;
use self::writer::Writer;
use crate::api::keys::field_managers;
use crate::clock::Clock;
use crate::engine::model::EngineConfig;
use crate::state::ClusterState;
use crate::tls::Draining;

/// Watch changes waiting for the admission loop; a full channel slows the watches down.
const INPUT_DEPTH: usize = 4096;
/// Visibility API calls waiting for the admission loop; a full channel makes callers wait.
const QUERY_DEPTH: usize = 64;
/// How long a stopping replica waits for its webhook calls in flight: within the chart's grace
/// period (10 s, Kueue's) after its preStop wait (5 s).
const DRAIN_LIMIT: Duration = Duration::from_secs(4);

/// What the controller runs with.
#[derive(Clone, Debug)]
pub struct Settings {
    pub engine: EngineConfig,
    /// Probe address and paths; `None` serves no probes.
    pub health: Option<(SocketAddr, ProbePaths)>,
    /// `None` serves no metrics.
    pub metrics_addr: Option<SocketAddr>,
    /// HTTPS with authentication and authorization (Kueue's way), or plain HTTP.
    pub metrics_security: MetricsSecurity,
    pub metrics: MetricsOptions,
    /// Client-side limit on writes, as Kueue's `clientConnection` (negative `qps`: none).
    pub qps: f32,
    pub burst: i32,
    /// Kueue's `waitForPodsReady`: an admitted Workload whose pods are not all ready in time is
    /// evicted and requeued after a backoff; with `blockAdmission` nothing else is admitted
    /// meanwhile. `None`: nobody is held to becoming ready.
    pub wait_for_pods_ready: Option<crate::config::WaitForPodsReady>,
    /// This replica's name on the events it records (the pod name in a cluster).
    pub instance: Option<String>,
    /// Leader election; `None` runs alone (Kueue's `leaderElect: false`).
    pub leader: Option<LeaseSettings>,
    /// The admission webhook server; `None` serves no webhooks.
    pub webhooks: Option<WebhookServing>,
    /// The batch/v1 Job integration; `None` when `integrations.frameworks` leaves it out.
    pub jobs: Option<jobs::JobSettings>,
    /// The framework kinds' integrations (JobSet, Kubeflow, AppWrapper, ...); `None` when
    /// `integrations.frameworks` enables none of them.
    pub frameworks: Option<jobs::frameworks::FrameworkSettings>,
    /// The plain-pod integration; `None` when `integrations.frameworks` leaves `pod` out.
    pub pods: Option<pods::PodSettings>,
    /// The `statefulset` integration, when enabled.
    pub statefulsets: Option<statefulsets::StatefulSetSettings>,
    /// The `leaderworkerset.x-k8s.io/leaderworkerset` integration, when enabled.
    pub leaderworkersets: Option<leaderworkersets::LwsSettings>,
    /// `objectRetentionPolicies.workloads`: how long Workloads that ended are kept.
    pub workload_retention: crate::config::WorkloadRetention,
    /// Kueue's `tls`: what the webhook and metrics servers offer.
    pub tls: crate::tls::ServerTls,
    /// Kueue's `controller.cacheSyncTimeout`: how long the watches may take to deliver their
    /// first lists before the controller gives up.
    pub cache_sync_timeout: Duration,
    /// Where Kueue's visibility API is served (gate `VisibilityOnDemand`); `None` serves none.
    pub visibility: Option<SocketAddr>,
}

/// Runs the controller until SIGTERM or Ctrl-C (then `Ok`), or until a part of it fails.
pub async fn run(client: Client, settings: Settings) -> Result<(), ControllerError> {
    // The clock of the process, handed to the loops, the election, the writer, the event
    // recorders and the servers.
    let clock = Clock::system();
    let ready = Ready::default();
    let ready_within = ready.clone();
    let candidate = settings
        .leader
        .clone()
        .map(|lease| Candidate::new(client.clone(), lease, leader::identity(), clock.clone()));
    let (leader, leading) = watch::channel(candidate.is_none());
    let tenure = match candidate {
        Some(_) => Tenure::none(),
        None => Tenure::unlimited(),
    };
    let role = match candidate {
        Some(_) => ReplicaRole::Follower,
        None => ReplicaRole::Standalone,
    };
    let metrics = Arc::new(Metrics::new(
        role,
        settings.metrics.clone(),
        BuildInfo::current(),
    ));
    // Every kind is watched once for the whole process; each task subscribes before the watches
    // start.
    let mut shared = watches::shared::SharedWatches::default();
    let mut servers = JoinSet::new();
    let (drain, draining) = Draining::channel();
    let (certificate, webhook_namespaces, mut webhook_server) = match settings.webhooks.clone() {
        Some(serving) => {
            let started = webhook_serving::start(
                &client,
                serving,
                settings.tls.clone(),
                draining,
                &mut shared,
                &mut servers,
                &clock,
            )
            .await?;
            (
                Some(started.store),
                Some(started.namespaces),
                started.server,
            )
        }
        None => (None, None, tokio::spawn(std::future::pending())),
    };
    let (queries, asked) = mpsc::channel(QUERY_DEPTH);
    if let Some(addr) = settings.visibility {
        // The webhook server's certificate also names the visibility Service, and is trusted
        // by its APIServices; without webhooks the server presents a self-signed one, as
        // Kueue's does.
        let certs = match &certificate {
            Some(store) => store.resolver(),
            None => crate::tls::self_signed_store(clock.utc())?.resolver(),
        };
        visibility::start(
            &client,
            addr,
            certs,
            settings.tls.clone(),
            queries,
            &mut servers,
        )
        .await?;
    }
    // kuota's conversion webhook answers through the Service its certificate management names.
    let conversion = settings.webhooks.as_ref().map(|serving| {
        let tls = match &serving.certificates {
            CertificateSource::Managed(tls) => tls,
            CertificateSource::Files { trusted_by, .. } => trusted_by,
        };
        storage_migration::ConversionService {
            name: tls.service_name.clone(),
            namespace: tls.namespace.clone(),
        }
    });
    let bootstrap = certificate.clone();
    let migration = storage_migration::run(
        client.clone(),
        conversion,
        certificate.clone(),
        leading.clone(),
    );
    if let Some((addr, paths)) = settings.health.clone() {
        let readiness = serve::Readiness {
            caches: ready.clone(),
            webhook_namespaces,
            certificate,
        };
        servers.spawn(serve::health(addr, paths, readiness).await?);
    }
    if let Some(addr) = settings.metrics_addr {
        let serving = serve::MetricsServing::start(
            &client,
            &settings.metrics_security,
            &mut servers,
            &clock,
        )?;
        servers.spawn(serve::metrics(addr, metrics.clone(), serving, settings.tls.clone()).await?);
    }

    let (inputs, received) = mpsc::channel(INPUT_DEPTH);
    let mut watches = JoinSet::new();
    watches::shared::subscribe_admission(&mut shared, &inputs);
    drop(inputs);

    let (results, done) = mpsc::channel(INPUT_DEPTH);
    let (requests, to_write) = mpsc::unbounded_channel();
    let writer = Writer::new(
        client.clone(),
        settings.qps,
        settings.burst,
        tenure.clone(),
        clock.clone(),
    );
    // The event recorder of a task writing as `manager`.
    let events_for = |manager: &str| {
        EventSink::start_for(
            client.clone(),
            manager,
            settings.instance.clone(),
            clock.clone(),
        )
    };
    let job_integration = settings.jobs.clone().map(|job_settings| {
        jobs::start(
            &client,
            job_settings,
            writer.clone(),
            events_for(field_managers::JOB_CONTROLLER),
            leading.clone(),
            clock.clone(),
            &mut shared,
            &mut watches,
        )
    });
    let job_integration = run_if_started(job_integration);
    let framework_integrations = settings.frameworks.as_ref().map(|framework_settings| {
        jobs::frameworks::start(
            framework_settings,
            &writer,
            &events_for(field_managers::JOB_CONTROLLER),
            &leading,
            &clock,
            &mut shared,
        )
    });
    let framework_integrations = run_if_started(framework_integrations);
    let pod_integration = settings.pods.clone().map(|pod_settings| {
        pods::start(
            pod_settings,
            writer.clone(),
            events_for(field_managers::POD_CONTROLLER),
            leading.clone(),
            &mut shared,
            clock.clone(),
        )
    });
    let pod_integration = run_if_started(pod_integration);
    let statefulset_integration = settings.statefulsets.clone().map(|sts_settings| {
        statefulsets::start(
            sts_settings,
            writer.clone(),
            events_for(field_managers::JOB_CONTROLLER),
            leading.clone(),
            &mut shared,
            clock.clone(),
        )
    });
    let statefulset_integration = run_if_started(statefulset_integration);
    let lws_integration = settings.leaderworkersets.clone().map(|lws_settings| {
        leaderworkersets::start(
            lws_settings,
            writer.clone(),
            events_for(field_managers::JOB_CONTROLLER),
            leading.clone(),
            &mut shared,
            clock.clone(),
        )
    });
    let lws_integration = run_if_started(lws_integration);
    let policy = settings.workload_retention;
    let retains = policy.after_finished.is_some() || policy.after_deactivated_by_kueue.is_some();
    let retention = retains.then(|| {
        retention::start(
            policy,
            writer.clone(),
            events_for(field_managers::WORKLOAD_CONTROLLER),
            leading.clone(),
            &mut shared,
            clock.clone(),
        )
    });
    let retention = run_if_started(retention);
    let class_values =
        class_values::start(writer.clone(), leading.clone(), &mut shared, clock.clone());
    // Kueue's topology ungater runs with topology-aware scheduling, whatever kinds are enabled.
    let tas = settings
        .engine
        .features
        .enabled(crate::engine::features::Feature::TopologyAwareScheduling);
    let ungater = tas.then(|| {
        topology_ungater::start(writer.clone(), leading.clone(), clock.clone(), &mut shared)
    });
    let ungater = run_if_started(ungater);
    let provisioning = provisioning::start(
        settings.engine.features.clone(),
        writer.clone(),
        events_for(crate::api::keys::provisioning::CONTROLLER_NAME),
        leading.clone(),
        &mut shared,
        clock.clone(),
    );
    let mut admission_writer = tokio::spawn(admission::write_all(writer, to_write, results));
    let (failures, found) = mpsc::channel(INPUT_DEPTH);
    let node_health = node_health::start(
        settings.engine.features.clone(),
        failures,
        &mut shared,
        clock.clone(),
    );
    // Kueue's manager bootstraps its certificates, the conversion CRDs' CA bundles among them,
    // before its caches start (cert.BootstrapCerts): the watches start once the API server trusts
    // the webhook, so that no object of a CRD that converts through it (one stored as v1beta1 by
    // Kueue, say) is read, and written back, through the `None` conversion of a CRD whose webhook
    // is not in place yet.
    if let Some(store) = &bootstrap {
        tokio::select! {
            trusted = until_trusted(store, &mut servers) => trusted?,
            () = shutdown_signal() => return Ok(()),
        }
    }
    shared.spawn(&client, &mut watches);
    let admission = AdmissionLoop::new(
        ClusterState::new(settings.engine.clone()),
        EventSink::start(client.clone(), settings.instance.clone(), clock.clone()),
        MetricsFeed::new(metrics),
        requests,
        ready,
        settings.wait_for_pods_ready.clone(),
        leading.clone(),
        clock.clone(),
    );
    let admission = work_queue::WorkQueue::new(admission, leading, clock)
        .run(AdmissionInputs::new(received, done, found, asked));
    // The election runs on a task of its own: a long admission pass on this task must not delay
    // its renewals (the tenure would end anyway, but a leader that lost its lease is noticed
    // sooner).
    let candidate = candidate.map(Arc::new);
    let mut election = {
        let candidate = candidate.clone();
        let tenure = tenure.clone();
        tokio::spawn(async move {
            match candidate {
                Some(candidate) => candidate.run(&leader, &tenure).await,
                None => std::future::pending().await,
            }
        })
    };
    let stopped = tokio::select! {
        lost = &mut election => match lost {
            Ok(lost) => Err(lost),
            Err(error) => Err(panics::join_failed("the leader election", error)),
        },
        written = &mut admission_writer => match written {
            Ok(()) => Err(ControllerError::LoopStopped),
            Err(error) => Err(panics::join_failed("the admission writer", error)),
        },
        error = panics::first_panic("a watch", &mut watches) => Err(error),
        () = admission => Err(ControllerError::LoopStopped),
        () = node_health => Err(ControllerError::LoopStopped),
        () = job_integration => Err(ControllerError::LoopStopped),
        () = framework_integrations => Err(ControllerError::LoopStopped),
        () = pod_integration => Err(ControllerError::LoopStopped),
        () = statefulset_integration => Err(ControllerError::LoopStopped),
        () = lws_integration => Err(ControllerError::LoopStopped),
        () = retention => Err(ControllerError::LoopStopped),
        () = class_values => Err(ControllerError::LoopStopped),
        () = ungater => Err(ControllerError::LoopStopped),
        () = provisioning => Err(ControllerError::LoopStopped),
        () = migration => Err(ControllerError::LoopStopped),
        () = unlisted_after(ready_within.clone(), settings.cache_sync_timeout) => {
            Err(ControllerError::CacheSyncTimeout(settings.cache_sync_timeout))
        }
        Some(served) = servers.join_next() => match served {
            Ok(result) => result,
            Err(error) => Err(panics::join_failed("a server", error)),
        },
        // The webhook server ends on its own only when it cannot serve.
        served = &mut webhook_server => match served {
            Ok(Err(error)) => Err(error),
            Ok(Ok(())) => Err(ControllerError::LoopStopped),
            Err(error) => Err(panics::join_failed("the webhook server", error)),
        },
        () = shutdown_signal() => {
            tracing::info!("shutting down");
            // Nothing more is sent before the Lease is given up, and no renewal races the
            // release: the election task is stopped first.
            tenure.end();
            election.abort();
            let _ = (&mut election).await;
            if let Some(candidate) = &candidate {
                candidate.release().await;
            }
            // The chart's preStop wait has let the Service stop routing calls here; the ones
            // already taken are answered before the process ends.
            drain.send_replace(true);
            match tokio::time::timeout(DRAIN_LIMIT, &mut webhook_server).await {
                Ok(_) => tracing::info!("every webhook call taken was answered"),
                Err(_) => tracing::warn!(limit = ?DRAIN_LIMIT, "webhook calls still open at exit"),
            }
            Ok(())
        }
    };
    tenure.end();
    stopped
}

/// Resolves once `timeout` has passed without every watch delivering its first list (Kueue's
/// `controller.cacheSyncTimeout`: its manager stops then); never once they have.
async fn unlisted_after(ready: Ready, timeout: Duration) {
    tokio::time::sleep(timeout).await;
    if ready.get() {
        std::future::pending::<()>().await;
    }
}

/// Resolves once the webhook certificate is presented and trusted; fails if a server stops first.
async fn until_trusted(
    store: &crate::tls::CertStore,
    servers: &mut JoinSet<Result<(), ControllerError>>,
) -> Result<(), ControllerError> {
    while !store.is_ready() {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(100)) => {}
            Some(served) = servers.join_next() => {
                return match served {
                    Ok(Err(error)) => Err(error),
                    Ok(Ok(())) => Err(ControllerError::LoopStopped),
                    Err(error) => Err(panics::join_failed("a server", error)),
                };
            }
        }
    }
    Ok(())
}

/// Resolves on SIGTERM (how Kubernetes stops a pod) or Ctrl-C.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}

/// A task's loop, or, when its integration is not enabled, a future that never ends, so every
/// task can be waited on alike.
async fn run_if_started(run: Option<impl Future<Output = ()>>) {
    match run {
        Some(run) => run.await,
        None => std::future::pending().await,
    }
}
