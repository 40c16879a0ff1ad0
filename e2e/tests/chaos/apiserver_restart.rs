//! The kube-apiserver restarted twice during a storm (`e2e/cluster restart`, SIGKILL or
//! SIGTERM by seed, etcd keeping its data) while one controller runs with Kueue's default
//! lease timings: the controller's watches and writes resume against the new API server, the
//! storm drains and the invariants hold. Should the controller exit anyway (a lost lease), it
//! is started again, as the kubelet would, and the case says so.

use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use tokio::time::sleep_until;

use crate::rng::seeded;
use crate::storm::{self, Cohort, Shape, Storm};
use crate::{Replicas, serial, support};

/// Kueue's default lease timings: an API server away for less than the renew deadline costs
/// the leader nothing.
const ELECTION: &str =
    "leaderElection: {leaseDuration: 15s, renewDeadline: 10s, retryPeriod: 2s}\n";
const SHAPE: Shape = Shape {
    size: 240,
    waves: 3,
    wave_gap: Duration::from_secs(5),
};
const RESTARTS: usize = 2;
/// Restart moments are drawn from this window (milliseconds after the storm starts).
const RESTART_WINDOW: (u64, u64) = (2_000, 25_000);
/// How long the API server stays stopped (milliseconds).
const DOWN: (u64, u64) = (0, 3_000);
const DRAINED: Duration = Duration::from_secs(150);
const CLASSIFIED: Duration = Duration::from_secs(60);

/// Runs `e2e/cluster restart` for the kube-apiserver; returns what it printed.
async fn restart_apiserver(sigkill: bool, down: Duration) -> Result<String> {
    let script = support::repo_root().join("e2e/cluster");
    let mut args = vec!["restart".to_string()];
    if sigkill {
        args.push("--kill".into());
    }
    args.extend([
        format!("--down={}ms", down.as_millis()),
        "kube-apiserver".into(),
    ]);
    let output = tokio::task::spawn_blocking(move || Command::new(&script).args(&args).output())
        .await?
        .context("run e2e/cluster restart")?;
    let printed = String::from_utf8_lossy(&output.stdout).trim().to_string();
    ensure!(
        output.status.success(),
        "e2e/cluster restart kube-apiserver failed: {}\n{printed}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(printed)
}

#[tokio::test]
async fn restarting_the_api_server_during_a_storm_breaks_no_invariant() -> Result<()> {
    let _serial = serial().await;
    let (seed, mut rng) = seeded("API server restarts")?;
    let client = support::client().await?;
    let cohort = Cohort::create(&client, "chaos-api").await?;
    let plan = storm::plan(&mut rng, &cohort, SHAPE);
    let mut restarts: Vec<(Duration, Duration, bool)> = (0..RESTARTS)
        .map(|_| {
            (
                rng.millis(RESTART_WINDOW),
                rng.millis(DOWN),
                rng.below(2) == 0,
            )
        })
        .collect();
    restarts.sort();
    println!("API server restarts planned (moment, time down, SIGKILL): {restarts:?}");

    let mut replicas = Replicas::default();
    replicas.spawn("apiserver-0", ELECTION).await?;
    let storm = Storm::start(&cohort, plan);
    let mut respawned = 0;
    for (index, (at, down, sigkill)) in restarts.iter().enumerate() {
        sleep_until(storm.start + *at).await;
        let began = storm.start.elapsed();
        let printed = restart_apiserver(*sigkill, *down).await?;
        println!(
            "restart {} at {began:?}: {printed} ({})",
            index + 1,
            storm.tally().await?
        );
        if replicas.last().is_some_and(|r| r.exited()) {
            respawned += 1;
            println!("the controller exited during the restart; starting it again");
            replicas
                .spawn(&format!("apiserver-{respawned}"), ELECTION)
                .await?;
        }
    }
    let log = || replicas.last().map(|r| r.log_tail()).unwrap_or_default();
    let outcome = storm.drain(&cohort, CLASSIFIED, DRAINED, &log).await?;
    println!(
        "chaos API server restarts: restarts {}, controller restarts {respawned}, {}",
        restarts.len(),
        outcome.figures()
    );
    let checker = &outcome.sampled.checker;
    ensure!(
        checker.violations() == 0,
        "{} invariant violations (seed {seed}):\n{}",
        checker.violations(),
        checker.found.report()
    );
    // The controller removes the Workloads' finalizers: it goes after the namespace.
    cohort.ns.delete().await?;
    replicas.stop().await
}
