//! The two controllers as processes of this benchmark: kuota (the release build cargo made for
//! it) and Kueue's manager (built by e2e/kueue-build.sh), each with a configuration file of
//! Kueue's format, free loopback ports, a log, and the same client-side rate limit; and what
//! `/proc` says about them.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use tokio::time::{Instant, sleep};

/// Where Kueue's manager reads its metrics certificate when it does not manage certificates
/// itself; the path is fixed in its main, not configurable.
const KUEUE_METRICS_CERTS: &str = "/etc/kueue/metrics/certs";

/// A running controller, stopped (SIGTERM, then SIGKILL) when dropped.
pub struct Controller {
    pub name: &'static str,
    child: Child,
    health_port: u16,
    pub log: PathBuf,
}

/// Where Kueue's manager serves its webhooks: `tls.crt` and `tls.key` in `cert_dir`.
pub struct KueueWebhook {
    pub host: String,
    pub port: u16,
    pub cert_dir: PathBuf,
}

/// The client-side rate limit both controllers get (`clientConnection`).
#[derive(Clone, Copy, Debug)]
pub struct RateLimit {
    pub qps: f32,
    pub burst: i32,
}

pub fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("find a free port")?;
    Ok(listener.local_addr()?.port())
}

/// A self-signed certificate and key (`tls.crt`, `tls.key`) in `dir`, made once.
fn ensure_cert(dir: &Path) -> Result<()> {
    if dir.join("tls.crt").exists() && dir.join("tls.key").exists() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    let status = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650",
        ])
        .args(["-subj", "/CN=localhost", "-keyout"])
        .arg(dir.join("tls.key"))
        .arg("-out")
        .arg(dir.join("tls.crt"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .context("run openssl")?;
    ensure!(
        status.success(),
        "openssl could not make a certificate in {}",
        dir.display()
    );
    Ok(())
}

impl Controller {
    /// `kuota controller` without webhooks, as the e2e suite runs it, and without the
    /// visibility API server, as Kueue runs here.
    pub async fn kuota(state: &Path, limit: RateLimit) -> Result<Self> {
        let (health, metrics) = (free_port()?, free_port()?);
        let config = state.join("versus-kuota.yaml");
        std::fs::write(
            &config,
            format!(
                "apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
health: {{healthProbeBindAddress: \"127.0.0.1:{health}\"}}
metrics: {{bindAddress: \"127.0.0.1:{metrics}\"}}
leaderElection: {{leaderElect: false}}
clientConnection: {{qps: {}, burst: {}}}
",
                limit.qps, limit.burst
            ),
        )?;
        let mut command = Command::new(env!("CARGO_BIN_EXE_kuota"));
        command
            .args([
                "controller",
                "--no-webhooks",
                "--metrics-secure=false",
                "--feature-gates=VisibilityOnDemand=false",
                "--config",
            ])
            .arg(&config)
            .env("POD_NAME", "versus-kuota")
            .env("RUST_LOG", "info");
        Self::start("kuota", command, health, &state.join("versus-kuota.log")).await
    }

    /// Kueue's manager from `dir` (e2e/kueue-build.sh's folder). Its webhook server serves a
    /// self-signed certificate no API server calls (no webhook configuration is installed, as
    /// kuota runs without webhooks here too), and the visibility API server is off.
    pub async fn kueue(dir: &Path, state: &Path, limit: RateLimit) -> Result<Self> {
        let certs = state.join("versus-kueue-certs");
        ensure_cert(&certs)?;
        let webhook = KueueWebhook {
            host: "127.0.0.1".into(),
            port: free_port()?,
            cert_dir: certs,
        };
        let visibility = format!("--visibility-server-port={}", free_port()?);
        Self::kueue_serving(dir, state, limit, &webhook, &[visibility]).await
    }

    /// Kueue's manager from `dir`, its webhook server (the CRD conversion webhook among its
    /// paths) on `webhook`, with the certificate found there, and `args` besides; the visibility
    /// API server is off.
    pub async fn kueue_serving(
        dir: &Path,
        state: &Path,
        limit: RateLimit,
        webhook: &KueueWebhook,
        args: &[String],
    ) -> Result<Self> {
        ensure_cert(Path::new(KUEUE_METRICS_CERTS))?;
        let (health, metrics) = (free_port()?, free_port()?);
        let config = state.join("versus-kueue.yaml");
        std::fs::write(
            &config,
            format!(
                "apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health: {{healthProbeBindAddress: \"127.0.0.1:{health}\"}}
metrics: {{bindAddress: \"127.0.0.1:{metrics}\"}}
webhook: {{port: {}, host: \"{}\", certDir: \"{}\"}}
leaderElection: {{leaderElect: false}}
internalCertManagement: {{enable: false}}
clientConnection: {{qps: {}, burst: {}}}
",
                webhook.port,
                webhook.host,
                webhook.cert_dir.display(),
                limit.qps,
                limit.burst
            ),
        )?;
        let mut command = Command::new(dir.join("manager"));
        command
            .arg("--config")
            .arg(&config)
            .arg("--feature-gates=VisibilityOnDemand=false")
            .args(args);
        Self::start("Kueue", command, health, &state.join("versus-kueue.log")).await
    }

    async fn start(
        name: &'static str,
        mut command: Command,
        health_port: u16,
        log: &Path,
    ) -> Result<Self> {
        let out = std::fs::File::create(log)?;
        let child = command
            .env("KUBECONFIG", crate::support::kubeconfig_path())
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()
            .with_context(|| format!("start {name}"))?;
        let controller = Self {
            name,
            child,
            health_port,
            log: log.to_path_buf(),
        };
        controller.until_ready().await?;
        Ok(controller)
    }

    async fn until_ready(&self) -> Result<()> {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if ready(self.health_port).await {
                return Ok(());
            }
            if Instant::now() >= deadline || !self.alive() {
                bail!(
                    "{} not ready after 120s (or exited); log: {}",
                    self.name,
                    self.log.display()
                );
            }
            sleep(Duration::from_millis(200)).await;
        }
    }

    fn alive(&self) -> bool {
        Path::new(&format!("/proc/{}/stat", self.child.id())).exists()
    }

    /// User plus system CPU seconds the process has used so far.
    pub fn cpu_seconds(&self) -> Result<f64> {
        let pid = self.child.id();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .with_context(|| format!("read /proc/{pid}/stat"))?;
        // The fields after the command name, which is in parentheses and may hold spaces.
        let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks = |i: usize| -> Result<f64> {
            let field = fields.get(i).context("short /proc/<pid>/stat")?;
            Ok(field.parse::<u64>()? as f64)
        };
        // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
        Ok((ticks(11)? + ticks(12)?) / clock_ticks())
    }

    /// The process's peak resident set (VmHWM).
    pub fn peak_rss_kib(&self) -> Result<u64> {
        let pid = self.child.id();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .with_context(|| format!("read /proc/{pid}/status"))?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .context("VmHWM in /proc/<pid>/status")
    }

    /// SIGTERM, as Kubernetes stops a pod; SIGKILL if it has not exited within 30 s.
    pub async fn stop(mut self) -> Result<()> {
        signal(self.child.id(), "TERM")?;
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if self.child.try_wait()?.is_some() {
                return Ok(());
            }
            sleep(Duration::from_millis(100)).await;
        }
        self.child.kill()?;
        self.child.wait()?;
        Ok(())
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn signal(pid: u32, signal: &str) -> Result<()> {
    let status = Command::new("kill")
        .args(["-s", signal, &pid.to_string()])
        .status()
        .context("run kill")?;
    ensure!(status.success(), "kill -s {signal} {pid} failed");
    Ok(())
}

fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// Whether `GET /readyz` on the loopback port answers 200.
async fn ready(port: u16) -> bool {
    tokio::task::spawn_blocking(move || -> std::io::Result<bool> {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        stream.write_all(b"GET /readyz HTTP/1.0\r\nHost: localhost\r\n\r\n")?;
        let mut response = String::new();
        stream.read_to_string(&mut response)?;
        Ok(response.split_whitespace().nth(1) == Some("200"))
    })
    .await
    .is_ok_and(|r| r.unwrap_or(false))
}
