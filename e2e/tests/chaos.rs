//! The chaos suite on the local control plane: a storm of Workloads across a cohort with
//! borrowing and preemption while the controller is killed with SIGKILL at seeded moments and
//! started again, and an invariant checker sampling the API server throughout.
//!
//! A test binary of its own: it kills the controller it runs, which the e2e suite's shared
//! controller must not be. The seed is printed; `KUOTA_CHAOS_SEED=<seed>` replays the same
//! storm and kill moments.
//!
//! ```text
//! e2e/cluster up && eval "$(e2e/cluster env)"
//! cargo test --features e2e --test e2e_chaos -- --nocapture
//! ```

// Shared with the e2e suite, of which this binary uses a part.
#[allow(dead_code)]
mod support;

#[path = "chaos/invariants.rs"]
mod invariants;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use futures::StreamExt;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use kuota::api::{ClusterQueue, Workload};
use serde_json::json;
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep, sleep_until};

use invariants::Checker;
use support::controller::Replica;
use support::kueue::{self, apply_yaml};
use support::{TestNamespace, unique_name};

/// Short lease timings, so a killed leader's lease runs out within seconds of its death.
const ELECTION: &str = "leaderElection: {leaseDuration: 4s, renewDeadline: 3s, retryPeriod: 1s}\n";
const STORM: usize = 520;
const WAVES: usize = 4;
const WAVE_GAP: Duration = Duration::from_secs(6);
const KILLS: usize = 3;
/// Kill moments are drawn from this window after the storm starts.
const KILL_WINDOW: (u64, u64) = (2_000, 40_000);
const SAMPLE_EVERY: Duration = Duration::from_millis(200);
/// When a Workload whose finish patch failed is handed to the finisher again.
const RETRY: Duration = Duration::from_secs(2);
/// Everything must be finished this long after the storm starts (about two minutes on an idle
/// 2-CPU machine; the bound leaves room for a busy one).
const DRAINED: Duration = Duration::from_secs(300);
/// How long after the last restart every Workload may take to be admitted, waiting with a
/// reason, or finished.
const CLASSIFIED: Duration = Duration::from_secs(45);
const PRIORITIES: [i32; 3] = [0, 50, 100];
/// What one pod of a storm Workload requests.
const CPUS: [&str; 3] = ["500m", "1", "2"];
const MEMORY: [&str; 3] = ["256Mi", "512Mi", "1Gi"];

/// Per ClusterQueue: flavor A's CPU nominal quota and borrowing limit, then flavor B's.
const QUOTAS: [(&str, Option<&str>, &str, Option<&str>); 3] = [
    ("6", Some("3"), "4", Some("2")),
    ("5", Some("6"), "4", None),
    ("4", None, "3", Some("0")),
];

/// SplitMix64: a seeded, reproducible sequence without a dependency.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

fn seed() -> Result<u64> {
    match std::env::var("KUOTA_CHAOS_SEED") {
        Ok(seed) => seed
            .parse()
            .with_context(|| format!("KUOTA_CHAOS_SEED={seed:?} is not a number")),
        Err(_) => Ok(std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_nanos() as u64),
    }
}

/// One Workload of the storm.
struct Planned {
    name: String,
    queue: String,
    wave: usize,
    count: u64,
    cpu: &'static str,
    memory: &'static str,
    priority: i32,
    /// How long it runs once admitted before the test marks it finished.
    hold: Duration,
}

/// Waves lean on one ClusterQueue each, so later waves reclaim what earlier ones borrowed, and
/// carry higher priorities, so they preempt within their queue too.
fn plan_storm(rng: &mut Rng, queues: &[String]) -> Vec<Planned> {
    (0..STORM)
        .map(|i| {
            let wave = i * WAVES / STORM;
            let queue = if rng.below(10) < 6 {
                &queues[wave % queues.len()]
            } else {
                rng.pick(queues)
            };
            let priority = match rng.below(4) as usize + wave {
                0 | 1 => PRIORITIES[0],
                2 | 3 => PRIORITIES[1],
                _ => PRIORITIES[2],
            };
            Planned {
                name: format!("w-{i:03}"),
                queue: format!("lq-{queue}"),
                wave,
                count: 1 + rng.below(3),
                cpu: CPUS[rng.below(CPUS.len() as u64) as usize],
                memory: MEMORY[rng.below(MEMORY.len() as u64) as usize],
                priority,
                hold: Duration::from_millis(200 + rng.below(1_000)),
            }
        })
        .collect()
}

/// Kill moments after the storm starts and how long the controller stays dead each time.
fn plan_kills(rng: &mut Rng) -> Vec<(Duration, Duration)> {
    let mut kills: Vec<(Duration, Duration)> = (0..KILLS)
        .map(|_| {
            let at = KILL_WINDOW.0 + rng.below(KILL_WINDOW.1 - KILL_WINDOW.0);
            (
                Duration::from_millis(at),
                Duration::from_millis(rng.below(2_000)),
            )
        })
        .collect();
    kills.sort();
    kills
}

fn cohort_yaml(namespace: &str, cohort: &str, queues: &[String], flavors: &[String; 2]) -> String {
    let mut yaml = String::new();
    for flavor in flavors {
        yaml.push_str(&format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {{name: {flavor}}}\n---\n"
        ));
    }
    let cpu = |nominal: &str, borrowing: Option<&str>| match borrowing {
        Some(limit) => {
            format!("{{name: cpu, nominalQuota: \"{nominal}\", borrowingLimit: \"{limit}\"}}")
        }
        None => format!("{{name: cpu, nominalQuota: \"{nominal}\"}}"),
    };
    for (cq, (a, a_limit, b, b_limit)) in queues.iter().zip(QUOTAS) {
        yaml.push_str(&format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {cq}}}
spec:
  namespaceSelector: {{}}
  cohortName: {cohort}
  preemption: {{reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: {fa}
      resources: [{ca}, {{name: memory, nominalQuota: 24Gi}}]
    - name: {fb}
      resources: [{cb}, {{name: memory, nominalQuota: 16Gi}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq-{cq}, namespace: {namespace}}}
spec: {{clusterQueue: {cq}}}
---
",
            fa = flavors[0],
            fb = flavors[1],
            ca = cpu(a, a_limit),
            cb = cpu(b, b_limit),
        ));
    }
    yaml
}

fn workload(planned: &Planned) -> Result<Workload> {
    Ok(serde_json::from_value(json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": planned.name},
        "spec": {
            "queueName": planned.queue,
            "priority": planned.priority,
            "podSets": [{
                "name": "main",
                "count": planned.count,
                "template": {"spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {
                        "cpu": planned.cpu, "memory": planned.memory,
                    }}}],
                }},
            }],
        },
    }))?)
}

/// Creates the storm wave by wave.
async fn create_storm(api: Api<Workload>, storm: Arc<Vec<Planned>>, start: Instant) -> Result<()> {
    for wave in 0..WAVES {
        sleep_until(start + WAVE_GAP * wave as u32).await;
        let objects = storm
            .iter()
            .filter(|p| p.wave == wave)
            .map(workload)
            .collect::<Result<Vec<_>>>()?;
        let results: Vec<Result<()>> = futures::stream::iter(objects)
            .map(|object| {
                let api = api.clone();
                async move {
                    let name = object.metadata.name.clone().unwrap_or_default();
                    api.create(&PostParams::default(), &object)
                        .await
                        .with_context(|| format!("create Workload {name}"))?;
                    Ok(())
                }
            })
            .buffer_unordered(8)
            .collect()
            .await;
        results.into_iter().collect::<Result<Vec<()>>>()?;
    }
    Ok(())
}

/// What the finisher did.
#[derive(Default)]
struct Finishes {
    done: AtomicU64,
    /// The Workload changed between the sample and the patch (preempted, say): not finished.
    conflicts: AtomicU64,
    /// Other failures: the sampler hands the Workload over again later.
    errors: AtomicU64,
}

/// Marks a Workload finished as Kueue's job controller does, only if it is still the version
/// the sampler saw admitted: a job that was stopped by a preemption does not finish.
async fn finish(api: &Api<Workload>, name: &str, resource_version: &str) -> Result<bool> {
    let patch = json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"resourceVersion": resource_version},
        "status": {"conditions": [{
            "type": "Finished", "status": "True", "reason": "Succeeded",
            "message": "Job finished successfully",
            "lastTransitionTime": k8s_openapi::jiff::Timestamp::now().to_string(),
        }]},
    });
    let params = PatchParams::apply("kueue-job-controller-Finished").force();
    match api.patch_status(name, &params, &Patch::Apply(&patch)).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
        Err(e) => Err(e).with_context(|| format!("mark Workload {name} finished")),
    }
}

async fn run_finisher(
    api: Api<Workload>,
    mut due: mpsc::UnboundedReceiver<(String, String)>,
    finishes: Arc<Finishes>,
) {
    while let Some(first) = due.recv().await {
        let mut batch = vec![first];
        while let Ok(next) = due.try_recv() {
            batch.push(next);
        }
        let results: Vec<Result<bool>> = futures::stream::iter(batch)
            .map(|(name, rv)| {
                let api = api.clone();
                async move { finish(&api, &name, &rv).await }
            })
            .buffer_unordered(8)
            .collect()
            .await;
        for result in results {
            let counter = match result {
                Ok(true) => &finishes.done,
                Ok(false) => &finishes.conflicts,
                Err(e) => {
                    eprintln!("{e:#}");
                    &finishes.errors
                }
            };
            counter.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Samples Workloads and ClusterQueues every [`SAMPLE_EVERY`] until `stop`, checking each
/// sample, and hands the finisher every Workload admitted for longer than its hold.
async fn run_sampler(
    client: Client,
    namespace: String,
    mut checker: Checker,
    holds: HashMap<String, Duration>,
    due: mpsc::UnboundedSender<(String, String)>,
    stop: Arc<AtomicBool>,
) -> Result<Checker> {
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &namespace);
    let queues: Api<ClusterQueue> = Api::all(client);
    let mut admitted_since: HashMap<String, Instant> = HashMap::new();
    // What was handed to the finisher: the version, and when.
    let mut handed: HashMap<String, (String, Instant)> = HashMap::new();
    while !stop.load(Ordering::Relaxed) {
        let next = Instant::now() + SAMPLE_EVERY;
        let listed = workloads.list(&ListParams::default()).await?.items;
        let cqs = queues.list(&ListParams::default()).await?.items;
        checker.observe(&listed, &cqs);
        let now = Instant::now();
        for w in &listed {
            let name = w.metadata.name.clone().unwrap_or_default();
            if !kueue::admitted(w) || invariants::finished(w) {
                admitted_since.remove(&name);
                continue;
            }
            let since = *admitted_since.entry(name.clone()).or_insert(now);
            let hold = holds.get(&name).copied().unwrap_or_default();
            let rv = w.metadata.resource_version.clone().unwrap_or_default();
            // A version handed over is handed over again only if its patch failed.
            let fresh = handed
                .get(&name)
                .is_none_or(|(handed_rv, at)| *handed_rv != rv || now - *at >= RETRY);
            if now - since >= hold && fresh {
                handed.insert(name.clone(), (rv.clone(), now));
                if due.send((name, rv)).is_err() {
                    bail!("the finisher stopped early");
                }
            }
        }
        sleep_until(next).await;
    }
    Ok(checker)
}

async fn list(api: &Api<Workload>) -> Result<Vec<Workload>> {
    Ok(api.list(&ListParams::default()).await?.items)
}

#[tokio::test]
async fn killing_the_controller_during_a_storm_breaks_no_invariant() -> Result<()> {
    let seed = seed()?;
    println!("chaos seed {seed} (KUOTA_CHAOS_SEED={seed} replays this run)");
    let mut rng = Rng(seed);
    let client = support::client().await?;
    support::apply_crds(&client).await?;
    let ns = TestNamespace::create(&client, "chaos").await?;
    let cohort = unique_name("cohort");
    let queues: Vec<String> = (0..QUOTAS.len())
        .map(|i| unique_name(&format!("cq{i}")))
        .collect();
    let flavors = [unique_name("rf-a"), unique_name("rf-b")];
    apply_yaml(
        &client,
        &ns.name,
        &cohort_yaml(&ns.name, &cohort, &queues, &flavors),
    )
    .await?;
    let storm = Arc::new(plan_storm(&mut rng, &queues));
    let kills = plan_kills(&mut rng);
    println!("kills planned (moment after the storm starts, time dead): {kills:?}");
    let holds = storm.iter().map(|p| (p.name.clone(), p.hold)).collect();
    let api: Api<Workload> = Api::namespaced(client.clone(), &ns.name);

    let mut replica = Replica::spawn("chaos-0", ELECTION).await?;
    let start = Instant::now();
    let finishes = Arc::new(Finishes::default());
    let stop = Arc::new(AtomicBool::new(false));
    let (due_tx, due_rx) = mpsc::unbounded_channel();
    let finisher = tokio::spawn(run_finisher(api.clone(), due_rx, finishes.clone()));
    let sampler = tokio::spawn(run_sampler(
        client.clone(),
        ns.name.clone(),
        Checker::new(&cohort),
        holds,
        due_tx,
        stop.clone(),
    ));
    let creator = tokio::spawn(create_storm(api.clone(), storm.clone(), start));

    for (index, (at, down)) in kills.iter().enumerate() {
        sleep_until(start + *at).await;
        let killed_at = start.elapsed();
        replica.signal("KILL")?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while !replica.exited() {
            ensure!(
                Instant::now() < deadline,
                "{} outlived SIGKILL",
                replica.name
            );
            sleep(Duration::from_millis(50)).await;
        }
        println!(
            "kill {}: {} killed at {killed_at:?} ({}), restarted after {down:?}",
            index + 1,
            replica.name,
            invariants::tally(&list(&api).await?)
        );
        sleep(*down).await;
        replica = Replica::spawn(&format!("chaos-{}", index + 1), ELECTION).await?;
    }
    creator.await??;

    // Once the last controller leads, nothing is left undecided.
    let deadline = Instant::now() + CLASSIFIED;
    loop {
        if sampler.is_finished() {
            sampler.await??;
            bail!("the sampler stopped before it was told to");
        }
        let listed = list(&api).await?;
        let unclassified = invariants::unclassified(&listed);
        if listed.len() == STORM && unclassified.is_empty() {
            break;
        }
        if Instant::now() >= deadline {
            bail!(
                "{CLASSIFIED:?} after the last restart, {} of {} Workloads are neither admitted, \
                 waiting with a reason, nor finished ({}); first:\n{}\ncontroller log:\n{}",
                unclassified.len(),
                listed.len(),
                invariants::tally(&listed),
                unclassified[..unclassified.len().min(5)].join("\n"),
                replica.log_tail()
            );
        }
        sleep(Duration::from_millis(500)).await;
    }

    // The finisher drives the storm to its end.
    loop {
        if sampler.is_finished() {
            sampler.await??;
            bail!("the sampler stopped before it was told to");
        }
        let listed = list(&api).await?;
        if listed.iter().all(invariants::finished) {
            break;
        }
        if start.elapsed() >= DRAINED {
            bail!(
                "the storm did not finish within {DRAINED:?}: {}\ncontroller log:\n{}",
                invariants::tally(&listed),
                replica.log_tail()
            );
        }
        sleep(Duration::from_millis(500)).await;
    }
    let drained_at = start.elapsed();
    // Every finished Workload gave its quota back, in what each ClusterQueue reports.
    for cq in &queues {
        kueue::until_queue_status(&client, cq, |s| {
            s.reserving_workloads.unwrap_or(0) == 0 && s.admitted_workloads.unwrap_or(0) == 0
        })
        .await?;
    }
    stop.store(true, Ordering::Relaxed);
    let checker = sampler.await??;
    finisher.await?;

    let listed = list(&api).await?;
    let evictions: i64 = listed
        .iter()
        .filter_map(|w| w.status.as_ref()?.scheduling_stats.as_ref())
        .flat_map(|s| s.evictions.iter())
        .map(|e| i64::from(e.count))
        .sum();
    println!(
        "chaos: storm {STORM} Workloads in {WAVES} waves over {} ClusterQueues, kills {}, \
         samples {}, evictions {evictions}, finished {} (finish conflicts {}, errors {}), \
         drained in {drained_at:?}, violations {}",
        queues.len(),
        kills.len(),
        checker.samples,
        finishes.done.load(Ordering::Relaxed),
        finishes.conflicts.load(Ordering::Relaxed),
        finishes.errors.load(Ordering::Relaxed),
        checker.violations()
    );
    ensure!(
        checker.violations() == 0,
        "{} invariant violations (seed {seed}):\n{}",
        checker.violations(),
        checker.report()
    );
    ns.delete().await
}
