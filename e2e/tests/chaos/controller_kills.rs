//! The controller killed with SIGKILL three times at seeded moments during a storm of 520
//! Workloads, and started again after a seeded pause each time.

use std::time::Duration;

use anyhow::{Result, ensure};
use tokio::time::{sleep, sleep_until};

use crate::rng::seeded;
use crate::storm::{self, Cohort, Shape, Storm};
use crate::{ELECTION, Replicas, kill, serial, support};

const SHAPE: Shape = Shape {
    size: 520,
    waves: 4,
    wave_gap: Duration::from_secs(6),
};
const KILLS: usize = 3;
/// Kill moments are drawn from this window (milliseconds after the storm starts).
const KILL_WINDOW: (u64, u64) = (2_000, 40_000);
/// How long the controller stays dead after a kill (milliseconds).
const DOWN: (u64, u64) = (0, 2_000);
/// Everything must be finished this long after the storm starts (about 110 s on an idle
/// machine; each restarted controller waits for its killed predecessor's lease to run out, and
/// the bound leaves room for a busy machine).
const DRAINED: Duration = Duration::from_secs(300);
/// How long after the last restart every Workload may take to be admitted, waiting with a
/// reason, or finished.
const CLASSIFIED: Duration = Duration::from_secs(45);

#[tokio::test]
async fn killing_the_controller_during_a_storm_breaks_no_invariant() -> Result<()> {
    let _serial = serial().await;
    let (seed, mut rng) = seeded("controller kills")?;
    let client = support::client().await?;
    let cohort = Cohort::create(&client, "chaos").await?;
    let plan = storm::plan(&mut rng, &cohort, SHAPE);
    let mut kills: Vec<(Duration, Duration)> = (0..KILLS)
        .map(|_| (rng.millis(KILL_WINDOW), rng.millis(DOWN)))
        .collect();
    kills.sort();
    println!("kills planned (moment after the storm starts, time dead): {kills:?}");

    let mut replicas = Replicas::default();
    replicas.spawn("chaos-0", ELECTION).await?;
    let storm = Storm::start(&cohort, plan);
    for (index, (at, down)) in kills.iter().enumerate() {
        sleep_until(storm.start + *at).await;
        let killed_at = storm.start.elapsed();
        let replica = replicas.last().map(|r| r.name.clone()).unwrap_or_default();
        if let Some(replica) = replicas.last() {
            kill(replica).await?;
        }
        println!(
            "kill {}: {replica} killed at {killed_at:?} ({}), restarted after {down:?}",
            index + 1,
            storm.tally().await?
        );
        sleep(*down).await;
        replicas
            .spawn(&format!("chaos-{}", index + 1), ELECTION)
            .await?;
    }
    let log = || replicas.last().map(|r| r.log_tail()).unwrap_or_default();
    let outcome = storm.drain(&cohort, CLASSIFIED, DRAINED, &log).await?;
    println!(
        "chaos controller kills: kills {}, {}",
        kills.len(),
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
