//! How each operator is started: its arguments, environment and configuration file, what it needs
//! in the cluster or on disk first, and how the test knows it is ready.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations, WebhookClientConfig,
};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, ObjectMeta,
};
use kube::Client;
use kube::api::{Api, DeleteParams, PostParams};

use super::super::controller::free_port;
use super::Operator;

/// Where controller-runtime's webhook server reads its certificate, below the temp folder.
const CONTROLLER_RUNTIME_CERT_DIR: &str = "k8s-webhook-server/serving-certs";

/// The arguments and environment of the operator's process, after whatever it needs in the
/// cluster or on disk before it starts.
pub(super) async fn launch(
    operator: Operator,
    client: &Client,
    dir: &Path,
    health_port: u16,
) -> Result<Launch> {
    match operator {
        Operator::JobSet => {
            let cert_dir = write_certificate(dir)?;
            let config = dir.join("config.yaml");
            let webhook_port = free_port()?;
            std::fs::write(
                &config,
                format!(
                    "apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
webhook: {{host: 127.0.0.1, port: {webhook_port}, certDir: {cert_dir}}}
metrics: {{bindAddress: \"0\"}}
health: {{healthProbeBindAddress: \"127.0.0.1:{health_port}\"}}
leaderElection: {{leaderElect: false}}
internalCertManagement: {{enable: false}}
",
                    cert_dir = cert_dir.display()
                ),
            )?;
            Ok(Launch {
                ready: Readiness::Probe(health_port),
                args: vec!["--config".into(), config.display().to_string()],
                env: Vec::new(),
                pod_webhook: None,
            })
        }
        Operator::LeaderWorkerSet => {
            let cert_dir = write_certificate(dir)?;
            let config = dir.join("config.yaml");
            let webhook_port = free_port()?;
            std::fs::write(
                &config,
                format!(
                    "apiVersion: config.lws.x-k8s.io/v1alpha1
kind: Configuration
webhook: {{host: 127.0.0.1, port: {webhook_port}, certDir: {cert_dir}}}
metrics: {{bindAddress: \"0\"}}
health: {{healthProbeBindAddress: \"127.0.0.1:{health_port}\"}}
leaderElection: {{leaderElect: false}}
internalCertManagement: {{enable: false}}
",
                    cert_dir = cert_dir.display()
                ),
            )?;
            Ok(Launch {
                ready: Readiness::Probe(health_port),
                args: vec![
                    "--config".into(),
                    config.display().to_string(),
                    "--leader-elect=false".into(),
                ],
                env: Vec::new(),
                pod_webhook: Some(PodWebhook {
                    name: format!("kuota-e2e-lws-{}", std::process::id()),
                    url: format!("https://127.0.0.1:{webhook_port}/mutate--v1-pod"),
                    ca_bundle: std::fs::read(cert_dir.join("tls.crt"))?,
                    label: "leaderworkerset.sigs.k8s.io/name",
                }),
            })
        }
        Operator::KubeflowTraining => {
            // Its webhook certificates are always managed by a rotator that fills a Secret in
            // the operator's namespace, `kubeflow` (which must exist), and then waits for a
            // kubelet to mount it as files in /tmp/k8s-webhook-server/serving-certs, a path
            // it does not let one change; with no ValidatingWebhookConfiguration to inject
            // into, it is ready once a tls.crt is there. The webhook server reads its
            // certificate under $TMPDIR instead, so the operator gets a self-signed one of
            // its own there, and the fixed path gets one only if it has none.
            ensure_namespace_with_secret(client, "kubeflow", "training-operator-webhook-cert")
                .await?;
            let tmp = dir.join("tmp");
            write_certificate_into(&tmp.join(CONTROLLER_RUNTIME_CERT_DIR))?;
            let mounted = Path::new("/tmp").join(CONTROLLER_RUNTIME_CERT_DIR);
            if !mounted.join("tls.crt").is_file() {
                write_certificate_into(&mounted)?;
            }
            let mut args = vec![
                "--metrics-bind-address=0".to_string(),
                format!("--health-probe-bind-address=127.0.0.1:{health_port}"),
                format!("--webhook-server-port={}", free_port()?),
            ];
            for scheme in ["pytorchjob", "tfjob", "xgboostjob", "paddlejob", "jaxjob"] {
                args.push(format!("--enable-scheme={scheme}"));
            }
            Ok(Launch {
                ready: Readiness::Probe(health_port),
                args,
                env: vec![("TMPDIR".into(), tmp.display().to_string())],
                pod_webhook: None,
            })
        }
        Operator::Trainer => {
            // Its webhook server reads its certificate under $TMPDIR.
            let tmp = dir.join("tmp");
            write_certificate_into(&tmp.join(CONTROLLER_RUNTIME_CERT_DIR))?;
            let config = dir.join("config.yaml");
            std::fs::write(
                &config,
                format!(
                    "apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
webhook: {{host: 127.0.0.1, port: {webhook_port}}}
metrics: {{bindAddress: \"0\"}}
health: {{healthProbeBindAddress: \"127.0.0.1:{health_port}\"}}
leaderElection: {{leaderElect: false}}
certManagement: {{enable: false}}
",
                    webhook_port = free_port()?
                ),
            )?;
            Ok(Launch {
                ready: Readiness::Probe(health_port),
                args: vec!["--config".into(), config.display().to_string()],
                env: vec![("TMPDIR".into(), tmp.display().to_string())],
                pod_webhook: None,
            })
        }
        Operator::KubeRay => Ok(Launch {
            ready: Readiness::Probe(health_port),
            args: vec![
                "--metrics-addr=0".into(),
                format!("--health-probe-bind-address=127.0.0.1:{health_port}"),
                "--enable-leader-election=false".into(),
            ],
            env: Vec::new(),
            pod_webhook: None,
        }),
        Operator::AppWrapper => {
            let namespace = "appwrapper-system";
            ensure_namespace(client, namespace).await?;
            let name = super::super::unique_name("appwrapper-config");
            let config = format!(
                "webhooksEnabled: false
controllerManager:
  metrics: {{bindAddress: \"0\"}}
  health: {{bindAddress: \"127.0.0.1:{health_port}\"}}
  leaderElection: false
"
            );
            let mut config_map = ConfigMap::default();
            config_map.metadata.name = Some(name.clone());
            config_map.data = Some([("config.yaml".to_string(), config)].into());
            Api::<ConfigMap>::namespaced(client.clone(), namespace)
                .create(&PostParams::default(), &config_map)
                .await
                .with_context(|| format!("create ConfigMap {namespace}/{name}"))?;
            Ok(Launch {
                ready: Readiness::Probe(health_port),
                args: vec![format!("--config={name}")],
                env: vec![("NAMESPACE".into(), namespace.into())],
                pod_webhook: None,
            })
        }
        Operator::Mpi => {
            ensure_namespace(client, "mpi-operator").await?;
            Ok(Launch {
                ready: Readiness::Logged("Started workers"),
                args: vec!["--lock-namespace=mpi-operator".into()],
                env: Vec::new(),
                pod_webhook: None,
            })
        }
    }
}

/// What an operator's process is started with.
pub(super) struct Launch {
    pub ready: Readiness,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub pod_webhook: Option<PodWebhook>,
}

/// How the test knows the operator works.
#[derive(Clone, Copy, Debug)]
pub(super) enum Readiness {
    /// Its controller-runtime `/readyz` on this loopback port answers 200.
    Probe(u16),
    /// Its log holds this line.
    Logged(&'static str),
}

/// A mutating webhook for the pods that carry `label`, served by the operator at `url`.
pub(super) struct PodWebhook {
    name: String,
    url: String,
    ca_bundle: Vec<u8>,
    label: &'static str,
}

impl PodWebhook {
    /// Registers the webhook (failing closed, as the operator's own manifests do) and returns
    /// the configuration's name.
    pub(super) async fn register(self, client: &Client) -> Result<String> {
        let configurations: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
        let configuration = MutatingWebhookConfiguration {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                ..ObjectMeta::default()
            },
            webhooks: Some(vec![MutatingWebhook {
                name: "pods.e2e.kuota.dev".into(),
                admission_review_versions: vec!["v1".into()],
                client_config: WebhookClientConfig {
                    url: Some(self.url),
                    ca_bundle: Some(ByteString(self.ca_bundle)),
                    service: None,
                },
                failure_policy: Some("Fail".into()),
                side_effects: "None".into(),
                object_selector: Some(LabelSelector {
                    match_expressions: Some(vec![LabelSelectorRequirement {
                        key: self.label.into(),
                        operator: "Exists".into(),
                        values: None,
                    }]),
                    match_labels: None,
                }),
                rules: Some(vec![RuleWithOperations {
                    api_groups: Some(vec![String::new()]),
                    api_versions: Some(vec!["v1".into()]),
                    operations: Some(vec!["CREATE".into()]),
                    resources: Some(vec!["pods".into()]),
                    scope: None,
                }]),
                ..MutatingWebhook::default()
            }]),
        };
        configurations
            .create(&PostParams::default(), &configuration)
            .await
            .with_context(|| format!("register MutatingWebhookConfiguration {}", self.name))?;
        Ok(self.name)
    }
}

/// Deletes the MutatingWebhookConfiguration `name`, from a thread of its own since it runs on
/// drop, possibly inside the test's runtime.
pub(super) fn unregister_pod_webhook(name: String) {
    let deleted = std::thread::spawn(move || -> Result<()> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        runtime.block_on(async {
            let client = super::super::client().await?;
            let configurations: Api<MutatingWebhookConfiguration> = Api::all(client);
            configurations
                .delete(&name, &DeleteParams::default())
                .await
                .with_context(|| format!("delete MutatingWebhookConfiguration {name}"))?;
            Ok(())
        })
    })
    .join();
    if let Ok(Err(e)) = deleted {
        eprintln!("{e:#}");
    }
}
/// Writes a self-signed serving certificate for 127.0.0.1 and localhost as `tls.crt` and
/// `tls.key` (controller-runtime's file names) into `<dir>/certs` and returns that folder.
fn write_certificate(dir: &Path) -> Result<PathBuf> {
    let cert_dir = dir.join("certs");
    write_certificate_into(&cert_dir)?;
    Ok(cert_dir)
}

/// Writes a self-signed serving certificate for 127.0.0.1 and localhost as `tls.crt` and
/// `tls.key` into `cert_dir`.
fn write_certificate_into(cert_dir: &Path) -> Result<()> {
    let generated =
        rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .context("generate a self-signed certificate")?;
    std::fs::create_dir_all(cert_dir).with_context(|| format!("create {}", cert_dir.display()))?;
    std::fs::write(cert_dir.join("tls.crt"), generated.cert.pem())?;
    std::fs::write(
        cert_dir.join("tls.key"),
        generated.signing_key.serialize_pem(),
    )?;
    Ok(())
}

/// Creates `namespace` unless it exists.
async fn ensure_namespace(client: &Client, namespace: &str) -> Result<()> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let mut ns = Namespace::default();
    ns.metadata.name = Some(namespace.to_string());
    match namespaces.create(&PostParams::default(), &ns).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(e) => Err(e).with_context(|| format!("create namespace {namespace}")),
    }
}

/// Creates `namespace` and an empty Secret `secret` in it, unless they exist.
async fn ensure_namespace_with_secret(
    client: &Client,
    namespace: &str,
    secret: &str,
) -> Result<()> {
    ensure_namespace(client, namespace).await?;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let mut empty = Secret::default();
    empty.metadata.name = Some(secret.to_string());
    match secrets.create(&PostParams::default(), &empty).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(e) => Err(e).with_context(|| format!("create Secret {namespace}/{secret}")),
    }
}
