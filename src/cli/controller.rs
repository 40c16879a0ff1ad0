//! `kuota controller`: Kueue's manager configuration file and flags → [`Settings`], a client,
//! and the controller run until it is stopped.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::config::{self, Configuration, Framework};
use crate::controllers::jobs::frameworks::FrameworkSettings;
use crate::controllers::{
    self, CertificateSource, MetricsCertificate, MetricsSecurity, ProbePaths, Settings,
    WebhookServing,
};
use crate::engine::model::EngineConfig;
use crate::jobs::kinds;
use crate::jobs::{JobScope, OwnerKind};
use crate::tls::{ServerTls, TlsSettings};
use crate::webhooks::{NamespaceView, PodSettings, Webhooks};

/// Where Kueue's manager reads the metrics server's certificate when it does not manage
/// certificates itself.
const METRICS_CERT_DIR: &str = "/etc/kueue/metrics/certs";

/// Arguments of `kuota controller`.
#[derive(Debug, clap::Args)]
pub struct ControllerArgs {
    /// Kueue's configuration file (`config.kueue.x-k8s.io`, kind `Configuration`); without it,
    /// Kueue's defaults.
    #[arg(long = "config")]
    pub config: Option<PathBuf>,
    /// Feature gates, `Name=true,Name=false`; not allowed together with the file's
    /// `featureGates`.
    #[arg(long = "feature-gates", default_value = "")]
    pub feature_gates: String,
    /// Serve no admission webhooks, and so manage no webhook certificate: for a controller run
    /// where no webhook configuration calls it (a workstation, a second controller in tests).
    #[arg(long = "no-webhooks")]
    pub no_webhooks: bool,
    /// Serve `/metrics` over HTTPS to callers the API server authenticates and authorizes, as
    /// Kueue's manager always does; `--metrics-secure=false` serves plain HTTP to anyone, for a
    /// workstation.
    #[arg(long = "metrics-secure", default_value_t = true, action = clap::ArgAction::Set)]
    pub metrics_secure: bool,
}

/// Why the controller did not start or stopped.
#[derive(Debug, thiserror::Error)]
enum StartError {
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    #[error("no Kubernetes configuration (in-cluster or KUBECONFIG): {0}")]
    Kubeconfig(#[from] kube::config::InferConfigError),
    #[error("cannot build a Kubernetes client: {0}")]
    Client(#[from] kube::Error),
    #[error(transparent)]
    Controller(#[from] controllers::ControllerError),
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[from] std::io::Error),
}

/// Kueue's webhook server: `webhook.host:port`, with the certificate kuota manages in the
/// Secret `internalCertManagement` names, or the files in `webhook.certDir`.
fn webhook_serving(config: &Configuration) -> Result<WebhookServing, config::ConfigError> {
    let host = &config.webhook.host;
    let bind = if host.contains(':') {
        format!("[{host}]:{}", config.webhook.port)
    } else {
        format!("{host}:{}", config.webhook.port)
    };
    // The port is never 0 once resolved, so there is always an address.
    let Some(addr) = config::socket_addr(&bind)? else {
        return Err(config::ConfigError::BindAddress {
            address: bind,
            reason: "the webhook server needs a port".into(),
        });
    };
    let certs = &config.internal_cert_management;
    let mut tls = TlsSettings::kueue(
        &config.namespace,
        &certs.webhook_service_name,
        &certs.webhook_secret_name,
    );
    // The CRDs whose fields differ between v1beta1 and v1beta2 convert through kuota's
    // webhook, as Kueue's do through Kueue's.
    tls.conversion_crds = crate::v1beta1::conversion_crd_names();
    if visibility_served(config) {
        tls.serve_visibility();
    }
    let certificates = if certs.enable {
        CertificateSource::Managed(Box::new(tls))
    } else {
        // The issuer's injector keeps the webhook configurations trusting it; they are only
        // read, to be ready once it has.
        CertificateSource::Files {
            dir: PathBuf::from(&config.webhook.cert_dir),
            trusted_by: Box::new(tls),
        }
    };
    Ok(WebhookServing {
        addr,
        certificates,
        webhooks: Webhooks {
            gates: config.feature_gates.clone(),
            frameworks: config
                .integrations
                .frameworks
                .iter()
                .chain(&config.integrations.implicit_frameworks)
                .map(|f| f.name())
                .collect(),
            pods: pod_settings(config),
        },
    })
}

/// Kueue's gate `VisibilityOnDemand`: the visibility API is served.
fn visibility_served(config: &Configuration) -> bool {
    config
        .feature_gates
        .enabled(crate::engine::features::Feature::VisibilityOnDemand)
}

/// What Kueue's Pod webhook reads from the configuration; the namespace facts come from the
/// watches the webhook server starts.
fn pod_settings(config: &Configuration) -> PodSettings {
    PodSettings {
        plain_pods: config.integrations.frameworks.contains(&Framework::Pod),
        scope: job_scope(config),
        namespaces: NamespaceView::default(),
    }
}

/// Which jobs the integrations manage: `manageJobsWithoutQueueName`,
/// `managedJobsNamespaceSelector`, and the parent kinds of the listed frameworks other than `pod`
/// and of `externalFrameworks`.
fn job_scope(config: &Configuration) -> JobScope {
    let integrations = &config.integrations;
    let listed = integrations
        .frameworks
        .iter()
        .filter(|f| **f != Framework::Pod)
        .map(|f| f.kind());
    let parent_kinds = listed
        .chain(integrations.external_frameworks.iter().cloned())
        .map(|gvk| OwnerKind::new(&gvk.group, &gvk.version, &gvk.kind))
        .collect();
    JobScope {
        manage_without_queue_name: config.manage_jobs_without_queue_name,
        namespace_selector: config.managed_jobs_namespace_selector.clone(),
        parent_kinds,
    }
}

/// Kueue's metrics server: HTTPS with controller-runtime's in-memory certificate under internal
/// cert management, else with the pair mounted at Kueue's `/etc/kueue/metrics/certs`.
fn metrics_security(config: &Configuration, secure: bool) -> MetricsSecurity {
    if !secure {
        MetricsSecurity::Plain
    } else if config.internal_cert_management.enable {
        MetricsSecurity::Secure(MetricsCertificate::SelfSigned)
    } else {
        MetricsSecurity::Secure(MetricsCertificate::Files(PathBuf::from(METRICS_CERT_DIR)))
    }
}

fn settings(
    config: &Configuration,
    serve_webhooks: bool,
    metrics_secure: bool,
) -> Result<Settings, config::ConfigError> {
    let health = config::socket_addr(&config.health.health_probe_bind_address)?.map(|addr| {
        (
            addr,
            ProbePaths {
                readiness: config.health.readiness_endpoint_name.clone(),
                liveness: config.health.liveness_endpoint_name.clone(),
            },
        )
    });
    Ok(Settings {
        // The controller reads every eviction it writes back, which queues the Workload again.
        engine: EngineConfig {
            requeue_evicted_next_pass: true,
            ..config.engine_config()
        },
        health,
        metrics_addr: config::socket_addr(&config.metrics.bind_address)?,
        metrics_security: metrics_security(config, metrics_secure),
        metrics: controllers::metrics::MetricsOptions {
            local_queue_metrics: config.metrics.local_queue_metrics.enable,
            local_queue_selector: config
                .metrics
                .local_queue_metrics
                .local_queue_selector
                .clone(),
            cluster_queue_resources: config.metrics.enable_cluster_queue_resources,
            fair_sharing: config.engine_config().fair_sharing.enabled,
        },
        qps: config.client_connection.qps,
        burst: config.client_connection.burst,
        wait_for_pods_ready: config.wait_for_pods_ready.clone(),
        instance: std::env::var("POD_NAME").ok().filter(|n| !n.is_empty()),
        leader: config
            .leader_election
            .leader_elect
            .then(|| controllers::leader::LeaseSettings {
                name: config.leader_election.resource_name.clone(),
                namespace: config.leader_election.resource_namespace.clone(),
                lease_duration: config.leader_election.lease_duration,
                renew_deadline: config.leader_election.renew_deadline,
                retry_period: config.leader_election.retry_period,
            }),
        jobs: config
            .integrations
            .enabled(config::Framework::BatchJob)
            .then(|| job_settings(config)),
        frameworks: framework_settings(config),
        pods: config
            .integrations
            .enabled(config::Framework::Pod)
            .then(|| controllers::pods::PodSettings {
                gates: config.feature_gates.clone(),
                plain_pods: config.integrations.frameworks.contains(&Framework::Pod),
                wait_for_pods_ready: config.wait_for_pods_ready.is_some(),
                label_keys_to_copy: config.integrations.label_keys_to_copy.clone(),
            }),
        statefulsets: config
            .integrations
            .enabled(config::Framework::StatefulSet)
            .then(|| controllers::statefulsets::StatefulSetSettings {
                gates: config.feature_gates.clone(),
                manage_without_queue_name: config.manage_jobs_without_queue_name,
            }),
        leaderworkersets: config
            .integrations
            .enabled(config::Framework::LeaderWorkerSet)
            .then(|| controllers::leaderworkersets::LwsSettings {
                gates: config.feature_gates.clone(),
                label_keys_to_copy: config.integrations.label_keys_to_copy.clone(),
            }),
        workload_retention: config.workload_retention,
        tls: ServerTls::new(&config.tls)?,
        cache_sync_timeout: config.cache_sync_timeout,
        visibility: visibility_served(config).then(|| config.visibility_server.socket_addr()),
        webhooks: if serve_webhooks {
            Some(webhook_serving(config)?)
        } else {
            None
        },
    })
}

/// What a job integration runs with.
fn job_settings(config: &Configuration) -> controllers::jobs::JobSettings {
    controllers::jobs::JobSettings {
        gates: config.feature_gates.clone(),
        wait_for_pods_ready: config.wait_for_pods_ready.is_some(),
        scope: job_scope(config),
        label_keys_to_copy: config.integrations.label_keys_to_copy.clone(),
    }
}

/// The enabled frameworks whose kinds are read through the job framework, with what they run
/// with; `None` when there are none.
fn framework_settings(config: &Configuration) -> Option<FrameworkSettings> {
    let frameworks: Vec<Framework> = config
        .integrations
        .frameworks
        .iter()
        .copied()
        .filter(|f| kinds::rules(*f).is_some())
        .collect();
    (!frameworks.is_empty()).then(|| FrameworkSettings {
        frameworks,
        jobs: job_settings(config),
    })
}

async fn start(args: &ControllerArgs) -> Result<(), StartError> {
    let loaded = config::load(args.config.as_deref(), &args.feature_gates)?;
    tracing::info!(config = ?loaded.config, "configuration loaded");
    for field in &loaded.ignored {
        tracing::warn!(
            field,
            "configuration field accepted and ignored: without it kuota admits and counts the same"
        );
    }
    let settings = settings(&loaded.config, !args.no_webhooks, args.metrics_secure)?;
    let client =
        crate::pacing::layer::client(kube::Config::infer().await?, crate::clock::Clock::system())?;
    controllers::run(client, settings).await?;
    Ok(())
}

/// Runs `kuota controller`: exit code 0 after SIGTERM, 1 when it cannot start or fails, 101
/// ([`controllers::panics::PANIC_EXIT_CODE`]) when any of its tasks panics.
pub fn run(args: &ControllerArgs) -> ExitCode {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    // A panic on any task ends the process, logged (docs/operations.md).
    controllers::panics::exit_on_panic();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            super::stdio::report("kuota controller", StartError::Runtime(error));
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(start(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "kuota controller stopped");
            super::stdio::report("kuota controller", error);
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests;
