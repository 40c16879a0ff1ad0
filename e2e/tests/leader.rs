//! Leader election across `kuota controller` replicas on the local control plane: one replica
//! leads on Kueue's Lease, the others keep their caches and write nothing, and when the leader
//! dies or is stopped another takes over without admitting anything twice.
//!
//! A test binary of its own: the e2e suite's controller leads while that suite runs, and these
//! tests must choose which replica dies.
//!
//! ```text
//! e2e/cluster up && eval "$(e2e/cluster env)"
//! cargo test --features e2e --test e2e_leader
//! ```

// Shared with the e2e suite, of which this binary uses a part.
#[allow(dead_code)]
mod support;

use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use kuota::api::Workload;
use tokio::time::{Instant, sleep};

use support::controller::Replica;
use support::kueue;
use support::{TestNamespace, unique_name};

/// Short timings, so that a dead leader's lease runs out within seconds.
const ELECTION: &str = "leaderElection: {leaseDuration: 4s, renewDeadline: 3s, retryPeriod: 1s}\n";
/// Kueue's Lease name; with no namespace configured and none from a pod, the client's default.
const LEASE: &str = "c1f6bfd2.kueue.x-k8s.io";
const LEASE_NAMESPACE: &str = "default";

/// Waits until one of `replicas` holds the Lease; returns its index and the Lease.
async fn until_led_by(leases: &Api<Lease>, replicas: &[&Replica]) -> Result<(usize, Lease)> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut last = None;
    loop {
        if let Some(lease) = leases.get_opt(LEASE).await? {
            let holder = lease
                .spec
                .as_ref()
                .and_then(|s| s.holder_identity.clone())
                .unwrap_or_default();
            let found = replicas
                .iter()
                .position(|r| holder.starts_with(&format!("{}_", r.name)));
            if let Some(index) = found {
                return Ok((index, lease));
            }
            last = Some(holder);
        }
        if Instant::now() >= deadline {
            let names: Vec<&str> = replicas.iter().map(|r| r.name.as_str()).collect();
            bail!("none of {names:?} took Lease {LEASE} within 30s; last holder {last:?}");
        }
        sleep(Duration::from_millis(200)).await;
    }
}

fn transitions(lease: &Lease) -> i32 {
    lease
        .spec
        .as_ref()
        .and_then(|s| s.lease_transitions)
        .unwrap_or(0)
}

fn resource_version(workload: &Workload) -> String {
    workload
        .metadata
        .resource_version
        .clone()
        .unwrap_or_default()
}

#[tokio::test]
async fn one_replica_leads_and_another_takes_over_when_it_dies_or_steps_down() -> Result<()> {
    let client = support::client().await?;
    support::apply_crds(&client).await?;
    let ns = TestNamespace::create(&client, "leader").await?;
    let (cq, flavor) = (unique_name("cq"), unique_name("rf"));
    kueue::queue(&client, &ns.name, &cq, &flavor, "3", "").await?;
    let lq = format!("lq-{cq}");
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let leases: Api<Lease> = Api::namespaced(client.clone(), LEASE_NAMESPACE);

    let a = Replica::spawn("replica-a", ELECTION).await?;
    let b = Replica::spawn("replica-b", ELECTION).await?;
    let (first, lease) = until_led_by(&leases, &[&a, &b]).await?;
    let (leader, follower) = if first == 0 { (&a, &b) } else { (&b, &a) };
    leader.until_leading().await?;
    ensure!(
        !follower
            .metrics()
            .await?
            .contains("replica_role=\"leader\""),
        "the follower {} reports itself as leader",
        follower.name
    );

    kueue::workload(&client, &ns.name, "w1", &lq, 1, "1", 0).await?;
    let w1 = kueue::until_admitted(&workloads, "w1").await?;

    // A leader that dies without a word: the follower takes over once the lease runs out.
    leader.signal("KILL")?;
    let (_, taken) = until_led_by(&leases, &[follower])
        .await
        .with_context(|| format!("after killing {}:\n{}", leader.name, follower.log_tail()))?;
    ensure!(
        transitions(&taken) > transitions(&lease),
        "a takeover counts as a lease transition: {} then {}",
        transitions(&lease),
        transitions(&taken)
    );
    follower.until_leading().await?;
    kueue::workload(&client, &ns.name, "w2", &lq, 1, "1", 0).await?;
    kueue::until_admitted(&workloads, "w2").await?;

    // A replica that joins while another leads follows.
    let c = Replica::spawn("replica-c", ELECTION).await?;
    let (still, _) = until_led_by(&leases, &[follower, &c]).await?;
    ensure!(still == 0, "{} took the Lease from a live leader", c.name);

    // A leader that is stopped frees the Lease on its way out, and the next one takes over.
    follower.signal("TERM")?;
    until_led_by(&leases, &[&c])
        .await
        .with_context(|| format!("after stopping {}:\n{}", follower.name, c.log_tail()))?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !follower.exited() {
        ensure!(
            Instant::now() < deadline,
            "{} did not exit on SIGTERM",
            follower.name
        );
        sleep(Duration::from_millis(100)).await;
    }
    let stopped_log = std::fs::read_to_string(&follower.log)?;
    ensure!(
        stopped_log.contains("lease released"),
        "{} stopped without releasing its lease:\n{}",
        follower.name,
        follower.log_tail()
    );
    c.until_leading().await?;
    kueue::workload(&client, &ns.name, "w3", &lq, 1, "1", 0).await?;
    kueue::until_admitted(&workloads, "w3").await?;

    // Three leaders in turn admitted three workloads on three CPUs and left the first one as
    // it was written: nothing was admitted twice, and the fourth waits for quota.
    let w1_now = workloads.get("w1").await?;
    ensure!(
        resource_version(&w1_now) == resource_version(&w1),
        "w1 was written again after a leader change: {} then {}",
        resource_version(&w1),
        resource_version(&w1_now)
    );
    kueue::workload(&client, &ns.name, "w4", &lq, 1, "1", 0).await?;
    kueue::until_pending(&workloads, "w4", "WaitingForQuota").await?;
    Ok(())
}
