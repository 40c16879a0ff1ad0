//! The job kinds' own controllers as local processes on the test cluster, built from their Go
//! modules by `e2e/operators/build.sh`: a test installs an operator's CRDs and starts it, and the
//! operator creates the Jobs and pods of its kind as it would in a real cluster. Each runs with
//! leader election off, its metrics and probes off, and its webhook server (which the API server
//! is never told to call) on a free loopback port with a self-signed certificate; a small shell
//! stops it when the test process is gone.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::core::v1::{Namespace, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, DeleteParams, PostParams};
use tokio::sync::OnceCell;

use super::{apply, wait};

/// A job kind's controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    JobSet,
    /// Kubeflow's training-operator, for PyTorchJob, TFJob, XGBoostJob, PaddleJob and JAXJob.
    TrainingOperator,
}

/// Where the training-operator keeps its webhook certificate Secret (it rotates it itself).
const TRAINING_OPERATOR_NAMESPACE: &str = "kuota-e2e-training-operator";

impl Operator {
    /// Its binary and CRD folder under the build folder.
    fn name(self) -> &'static str {
        match self {
            Operator::JobSet => "jobset",
            Operator::TrainingOperator => "training-operator",
        }
    }

    /// Its command line, with its configuration written into `dir`.
    fn args(self, dir: &Path) -> Result<Vec<String>> {
        let certs = dir.join("certs");
        std::fs::create_dir_all(&certs)?;
        self_signed_certificate(&certs)?;
        match self {
            Operator::JobSet => {
                let config = dir.join("config.yaml");
                std::fs::write(
                    &config,
                    format!(
                        "apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
internalCertManagement: {{enable: false}}
leaderElection: {{leaderElect: false}}
webhook: {{host: 127.0.0.1, port: {}, certDir: \"{}\"}}
metrics: {{bindAddress: \"0\"}}
health: {{healthProbeBindAddress: \"0\"}}
",
                        free_port()?,
                        certs.display()
                    ),
                )?;
                Ok(vec!["--config".into(), config.display().to_string()])
            }
            Operator::TrainingOperator => {
                let mut args: Vec<String> = [
                    "--leader-elect=false",
                    "--metrics-bind-address=0",
                    "--health-probe-bind-address=0",
                ]
                .map(String::from)
                .to_vec();
                args.push(format!("--webhook-server-port={}", free_port()?));
                for scheme in ["pytorchjob", "tfjob", "xgboostjob", "paddlejob", "jaxjob"] {
                    args.push(format!("--enable-scheme={scheme}"));
                }
                Ok(args)
            }
        }
    }

    /// Its environment besides `KUBECONFIG`.
    fn env(self) -> Vec<(&'static str, &'static str)> {
        match self {
            Operator::JobSet => Vec::new(),
            Operator::TrainingOperator => vec![("MY_POD_NAMESPACE", TRAINING_OPERATOR_NAMESPACE)],
        }
    }

    /// What it needs in the cluster before it starts: the training-operator rotates its webhook
    /// certificate into a Secret of its namespace, which must exist.
    async fn prepare(self, client: &Client) -> Result<()> {
        if self != Operator::TrainingOperator {
            return Ok(());
        }
        let namespace: Namespace = serde_json::from_value(serde_json::json!({
            "metadata": {"name": TRAINING_OPERATOR_NAMESPACE}}))?;
        create_if_absent(&Api::all(client.clone()), &namespace).await?;
        let secret: Secret = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "training-operator-webhook-cert",
                         "namespace": TRAINING_OPERATOR_NAMESPACE}}))?;
        create_if_absent(
            &Api::namespaced(client.clone(), TRAINING_OPERATOR_NAMESPACE),
            &secret,
        )
        .await
    }
}

/// The folder `e2e/operators/build.sh` built, once per test process.
async fn built() -> Result<&'static PathBuf> {
    static BUILT: OnceCell<PathBuf> = OnceCell::const_new();
    BUILT
        .get_or_try_init(|| async {
            let script = super::repo_root().join("e2e/operators/build.sh");
            let run = script.clone();
            let output = tokio::task::spawn_blocking(move || {
                Command::new(&run).stdin(Stdio::null()).output()
            })
            .await?
            .with_context(|| format!("run {}", script.display()))?;
            ensure!(
                output.status.success(),
                "{} failed: {}",
                script.display(),
                String::from_utf8_lossy(&output.stderr)
            );
            Ok(PathBuf::from(
                String::from_utf8_lossy(&output.stdout).trim(),
            ))
        })
        .await
}

/// The CRD manifests of `operator`, as its module ships them.
async fn crd_manifests(operator: Operator) -> Result<Vec<apply::Manifest>> {
    let dir = built().await?.join("crds").join(operator.name());
    let mut crds = Vec::new();
    for file in apply::manifest_files(&dir)? {
        crds.extend(apply::read(&file)?);
    }
    ensure!(!crds.is_empty(), "no CRD manifests in {}", dir.display());
    Ok(crds)
}

/// Installs `operator`'s CRDs and waits until each is Established.
pub async fn install_crds(client: &Client, operator: Operator) -> Result<()> {
    let crds = crd_manifests(operator).await?;
    for crd in &crds {
        apply::apply(client, crd, "default").await?;
    }
    for crd in &crds {
        apply::wait_established(client, crd.name(), Duration::from_secs(60)).await?;
    }
    Ok(())
}

/// Deletes `operator`'s CRDs (and so every object of its kinds) and waits until they are gone.
pub async fn remove_crds(client: &Client, operator: Operator) -> Result<()> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in crd_manifests(operator).await? {
        match api.delete(crd.name(), &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => return Err(error).context(format!("delete CRD {}", crd.name())),
        }
        wait::until_absent(&api, crd.name(), Duration::from_secs(60)).await?;
    }
    Ok(())
}

/// A running operator.
#[derive(Debug)]
pub struct Running {
    pub log: PathBuf,
    pid_file: PathBuf,
}

impl Running {
    /// The end of its log, for a failure message.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// Stops it (SIGTERM).
    pub fn stop(&self) -> Result<()> {
        let pid = std::fs::read_to_string(&self.pid_file)?;
        Command::new("kill").arg(pid.trim()).status()?;
        Ok(())
    }
}

/// Installs `operator`'s CRDs and starts it against the test cluster.
pub async fn start(client: &Client, operator: Operator) -> Result<Running> {
    install_crds(client, operator).await?;
    operator.prepare(client).await?;
    let binary = built().await?.join("bin").join(operator.name());
    let state = match std::env::var_os("KUOTA_E2E_STATE") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => super::repo_root().join("e2e/.state"),
    };
    let stem = format!("operator-{}-{}", std::process::id(), operator.name());
    let dir = state.join(&stem);
    std::fs::create_dir_all(&dir)?;
    let args = operator.args(&dir)?;
    let log = state.join(format!("{stem}.log"));
    let pid_file = dir.join("pid");
    let out = std::fs::File::create(&log)?;
    // Stops the operator once the test process is gone: the harness never drops statics.
    let watchdog = r#"
binary="$0"; test_pid="$1"; pid_file="$2"; shift 2
"$binary" "$@" & operator=$!
echo "$operator" > "$pid_file"
while kill -0 "$test_pid" 2>/dev/null && kill -0 "$operator" 2>/dev/null; do sleep 0.5; done
kill "$operator" 2>/dev/null
wait "$operator"
"#;
    Command::new("sh")
        .args(["-c", watchdog])
        .arg(&binary)
        .arg(std::process::id().to_string())
        .arg(&pid_file)
        .args(&args)
        .env("KUBECONFIG", super::kubeconfig_path())
        .envs(operator.env())
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .spawn()
        .with_context(|| format!("start {}", binary.display()))?;
    println!("{} started; log: {}", operator.name(), log.display());
    Ok(Running { log, pid_file })
}

/// Creates `object` unless it exists.
async fn create_if_absent<K>(api: &Api<K>, object: &K) -> Result<()>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    match api.create(&PostParams::default(), object).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(error) => Err(error).context("create what an operator needs"),
    }
}

fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("find a free port")?;
    Ok(listener.local_addr()?.port())
}

/// `tls.crt` and `tls.key` for `localhost` in `dir`, for an operator's webhook server.
fn self_signed_certificate(dir: &Path) -> Result<()> {
    let output = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args([
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost",
        ])
        .arg("-keyout")
        .arg(dir.join("tls.key"))
        .arg("-out")
        .arg(dir.join("tls.crt"))
        .output()
        .context("run openssl")?;
    ensure!(
        output.status.success(),
        "openssl failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(())
}
