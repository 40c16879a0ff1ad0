//! The switch between Kueue and kuota, both ways, on one local control plane, losing nothing:
//!
//! 1. Kueue → kuota. Kueue's manager (v0.15, the last release storing `v1beta1`; built by
//!    e2e/kueue-build.sh) runs with its CRDs and its conversion webhook; queues are written in
//!    `v1beta1`, two Jobs are admitted and running on kwok nodes, three wait for quota. Kueue is
//!    stopped and its webhook Service removed, kuota's CRDs replace Kueue's and the chart is
//!    installed (`e2e/cluster deploy`), as docs/migration.md says.
//! 2. kuota → Kueue: the same with kuota running first; kuota is uninstalled, Kueue's CRDs
//!    applied and its manager started.
//!
//! After each switch: every admitted Workload keeps its admission and its condition times, no
//! running Job is suspended or loses its pod, nothing is evicted, the waiting Workloads are
//! admitted by priority then creation as quota frees. After the first: every CRD of kuota's
//! lists only `v1beta2` as stored and etcd holds every object as `v1beta2`, kuota having
//! migrated them.
//!
//! A test binary of its own, run after e2e_deploy: it installs the chart on its fixed ports.
//!
//! ```text
//! e2e/cluster up && eval "$(e2e/cluster env)"
//! flock -o /tmp/kuota-e2e-ports.lock cargo test --features e2e --test e2e_switchover
//! ```

#[allow(dead_code)]
mod support;

#[path = "switchover/kueue.rs"]
mod kueue;
#[path = "../bench/versus/process.rs"]
#[allow(dead_code)]
mod process;
#[path = "deploy/release.rs"]
#[allow(dead_code)]
mod release;
#[path = "switchover/scene.rs"]
mod scene;
#[path = "switchover/storage.rs"]
mod storage;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use kube::Client;

use release::Release;
use scene::{Scene, WAITING};

/// How long the migration may take for the few objects here.
const MIGRATED: Duration = Duration::from_secs(180);
/// How long the new controller runs before the admitted Workloads are compared: it has listed
/// everything and acted on what it would act on.
const SETTLED: Duration = Duration::from_secs(15);

fn state_dir() -> PathBuf {
    match std::env::var_os("KUOTA_E2E_STATE") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => support::repo_root().join("e2e/.state"),
    }
}

/// `kubectl` on this cluster, as an admin types it (`e2e/cluster kubectl`).
pub fn kubectl(args: &[&str]) -> Result<()> {
    let script = support::repo_root().join("e2e/cluster");
    let output = Command::new(&script)
        .arg("kubectl")
        .args(args)
        .env("KUOTA_E2E_STATE", state_dir())
        .output()
        .with_context(|| format!("run kubectl {}", args.join(" ")))?;
    ensure!(
        output.status.success(),
        "kubectl {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(())
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap_or_default()
}

async fn until_established(client: &Client, dir: &Path) -> Result<()> {
    for file in support::apply::manifest_files(dir)? {
        for crd in support::apply::read(&file)? {
            support::apply::wait_established(client, crd.name(), Duration::from_secs(60)).await?;
        }
    }
    Ok(())
}

/// The admitted Workloads unchanged, nothing evicted, the waiting ones still waiting.
/// Kueue as its manifests install it: its CRDs applied over what is there, its webhook Service
/// routed here, its manager started.
async fn install_kueue(client: &Client, install: &kueue::Installation) -> Result<kueue::Kueue> {
    kubectl(&[
        "apply",
        "--server-side",
        "--force-conflicts",
        "-f",
        path(&install.crds),
    ])?;
    until_established(client, &install.crds).await?;
    install.route(client).await?;
    install.start().await
}

async fn nothing_lost(
    client: &Client,
    scene: &Scene,
    before: &std::collections::BTreeMap<String, scene::AdmittedState>,
    who: &str,
) -> Result<()> {
    tokio::time::sleep(SETTLED).await;
    let after = scene.admitted_states(client).await?;
    ensure!(
        &after == before,
        "{who} changed the admitted Workloads or their Jobs:\nbefore: {before:#?}\nafter: {after:#?}"
    );
    let evicted = scene.evicted(client).await?;
    ensure!(evicted.is_empty(), "{who} evicted {evicted:?}");
    for job in WAITING {
        scene.until_waiting(client, job).await?;
    }
    Ok(())
}

#[tokio::test]
async fn kueue_to_kuota_and_back() -> Result<()> {
    let client = support::client().await?;
    let state = state_dir().join("switchover");
    std::fs::create_dir_all(&state)?;
    let install = kueue::Installation::prepare(&state)?;
    let kuota_crds = support::repo_root().join("charts/kuota/crds");

    // Kueue installed: its CRDs (v1beta1 stored), its webhook Service, its manager.
    let manager = install_kueue(&client, &install).await?;
    let to_kuota = Scene::create(&client, "to-kuota", "v1beta1").await?;
    to_kuota
        .fill(&client)
        .await
        .with_context(|| format!("under Kueue (log {})", manager.log().display()))?;
    let before = to_kuota.admitted_states(&client).await?;
    ensure!(before.len() == 2, "Kueue admitted {before:?}");
    let queue_key = format!("/registry/kueue.x-k8s.io/clusterqueues/{}", to_kuota.queue);
    let stored = storage::stored_api_versions()?;
    ensure!(
        stored.get(&queue_key).map(String::as_str) == Some("kueue.x-k8s.io/v1beta1"),
        "Kueue {} stores ClusterQueues as v1beta1, etcd holds {:?}",
        kueue::version(),
        stored.get(&queue_key)
    );

    // The switch to kuota.
    manager.stop().await?;
    kubectl(&["delete", "service", "-n", kueue::NAMESPACE, kueue::SERVICE])?;
    kubectl(&["replace", "-f", path(&kuota_crds)])?;
    until_established(&client, &kuota_crds).await?;
    let release = Release::deploy("kuota", "kuota-system", &[]).await?;
    let outcome = async {
        nothing_lost(&client, &to_kuota, &before, "kuota").await?;
        storage::until_only_v1beta2(&client, MIGRATED).await?;
        let served: Vec<String> = kuota::v1beta1::Kind::ALL
            .iter()
            .map(|k| format!("/registry/kueue.x-k8s.io/{}/", k.plural()))
            .collect();
        let stale: Vec<(String, String)> = storage::stored_api_versions()?
            .into_iter()
            .filter(|(key, _)| served.iter().any(|p| key.starts_with(p)))
            .filter(|(_, version)| version != "kueue.x-k8s.io/v1beta2")
            .collect();
        ensure!(
            stale.is_empty(),
            "objects still stored in another version: {stale:?}"
        );
        to_kuota.drain_in_order(&client).await?;
        let evicted = to_kuota.evicted(&client).await?;
        ensure!(evicted.is_empty(), "kuota evicted {evicted:?}");
        anyhow::Ok(())
    }
    .await;
    outcome.with_context(|| {
        format!(
            "after the switch to kuota; its log:\n{}",
            release.log_tail()
        )
    })?;

    // kuota running with admitted and waiting Workloads; the switch back to Kueue.
    let to_kueue = Scene::create(&client, "to-kueue", "v1beta2").await?;
    to_kueue
        .fill(&client)
        .await
        .with_context(|| format!("under kuota; its log:\n{}", release.log_tail()))?;
    let before = to_kueue.admitted_states(&client).await?;
    ensure!(before.len() == 2, "kuota admitted {before:?}");
    release.undeploy()?;
    let manager = install_kueue(&client, &install).await?;
    let outcome = async {
        nothing_lost(&client, &to_kueue, &before, "Kueue").await?;
        to_kueue.drain_in_order(&client).await?;
        let evicted = to_kueue.evicted(&client).await?;
        ensure!(evicted.is_empty(), "Kueue evicted {evicted:?}");
        anyhow::Ok(())
    }
    .await;
    outcome.with_context(|| {
        format!(
            "after the switch to Kueue (log {})",
            manager.log().display()
        )
    })?;

    // Both scenes removed while Kueue still removes finalizers, then kuota's CRDs put back.
    to_kuota.delete(&client).await?;
    to_kueue.delete(&client).await?;
    manager.stop().await?;
    kubectl(&[
        "delete",
        "namespace",
        kueue::NAMESPACE,
        "--ignore-not-found",
    ])?;
    kubectl(&["replace", "-f", path(&kuota_crds)])?;
    until_established(&client, &kuota_crds).await
}
