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
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, DeleteParams};
use tokio::time::{Instant, sleep};

use super::apply;
use super::controller::{free_port, get, state_dir};

mod launch;

use launch::{Launch, Readiness};

/// How long an operator may take to answer its readiness probe.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
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
    KubeflowTraining,
    /// The Kubeflow MPI operator (v2beta1 MPIJobs). It always elects a leader, in the
    /// `mpi-operator` namespace, and serves its health check on port 8080 of every interface, so
    /// one runs at a time on a machine.
    Mpi,
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
            Operator::KubeflowTraining => "training-operator",
            Operator::Mpi => "mpi-operator",
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
        let launch = launch::launch(self, client, &dir, health_port).await?;
        let mut running =
            RunningOperator::spawn(self, &build.join(self.name()), &launch, dir).await?;
        if let Some(webhook) = launch.pod_webhook {
            running.pod_webhook = Some(webhook.register(client).await?);
        }
        Ok(running)
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

/// Applies the cluster autoscaler's ProvisioningRequest CRD, copied from its Go module by
/// `e2e/operators/crds.sh`, and waits until it is Established. No autoscaler runs: the tests
/// that need the kind play it.
pub async fn apply_provisioning_request_crd(client: &Client) -> Result<()> {
    let script = super::repo_root().join("e2e/operators/crds.sh");
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
    let dir = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    ensure!(
        dir.join(".complete").is_file(),
        "the CRDs are not copied into {}: run e2e/operators/crds.sh",
        dir.display()
    );
    apply_crds(client, &dir).await
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

impl Operator {
    /// Deletes the operator's CRDs (and so every object of its kinds) and waits until they are
    /// gone, so a controller started next finds the kinds not served yet.
    pub async fn remove_crds(self, client: &Client) -> Result<()> {
        let dir = build_dir()?.join("crds").join(self.name());
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        for file in apply::manifest_files(&dir)? {
            for crd in apply::read(&file)? {
                match crds.delete(crd.name(), &DeleteParams::default()).await {
                    Ok(_) => {}
                    Err(kube::Error::Api(status)) if status.code == 404 => continue,
                    Err(error) => {
                        return Err(error).with_context(|| format!("delete CRD {}", crd.name()));
                    }
                }
                super::wait::until_absent(&crds, crd.name(), CRD_TIMEOUT).await?;
            }
        }
        Ok(())
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
            launch::unregister_pod_webhook(name);
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
