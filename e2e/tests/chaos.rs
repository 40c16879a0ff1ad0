//! The chaos suite on the local control plane: storms of Workloads (and of TAS Jobs) while the
//! controller is killed with SIGKILL at seeded moments, the leader of two replicas is killed,
//! or the API server is restarted, with invariant checkers sampling the API server throughout.
//! Each case is a module of `chaos/`; the cases run one at a time, as they share the cluster
//! and Kueue's leader-election Lease.
//!
//! A test binary of its own: it kills the controllers it runs, which the e2e suite's shared
//! controller must not be. Each case prints its seed; `KUOTA_CHAOS_SEED=<seed>` replays the
//! same storm and disruption moments.
//!
//! ```text
//! e2e/cluster up && eval "$(e2e/cluster env)"
//! cargo test --features e2e --test e2e_chaos -- --nocapture
//! ```

// Shared with the e2e suite, of which this binary uses a part.
#[allow(dead_code)]
mod support;

#[path = "chaos/apiserver_restart.rs"]
mod apiserver_restart;
#[path = "chaos/controller_kills.rs"]
mod controller_kills;
#[path = "chaos/invariants.rs"]
mod invariants;
#[path = "chaos/leader_takeover.rs"]
mod leader_takeover;
#[path = "chaos/rng.rs"]
mod rng;
#[path = "chaos/storm.rs"]
mod storm;
#[path = "chaos/tas_invariants.rs"]
mod tas_invariants;
#[path = "chaos/tas_kills.rs"]
mod tas_kills;

use std::time::Duration;

use anyhow::{Result, ensure};
use tokio::sync::{Mutex, MutexGuard};
use tokio::time::{Instant, sleep};

use support::controller::Replica;

/// Short lease timings, so a killed leader's lease runs out within seconds of its death.
const ELECTION: &str = "leaderElection: {leaseDuration: 4s, renewDeadline: 3s, retryPeriod: 1s}\n";

/// Held by the case that runs: one case at a time.
static SERIAL: Mutex<()> = Mutex::const_new(());

async fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().await
}

/// The controllers a case started: stopped with SIGTERM, which releases the Lease, when the
/// case ends (waiting for them to exit) or fails (not waiting), so that none of them leads
/// during the next case.
#[derive(Default)]
struct Replicas(Vec<Replica>);

impl Replicas {
    async fn spawn(&mut self, name: &str, config: &str) -> Result<&Replica> {
        let replica = Replica::spawn(name, config).await?;
        self.0.push(replica);
        Ok(&self.0[self.0.len() - 1])
    }

    /// The most recently started replica.
    fn last(&self) -> Option<&Replica> {
        self.0.last()
    }

    /// Stops every replica still running and waits until each has exited.
    async fn stop(mut self) -> Result<()> {
        for replica in std::mem::take(&mut self.0) {
            if !replica.exited() {
                replica.signal("TERM")?;
                until_exited(&replica, Duration::from_secs(15)).await?;
            }
        }
        Ok(())
    }
}

impl Drop for Replicas {
    fn drop(&mut self) {
        for replica in &self.0 {
            if !replica.exited() {
                let _ = replica.signal("TERM");
            }
        }
    }
}

/// SIGKILLs the replica and waits until it is gone.
/// Kills `replica`; one that has already exited (a leader that could not renew its lease in
/// time on a busy machine stops by itself, as it must) is only reported.
async fn kill(replica: &Replica) -> Result<()> {
    if replica.exited() {
        println!("{} had already exited by itself", replica.name);
        return Ok(());
    }
    replica.signal("KILL")?;
    until_exited(replica, Duration::from_secs(10)).await
}

async fn until_exited(replica: &Replica, within: Duration) -> Result<()> {
    let deadline = Instant::now() + within;
    while !replica.exited() {
        ensure!(
            Instant::now() < deadline,
            "{} still runs {within:?} after it was signalled",
            replica.name
        );
        sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}
