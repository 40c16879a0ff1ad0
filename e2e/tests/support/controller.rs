//! The `kuota controller` process the controller tests run against: one per test binary (two
//! controllers on one cluster would both admit), started on first use with Kueue's
//! configuration file and stopped when the test process ends.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::sync::OnceCell;
use tokio::time::{Instant, sleep};

/// The running controller.
#[derive(Debug)]
pub struct Running {
    pub metrics_port: u16,
    pub log: PathBuf,
}

static CONTROLLER: OnceCell<Running> = OnceCell::const_new();

/// Where the cluster keeps its state, and the controller its log and configuration.
fn state_dir() -> PathBuf {
    match std::env::var_os("KUOTA_E2E_STATE") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => super::repo_root().join("e2e/.state"),
    }
}

fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("find a free port")?;
    Ok(listener.local_addr()?.port())
}

/// The controller's log, last lines, for failure messages.
pub fn log_tail(running: &Running) -> String {
    let text = std::fs::read_to_string(&running.log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// GET `path` on a loopback port: the status code and the body.
async fn get(port: u16, path: &str) -> Result<(u16, String)> {
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

async fn start() -> Result<Running> {
    let client = super::client().await?;
    super::apply_crds(&client).await?;
    let dir = state_dir();
    std::fs::create_dir_all(&dir)?;
    let (health_port, metrics_port) = (free_port()?, free_port()?);
    let pid = std::process::id();
    let config = dir.join(format!("controller-{pid}.yaml"));
    std::fs::write(
        &config,
        format!(
            "apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
leaderElection: {{leaderElect: false}}
health: {{healthProbeBindAddress: \"127.0.0.1:{health_port}\"}}
metrics: {{bindAddress: \"127.0.0.1:{metrics_port}\"}}
"
        ),
    )?;
    let log = dir.join(format!("controller-{pid}.log"));
    let out = std::fs::File::create(&log)?;
    // The test harness never drops statics, so a small shell watches this process and stops the
    // controller when it is gone (or when the controller exits on its own).
    let watchdog = r#"
"$0" controller --config "$1" & controller=$!
while kill -0 "$2" 2>/dev/null && kill -0 "$controller" 2>/dev/null; do sleep 0.5; done
kill "$controller" 2>/dev/null
wait "$controller"
"#;
    Command::new("sh")
        .args(["-c", watchdog, env!("CARGO_BIN_EXE_kuota")])
        .arg(&config)
        .arg(pid.to_string())
        .env("KUBECONFIG", super::kubeconfig_path())
        .env("RUST_LOG", "info,kuota=debug")
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .spawn()
        .context("start kuota controller")?;
    let running = Running { metrics_port, log };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok((200, _)) = get(health_port, "/readyz").await {
            println!("kuota controller ready; log: {}", running.log.display());
            return Ok(running);
        }
        if Instant::now() >= deadline {
            bail!(
                "kuota controller not ready after 60s; log {}:\n{}",
                running.log.display(),
                log_tail(&running)
            );
        }
        sleep(Duration::from_millis(200)).await;
    }
}

/// The controller, started on first use.
pub async fn ensure_running() -> Result<&'static Running> {
    CONTROLLER.get_or_try_init(start).await
}

/// The controller's `/metrics` text.
pub async fn metrics_text() -> Result<String> {
    let running = ensure_running().await?;
    let (code, body) = get(running.metrics_port, "/metrics").await?;
    if code != 200 {
        bail!("GET /metrics answered {code}");
    }
    Ok(body)
}
