//! The job kinds' own operators (JobSet, LeaderWorkerSet, the Kubeflow training-operator, ...) as
//! local processes beside the control plane, the way its Kubernetes components run. Their binaries
//! and CRD manifests come from `e2e/operators/build.sh`; [`Operator::start`] applies the CRDs,
//! waits until each is Established, and starts the operator against the cluster with leader
//! election off, metrics off, its health probe on a free loopback port and, where it serves
//! webhooks, a self-signed certificate in a folder of its own. The API server is not told to call
//! those webhooks (tests submit fully specified objects), except LeaderWorkerSet's pod webhook,
//! without which that operator does not work. The process is stopped when its
//! [`RunningOperator`] is dropped (or, through a small watchdog shell, when the test process ends),
//! and its log is kept in the e2e state folder.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
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
use tokio::time::{Instant, sleep};

use super::apply;
use super::controller::{free_port, get, state_dir};

/// How long an operator may take to answer its readiness probe.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// Where controller-runtime's webhook server reads its certificate, below the temp folder.
const CONTROLLER_RUNTIME_CERT_DIR: &str = "k8s-webhook-server/serving-certs";
/// How long a CRD may take to become Established.
const CRD_TIMEOUT: Duration = Duration::from_secs(60);

/// An operator that `e2e/operators/build.sh` builds: its binary and `crds/<name>/` are named
/// [`Operator::name`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    /// sigs.k8s.io/jobset: JobSets.
    JobSet,
    /// sigs.k8s.io/lws: LeaderWorkerSets. Its pod webhook labels each pod with its group and
    /// worker index, without which its pod controller never makes a group's workers, so the API
    /// server is told to call it for the LeaderWorkerSets' pods.
    LeaderWorkerSet,
    /// The Kubeflow training-operator (v1): PyTorchJobs, TFJobs, XGBoostJobs, PaddleJobs,
    /// JAXJobs. MPIJobs are the MPI operator's.
    TrainingOperator,
    /// The Kubeflow MPI operator (v2beta1 MPIJobs). It always elects a leader, in the
    /// `mpi-operator` namespace, and serves its health check on port 8080 of every interface, so
    /// one runs at a time on a machine.
    MpiOperator,
    /// The Kubeflow trainer (v2 TrainJobs), its certificate management off. Its TrainJobs run as
    /// JobSets, so it needs the JobSet operator beside it.
    Trainer,
    /// KubeRay (RayClusters, RayJobs, RayServices), its webhooks off as they are by default.
    KubeRay,
    /// The CodeFlare AppWrapper operator, its webhooks off; it reads its configuration from a
    /// ConfigMap in its namespace, `appwrapper-system`.
    AppWrapper,
}

impl Operator {
    /// The binary's and the CRD folder's name in the operators' build folder.
    pub fn name(self) -> &'static str {
        match self {
            Operator::JobSet => "jobset",
            Operator::LeaderWorkerSet => "lws",
            Operator::TrainingOperator => "training-operator",
            Operator::MpiOperator => "mpi-operator",
            Operator::Trainer => "trainer",
            Operator::KubeRay => "kuberay",
            Operator::AppWrapper => "appwrapper",
        }
    }

    /// Applies the operator's CRDs, waits until each is Established and starts the operator.
    pub async fn start(self, client: &Client) -> Result<RunningOperator> {
        let build = build_dir()?;
        apply_crds(client, &build.join("crds").join(self.name())).await?;
        let dir = state_dir().join(format!(
            "operator-{}-{}",
            std::process::id(),
            super::unique_name(self.name())
        ));
        std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
        let health_port = free_port()?;
        let launch = self.launch(client, &dir, health_port).await?;
        let mut running =
            RunningOperator::spawn(self, &build.join(self.name()), &launch, dir).await?;
        if let Some(webhook) = launch.pod_webhook {
            running.pod_webhook = Some(webhook.register(client).await?);
        }
        Ok(running)
    }

    /// The arguments and environment of the operator's process, after whatever it needs in the
    /// cluster or on disk before it starts.
    async fn launch(self, client: &Client, dir: &Path, health_port: u16) -> Result<Launch> {
        match self {
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
            Operator::TrainingOperator => {
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
                let name = super::unique_name("appwrapper-config");
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
            Operator::MpiOperator => {
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
}

/// What an operator's process is started with.
struct Launch {
    ready: Readiness,
    args: Vec<String>,
    env: Vec<(String, String)>,
    pod_webhook: Option<PodWebhook>,
}

/// How the test knows the operator works.
#[derive(Clone, Copy, Debug)]
enum Readiness {
    /// Its controller-runtime `/readyz` on this loopback port answers 200.
    Probe(u16),
    /// Its log holds this line.
    Logged(&'static str),
}

/// A mutating webhook for the pods that carry `label`, served by the operator at `url`.
struct PodWebhook {
    name: String,
    url: String,
    ca_bundle: Vec<u8>,
    label: &'static str,
}

impl PodWebhook {
    /// Registers the webhook (failing closed, as the operator's own manifests do) and returns
    /// the configuration's name.
    async fn register(self, client: &Client) -> Result<String> {
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
fn unregister_pod_webhook(name: String) {
    let deleted = std::thread::spawn(move || -> Result<()> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        runtime.block_on(async {
            let client = super::client().await?;
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

/// The operators' build folder: `$KUOTA_OPERATORS_DIR`, else the one `e2e/operators/build.sh`
/// names for the pins of this checkout; it must be complete.
pub fn build_dir() -> Result<PathBuf> {
    let dir = match std::env::var_os("KUOTA_OPERATORS_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => {
            let script = super::repo_root().join("e2e/operators/build.sh");
            let output = Command::new(&script)
                .arg("--dir")
                .output()
                .with_context(|| format!("run {} --dir", script.display()))?;
            ensure!(
                output.status.success(),
                "{} --dir failed: {}",
                script.display(),
                String::from_utf8_lossy(&output.stderr)
            );
            PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
        }
    };
    ensure!(
        dir.join(".complete").is_file(),
        "the operators are not built in {}: run e2e/operators/build.sh",
        dir.display()
    );
    Ok(dir)
}

/// Applies every CRD manifest of `dir` and waits until each is Established.
async fn apply_crds(client: &Client, dir: &Path) -> Result<()> {
    let mut crds = Vec::new();
    for file in apply::manifest_files(dir)? {
        crds.extend(apply::read(&file)?);
    }
    ensure!(!crds.is_empty(), "no CRD manifests in {}", dir.display());
    for crd in &crds {
        ensure!(
            crd.gvk.kind == "CustomResourceDefinition",
            "{} is not a CustomResourceDefinition",
            crd.describe()
        );
        apply::apply(client, crd, "default").await?;
    }
    for crd in &crds {
        apply::wait_established(client, crd.name(), CRD_TIMEOUT).await?;
    }
    Ok(())
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

/// An operator process; stopped (SIGTERM, then SIGKILL after 10 s) when dropped.
#[derive(Debug)]
pub struct RunningOperator {
    pub operator: Operator,
    pub log: PathBuf,
    pid_file: PathBuf,
    watchdog: Child,
    /// The MutatingWebhookConfiguration registered for the operator's pod webhook.
    pod_webhook: Option<String>,
}

impl RunningOperator {
    async fn spawn(
        operator: Operator,
        binary: &Path,
        launch: &Launch,
        dir: PathBuf,
    ) -> Result<RunningOperator> {
        let log = dir.join(format!("{}.log", operator.name()));
        let pid_file = dir.join(format!("{}.pid", operator.name()));
        let out = std::fs::File::create(&log)?;
        // The test harness may end the process without dropping the handle (a panic in another
        // test, a timeout): the shell stops the operator once the test process is gone.
        let watchdog = r#"
pid_file="$1"; test_pid="$2"; shift 2
"$@" & operator=$!
echo "$operator" > "$pid_file"
while kill -0 "$test_pid" 2>/dev/null && kill -0 "$operator" 2>/dev/null; do sleep 0.5; done
kill "$operator" 2>/dev/null
wait "$operator"
"#;
        let mut command = Command::new("sh");
        command
            .args(["-c", watchdog, "operator-watchdog"])
            .arg(&pid_file)
            .arg(std::process::id().to_string())
            .arg(binary)
            .args(&launch.args)
            .env("KUBECONFIG", super::kubeconfig_path())
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out);
        for (key, value) in &launch.env {
            command.env(key, value);
        }
        let watchdog = command
            .spawn()
            .with_context(|| format!("start {}", binary.display()))?;
        let running = RunningOperator {
            operator,
            log,
            pid_file,
            watchdog,
            pod_webhook: None,
        };
        running.until_ready(launch.ready).await?;
        Ok(running)
    }

    /// Waits until the operator is ready as `ready` tells.
    async fn until_ready(&self, ready: Readiness) -> Result<()> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let is_ready = match ready {
                Readiness::Probe(port) => matches!(get(port, "/readyz").await, Ok((200, _))),
                Readiness::Logged(line) => {
                    std::fs::read_to_string(&self.log).is_ok_and(|log| log.contains(line))
                }
            };
            if is_ready {
                println!(
                    "operator {} ready; log: {}",
                    self.operator.name(),
                    self.log.display()
                );
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!(
                    "operator {} not ready after {READY_TIMEOUT:?}; log {}:\n{}",
                    self.operator.name(),
                    self.log.display(),
                    self.log_tail()
                );
            }
            sleep(Duration::from_millis(200)).await;
        }
    }

    /// The log's last lines, for failure messages.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    fn signal(&self, signal: &str) {
        if let Ok(pid) = std::fs::read_to_string(&self.pid_file) {
            let _ = Command::new("kill")
                .args(["-s", signal, pid.trim()])
                .stderr(Stdio::null())
                .status();
        }
    }
}

impl Drop for RunningOperator {
    fn drop(&mut self) {
        if let Some(name) = self.pod_webhook.take() {
            unregister_pod_webhook(name);
        }
        self.signal("TERM");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.watchdog.try_wait() {
                println!(
                    "operator {} stopped; log: {}",
                    self.operator.name(),
                    self.log.display()
                );
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        self.signal("KILL");
        let _ = self.watchdog.wait();
    }
}
