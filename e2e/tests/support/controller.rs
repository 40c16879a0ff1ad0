//! `kuota controller` processes for the tests: the suite's one controller (started on first
//! use with Kueue's configuration file) and replicas a test starts itself, each stopped when
//! the test process ends.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::sync::OnceCell;
use tokio::time::{Instant, sleep};

/// A `kuota controller` process with ports, configuration and log of its own.
#[derive(Debug)]
pub struct Replica {
    /// Its `POD_NAME`: the prefix of its identity in the leader-election Lease.
    pub name: String,
    pub health_port: u16,
    pub metrics_port: u16,
    pub log: PathBuf,
    // Read by the leader-election tests, which stop replicas themselves.
    #[allow(dead_code)]
    pid_file: PathBuf,
}

static CONTROLLER: OnceCell<Replica> = OnceCell::const_new();

/// Where the cluster keeps its state, and the controller its log and configuration.
pub fn state_dir() -> PathBuf {
    match std::env::var_os("KUOTA_E2E_STATE") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => super::repo_root().join("e2e/.state"),
    }
}

pub fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("find a free port")?;
    Ok(listener.local_addr()?.port())
}

/// GET `path` on a loopback port: the status code and the body.
pub async fn get(port: u16, path: &str) -> Result<(u16, String)> {
    let request = format!("GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n");
    let response = tokio::task::spawn_blocking(move || -> std::io::Result<String> {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        stream.write_all(request.as_bytes())?;
        let mut response = String::new();
        stream.read_to_string(&mut response)?;
        Ok(response)
    })
    .await??;
    let code = response
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default();
    Ok((code, body))
}

impl Replica {
    /// Starts a controller named `name` whose configuration file is Kueue's, with free loopback
    /// ports for probes and metrics and `extra` appended (more top-level fields). The test
    /// harness never drops statics, so a small shell watches this test process and stops the
    /// controller (SIGTERM, as Kubernetes stops a pod) when it is gone.
    pub async fn spawn(name: &str, extra: &str) -> Result<Replica> {
        let replica =
            Replica::start(name, extra, &["--no-webhooks"], &super::kubeconfig_path()).await?;
        replica.until_ready().await?;
        Ok(replica)
    }

    /// Starts a controller as [`Replica::spawn_leader`] does, talking to the API server with the
    /// credentials of `kubeconfig` (a user of the test's own, whose requests the API server can
    /// tell apart).
    #[allow(dead_code)] // used by the pacing test
    pub async fn spawn_leader_as(name: &str, extra: &str, kubeconfig: &Path) -> Result<Replica> {
        let replica = Replica::start(name, extra, &["--no-webhooks"], kubeconfig).await?;
        replica.until_ready().await?;
        replica.until_leading().await?;
        Ok(replica)
    }

    /// Starts a controller as [`Replica::spawn`] does, serving its admission webhooks as well
    /// (`extra` says where: `webhook.port` and `webhook.certDir`); the API server is not told
    /// to call them. It never becomes ready, since no webhook configuration trusts its
    /// certificate: this waits until its caches are listed instead.
    #[allow(dead_code)] // used by the watch-count test
    pub async fn spawn_serving_webhooks(name: &str, extra: &str) -> Result<Replica> {
        let replica = Replica::start(name, extra, &[], &super::kubeconfig_path()).await?;
        replica.until_listed().await?;
        Ok(replica)
    }

    async fn start(name: &str, extra: &str, flags: &[&str], kubeconfig: &Path) -> Result<Replica> {
        let client = super::client().await?;
        super::apply_crds(&client).await?;
        let dir = state_dir();
        std::fs::create_dir_all(&dir)?;
        let (health_port, metrics_port, visibility_port) =
            (free_port()?, free_port()?, free_port()?);
        let stem = format!("controller-{}-{name}", std::process::id());
        let config = dir.join(format!("{stem}.yaml"));
        std::fs::write(
            &config,
            format!(
                "apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
health: {{healthProbeBindAddress: \"127.0.0.1:{health_port}\"}}
metrics: {{bindAddress: \"127.0.0.1:{metrics_port}\"}}
visibilityServer: {{bindAddress: 127.0.0.1, bindPort: {visibility_port}}}
{extra}"
            ),
        )?;
        let log = dir.join(format!("{stem}.log"));
        let pid_file = dir.join(format!("{stem}.pid"));
        let out = std::fs::File::create(&log)?;
        let watchdog = r#"
"$0" controller --metrics-secure=false --config "$1" $4 & controller=$!
echo "$controller" > "$3"
while kill -0 "$2" 2>/dev/null && kill -0 "$controller" 2>/dev/null; do sleep 0.5; done
kill "$controller" 2>/dev/null
wait "$controller"
"#;
        Command::new("sh")
            .args(["-c", watchdog, env!("CARGO_BIN_EXE_kuota")])
            .arg(&config)
            .arg(std::process::id().to_string())
            .arg(&pid_file)
            .arg(flags.join(" "))
            .env("KUBECONFIG", kubeconfig)
            .env("POD_NAME", name)
            .env("RUST_LOG", "info,kuota=debug")
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()
            .with_context(|| format!("start kuota controller {name}"))?;
        let replica = Replica {
            name: name.to_string(),
            health_port,
            metrics_port,
            log,
            pid_file,
        };
        Ok(replica)
    }

    /// Starts a controller as [`Replica::spawn`] does and waits until it leads. A test that
    /// creates objects the controller must act on at once needs this: ready only means its
    /// caches are listed, and it may still be waiting for the Lease (one left held by a replica
    /// that died is taken only once its lease duration has passed, and a takeover waits
    /// `leaseDuration - renewDeadline` more). With no webhook, a Job created meanwhile runs, and
    /// on a kwok node finishes within seconds: a finished Job is left alone, never suspended.
    pub async fn spawn_leader(name: &str, extra: &str) -> Result<Replica> {
        let replica = Replica::spawn(name, extra).await?;
        replica.until_leading().await?;
        Ok(replica)
    }

    /// Waits until the replica leads, at most a minute: longer than Kueue's lease duration and
    /// the takeover wait together. Its log says when it became the leader; its metrics carry
    /// `replica_role="leader"` only once some series exists (none does before the first
    /// ClusterQueue), so they are the second sign.
    pub async fn until_leading(&self) -> Result<()> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let logged = std::fs::read_to_string(&self.log)
                .is_ok_and(|log| log.contains("became the leader"));
            if logged || self.metrics().await?.contains("replica_role=\"leader\"") {
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!(
                    "kuota controller {} not leading after 60s; log {}:\n{}",
                    self.name,
                    self.log.display(),
                    self.log_tail()
                );
            }
            sleep(Duration::from_millis(200)).await;
        }
    }

    /// Waits until the log says every cache is listed, at most a minute.
    async fn until_listed(&self) -> Result<()> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            if log.contains("every cache is synced") {
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!(
                    "kuota controller {} has not listed its caches after 60s; log {}:\n{}",
                    self.name,
                    self.log.display(),
                    self.log_tail()
                );
            }
            sleep(Duration::from_millis(200)).await;
        }
    }

    /// Waits until `/readyz` answers 200 (every cache listed), at most a minute.
    async fn until_ready(&self) -> Result<()> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok((200, _)) = get(self.health_port, "/readyz").await {
                println!(
                    "kuota controller {} ready; log: {}",
                    self.name,
                    self.log.display()
                );
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!(
                    "kuota controller {} not ready after 60s; log {}:\n{}",
                    self.name,
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

    /// The controller's process id.
    #[allow(dead_code)] // used by the cluster benchmark, which reads its memory
    pub fn pid(&self) -> Result<u32> {
        let pid = std::fs::read_to_string(&self.pid_file)
            .with_context(|| format!("read {}", self.pid_file.display()))?;
        pid.trim()
            .parse()
            .with_context(|| format!("{} holds no process id", self.pid_file.display()))
    }

    /// Sends `signal` (`TERM`, `KILL`) to the controller process.
    #[allow(dead_code)] // used by the leader-election tests
    pub fn signal(&self, signal: &str) -> Result<()> {
        let pid = std::fs::read_to_string(&self.pid_file)
            .with_context(|| format!("read {}", self.pid_file.display()))?;
        let status = Command::new("kill")
            .args(["-s", signal, pid.trim()])
            .status()
            .context("run kill")?;
        if !status.success() {
            bail!("kill -s {signal} {} failed: {status}", pid.trim());
        }
        Ok(())
    }

    /// Whether the controller process has exited.
    #[allow(dead_code)] // used by the leader-election tests
    pub fn exited(&self) -> bool {
        let Ok(pid) = std::fs::read_to_string(&self.pid_file) else {
            return false;
        };
        !Command::new("kill")
            .args(["-0", pid.trim()])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// The controller's `/metrics` text.
    pub async fn metrics(&self) -> Result<String> {
        let (code, body) = get(self.metrics_port, "/metrics").await?;
        if code != 200 {
            bail!("GET /metrics of {} answered {code}", self.name);
        }
        Ok(body)
    }
}

/// A label the suite's controller copies from jobs and pods onto their Workloads.
pub const COPIED_LABEL: &str = "e2e.kuota.dev/team";

/// The suite's controller, started on first use, with the batch/v1 Job and plain-pod
/// integrations, copying the label `e2e.kuota.dev/team` of jobs and pods onto their Workloads
/// ([`COPIED_LABEL`]). It elects itself leader on Kueue's default Lease, as an installed kuota does,
/// so a controller left over from an earlier test process hands over when it is stopped instead
/// of admitting beside this one; tests start once it leads.
pub async fn ensure_running() -> Result<&'static Replica> {
    CONTROLLER
        .get_or_try_init(|| {
            Replica::spawn_leader(
                "suite",
                "integrations: {frameworks: [\"batch/job\", \"pod\"], \
                 labelKeysToCopy: [e2e.kuota.dev/team]}\n",
            )
        })
        .await
}

/// The suite controller's `/metrics` text.
pub async fn metrics_text() -> Result<String> {
    ensure_running().await?.metrics().await
}
