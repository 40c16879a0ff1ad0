//! Every kind kuota reads is watched once per process: the API server's
//! `apiserver_longrunning_requests{verb="WATCH"}` per resource, read before a controller starts
//! and while it runs (the Job and pod integrations, workload retention, node-failure detection
//! reading pods, and the admission webhooks serving), grows by at most one for each resource.
//! JobSets and LeaderWorkerSets are enabled too, with no CRD of theirs installed, so they wait
//! for it beside the provisioning check's ProvisioningRequests: on one CRD watch.
//!
//! A test binary of its own: any other controller on the cluster would add watches of its own.
//!
//! ```text
//! e2e/cluster up && eval "$(e2e/cluster env)"
//! cargo test --features e2e --test e2e_watches
//! ```

// Shared with the e2e suite, of which this binary uses a part.
#[allow(dead_code)]
mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use kube::Client;
use tokio::time::{Instant, sleep};

use support::controller::Replica;

/// Open watches per resource (`group/resource`), as the API server counts them.
type WatchCounts = BTreeMap<String, i64>;

/// How long the open watches must stay the same before they are taken as the baseline: the
/// controller manager starts watching newly installed kinds after its next discovery.
const SETTLED: Duration = Duration::from_secs(35);

#[tokio::test]
async fn every_kind_is_watched_once() -> Result<()> {
    let client = support::client().await?;
    support::apply_crds(&client).await?;
    let before = settled_watches(&client).await?;

    let dir = support::repo_root().join(format!("e2e/.state/certs-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    self_signed_certificate(&dir)?;
    let webhook_port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let controller = Replica::spawn_serving_webhooks(
        "watches",
        &format!(
            "integrations: {{frameworks: [\"batch/job\", \"pod\", \"jobset.x-k8s.io/jobset\", \"leaderworkerset.x-k8s.io/leaderworkerset\"]}}
objectRetentionPolicies: {{workloads: {{afterFinished: 1h}}}}
featureGates: {{TASFailedNodeReplacement: true, TASReplaceNodeOnPodTermination: true}}
internalCertManagement: {{enable: false}}
webhook: {{host: 127.0.0.1, port: {webhook_port}, certDir: \"{}\"}}
",
            dir.display()
        ),
    )
    .await?;
    // Every cache listed means every watch is open; a moment more for any straggler.
    sleep(Duration::from_secs(3)).await;
    let during = watches(&client).await?;

    let added: BTreeMap<&String, i64> = during
        .iter()
        .map(|(resource, count)| (resource, count - before.get(resource).copied().unwrap_or(0)))
        .filter(|(_, added)| *added != 0)
        .collect();
    println!("watches kuota opened, per resource: {added:?}");
    let repeated: Vec<_> = added.iter().filter(|(_, added)| **added > 1).collect();
    ensure!(
        repeated.is_empty(),
        "resources watched more than once by one controller: {repeated:?} (all it opened: \
         {added:?}); log {}",
        controller.log.display()
    );
    for resource in [
        "/pods",
        "/nodes",
        "/namespaces",
        "kueue.x-k8s.io/workloads",
        "apiextensions.k8s.io/customresourcedefinitions",
    ] {
        ensure!(
            added.get(&resource.to_string()) == Some(&1),
            "kuota does not watch {resource}: it opened {added:?}"
        );
    }
    Ok(())
}

/// The open watches, once they have stayed the same for [`SETTLED`] (at most three minutes).
async fn settled_watches(client: &Client) -> Result<WatchCounts> {
    let deadline = Instant::now() + Duration::from_secs(180);
    let mut last = watches(client).await?;
    let mut since = Instant::now();
    loop {
        sleep(Duration::from_secs(5)).await;
        let now = watches(client).await?;
        if now != last {
            (last, since) = (now, Instant::now());
        } else if since.elapsed() >= SETTLED {
            return Ok(last);
        }
        ensure!(
            Instant::now() < deadline,
            "the API server's open watches did not settle in three minutes: {last:?}"
        );
    }
}

/// The API server's open watches per resource, from its `/metrics`.
async fn watches(client: &Client) -> Result<WatchCounts> {
    let request = hyper::Request::get("/metrics").body(Vec::new())?;
    let text = client
        .request_text(request)
        .await
        .context("read the API server's /metrics")?;
    let mut counts = WatchCounts::new();
    for line in text.lines() {
        let Some(series) = line.strip_prefix("apiserver_longrunning_requests{") else {
            continue;
        };
        let Some((labels, value)) = series.rsplit_once("} ") else {
            continue;
        };
        let label = |name: &str| {
            labels
                .split(',')
                .find_map(|pair| pair.strip_prefix(&format!("{name}=\"")))
                .map(|value| value.trim_end_matches('"').to_string())
                .unwrap_or_default()
        };
        if label("verb") != "WATCH" {
            continue;
        }
        let value: f64 = value
            .trim()
            .parse()
            .with_context(|| format!("a gauge that is not a number: {line}"))?;
        *counts
            .entry(format!("{}/{}", label("group"), label("resource")))
            .or_default() += value as i64;
    }
    Ok(counts)
}

/// `tls.crt` and `tls.key` for `localhost` in `dir`, for the webhook server.
fn self_signed_certificate(dir: &Path) -> Result<()> {
    let status = Command::new("openssl")
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
        status.status.success(),
        "openssl failed: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    Ok(())
}
