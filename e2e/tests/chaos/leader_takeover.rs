//! Two replicas with leader election during a storm: at seeded moments the leader is killed
//! with SIGKILL, or frozen with SIGSTOP until the follower has taken over and then resumed (a
//! leader starved of CPU: when it runs again it must write nothing and stop by itself). The
//! follower takes the Lease within the lease duration (plus a margin for its retry period and a
//! loaded machine) and carries the storm on, and a new follower joins after each takeover.

use std::time::Duration;

use anyhow::{Result, bail, ensure};
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use tokio::time::{Instant, sleep, sleep_until};

use crate::rng::seeded;
use crate::storm::{self, Cohort, Shape, Storm};
use crate::{ELECTION, Replicas, kill, serial, support, until_exited};

const SHAPE: Shape = Shape {
    size: 240,
    waves: 3,
    wave_gap: Duration::from_secs(5),
};
/// Kueue's Lease name; with no namespace configured and none from a pod, the client's default.
const LEASE: &str = "c1f6bfd2.kueue.x-k8s.io";
const LEASE_NAMESPACE: &str = "default";
/// The `leaseDuration` of [`ELECTION`].
const LEASE_DURATION: Duration = Duration::from_secs(4);
/// What a takeover may take beyond the lease duration: the follower's retry period (1 s) and
/// scheduling on a shared machine.
const MARGIN: Duration = Duration::from_secs(3);
const KILLS: usize = 2;
/// Kill moments are drawn from this window (milliseconds after the storm starts).
const KILL_WINDOW: (u64, u64) = (2_000, 25_000);
/// How long a frozen leader stays frozen after the follower has taken over.
const RESUME_AFTER: Duration = Duration::from_secs(2);
const DRAINED: Duration = Duration::from_secs(120);
const CLASSIFIED: Duration = Duration::from_secs(45);

/// The replica name in the Lease's holder identity (`<name>_<suffix>`), if any.
async fn holder(leases: &Api<Lease>) -> Result<Option<String>> {
    Ok(leases
        .get_opt(LEASE)
        .await?
        .and_then(|l| l.spec?.holder_identity)
        .and_then(|h| h.rsplit_once('_').map(|(name, _)| name.to_string())))
}

/// Waits until one of `names` holds the Lease; returns it.
async fn until_held(leases: &Api<Lease>, names: &[&str], within: Duration) -> Result<String> {
    let deadline = Instant::now() + within;
    loop {
        let held = holder(leases).await?;
        if let Some(name) = held.as_ref().filter(|h| names.contains(&h.as_str())) {
            return Ok(name.clone());
        }
        if Instant::now() >= deadline {
            bail!("none of {names:?} took Lease {LEASE} within {within:?}; holder {held:?}");
        }
        sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn the_follower_takes_over_from_a_killed_leader_and_drains_the_storm() -> Result<()> {
    let _serial = serial().await;
    let (seed, mut rng) = seeded("leader takeover")?;
    let client = support::client().await?;
    let leases: Api<Lease> = Api::namespaced(client.clone(), LEASE_NAMESPACE);
    let cohort = Cohort::create(&client, "chaos-leader").await?;
    let plan = storm::plan(&mut rng, &cohort, SHAPE);
    let mut kills: Vec<Duration> = (0..KILLS).map(|_| rng.millis(KILL_WINDOW)).collect();
    kills.sort();
    println!("leader kills planned (moments after the storm starts): {kills:?}");

    let mut replicas = Replicas::default();
    let mut names = vec!["leader-0".to_string(), "leader-1".to_string()];
    for name in &names {
        replicas.spawn(name, ELECTION).await?;
    }
    let all: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut leader = until_held(&leases, &all, Duration::from_secs(30)).await?;
    let storm = Storm::start(&cohort, plan);
    let mut takeovers = Vec::new();
    for (index, at) in kills.iter().enumerate() {
        sleep_until(storm.start + *at).await;
        let follower = names
            .iter()
            .rev()
            .find(|n| **n != leader)
            .cloned()
            .unwrap_or_default();
        let Some(dying) = replicas.0.iter().find(|r| r.name == leader) else {
            bail!("no replica named {leader}");
        };
        let killed = Instant::now();
        let killed_at = storm.start.elapsed();
        // Every second stop is a freeze: the leader keeps its state and resumes after the
        // takeover, as a process the machine starved of CPU would.
        let frozen = index % 2 == 1 && !dying.exited();
        if frozen {
            dying.signal("STOP")?;
        } else {
            kill(dying).await?;
        }
        let within = LEASE_DURATION + MARGIN;
        let taken = until_held(&leases, &[&follower], within + Duration::from_secs(10)).await;
        let took = killed.elapsed();
        println!(
            "kill {}: leader {leader} {} at {killed_at:?}, {follower} took over after {took:?} \
             ({})",
            index + 1,
            if frozen { "frozen" } else { "killed" },
            storm.tally().await?
        );
        if frozen {
            // Resumed once the new leader writes: the old one must see its tenure is over,
            // send nothing, and stop.
            sleep(RESUME_AFTER).await;
            dying.signal("CONT")?;
            until_exited(dying, LEASE_DURATION + MARGIN).await?;
            println!("{leader} resumed and stopped by itself");
        }
        taken?;
        ensure!(
            took <= within,
            "{follower} took over {took:?} after {leader} was killed: beyond the lease duration \
             {LEASE_DURATION:?} + {MARGIN:?} (seed {seed})"
        );
        takeovers.push(took);
        leader = follower;
        let joining = format!("leader-{}", names.len());
        replicas.spawn(&joining, ELECTION).await?;
        names.push(joining);
    }
    let log = || {
        replicas
            .0
            .iter()
            .find(|r| r.name == leader)
            .map(|r| r.log_tail())
            .unwrap_or_default()
    };
    let outcome = storm.drain(&cohort, CLASSIFIED, DRAINED, &log).await?;
    println!(
        "chaos leader takeover: replicas 2, leader kills {}, takeovers {takeovers:?} (bound \
         {:?}), {}",
        kills.len(),
        LEASE_DURATION + MARGIN,
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
