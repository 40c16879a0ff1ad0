//! The Workload storm the chaos cases share: a cohort of three ClusterQueues with two flavors,
//! borrowing limits and preemption, Workloads created wave by wave, a finisher that marks
//! admitted Workloads finished after a seeded hold, and a sampler that feeds every sample to the
//! invariant checker. A case starts a [`Storm`], does its damage, then drains it.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use futures::StreamExt;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use kuota::api::{ClusterQueue, Workload};
use serde_json::json;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep, sleep_until};

use super::invariants::{self, Checker};
use super::rng::Rng;
use crate::support::kueue::{self, apply_yaml};
use crate::support::{TestNamespace, unique_name};

const SAMPLE_EVERY: Duration = Duration::from_millis(200);
/// When a Workload whose finish patch failed is handed to the finisher again.
const RETRY: Duration = Duration::from_secs(2);
/// How long a create may keep failing for a reason other than the API's answer (the API
/// server restarting, say) before the storm gives up.
const CREATE_PATIENCE: Duration = Duration::from_secs(60);
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

/// How big a storm is and how its waves are spaced.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub size: usize,
    pub waves: usize,
    pub wave_gap: Duration,
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

/// A storm planned, not yet started.
pub struct Plan {
    shape: Shape,
    workloads: Vec<Planned>,
}

/// Waves lean on one ClusterQueue each, so later waves reclaim what earlier ones borrowed, and
/// carry higher priorities, so they preempt within their queue too.
pub fn plan(rng: &mut Rng, cohort: &Cohort, shape: Shape) -> Plan {
    let queues = &cohort.queues;
    let workloads = (0..shape.size)
        .map(|i| {
            let wave = i * shape.waves / shape.size;
            let queue = if rng.below(10) < 6 {
                &queues[wave % queues.len()]
            } else {
                rng.pick(queues)
            };
            let priority = match rng.below(4) as usize + wave * 4 / shape.waves {
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
        .collect();
    Plan { shape, workloads }
}

/// The storm's namespace, cohort, flavors and ClusterQueues (each with a LocalQueue
/// `lq-<ClusterQueue>`).
pub struct Cohort {
    pub client: Client,
    pub ns: TestNamespace,
    pub name: String,
    pub queues: Vec<String>,
}

impl Cohort {
    pub async fn create(client: &Client, prefix: &str) -> Result<Cohort> {
        crate::support::apply_crds(client).await?;
        let ns = TestNamespace::create(client, prefix).await?;
        let name = unique_name("cohort");
        let queues: Vec<String> = (0..QUOTAS.len())
            .map(|i| unique_name(&format!("cq{i}")))
            .collect();
        let flavors = [unique_name("rf-a"), unique_name("rf-b")];
        apply_yaml(client, &ns.name, &yaml(&ns.name, &name, &queues, &flavors)).await?;
        Ok(Cohort {
            client: client.clone(),
            ns,
            name,
            queues,
        })
    }
}

fn yaml(namespace: &str, cohort: &str, queues: &[String], flavors: &[String; 2]) -> String {
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

/// Creates one Workload; an answer from the API other than success fails, a failure to reach
/// the API is retried (an earlier attempt that did create it shows as AlreadyExists).
async fn create(api: &Api<Workload>, object: &Workload) -> Result<()> {
    let name = object.metadata.name.clone().unwrap_or_default();
    let deadline = Instant::now() + CREATE_PATIENCE;
    let mut retried = false;
    loop {
        match api.create(&PostParams::default(), object).await {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(status)) if retried && status.code == 409 => return Ok(()),
            Err(kube::Error::Api(status)) => bail!("create Workload {name}: {status:?}"),
            Err(e) if Instant::now() >= deadline => {
                return Err(e).with_context(|| format!("create Workload {name}"));
            }
            Err(_) => {
                retried = true;
                sleep(Duration::from_millis(500)).await;
            }
        }
    }
}

/// Creates the storm wave by wave.
async fn create_storm(
    api: Api<Workload>,
    storm: Vec<Planned>,
    shape: Shape,
    start: Instant,
) -> Result<()> {
    for wave in 0..shape.waves {
        sleep_until(start + shape.wave_gap * wave as u32).await;
        let objects = storm
            .iter()
            .filter(|p| p.wave == wave)
            .map(workload)
            .collect::<Result<Vec<_>>>()?;
        let results: Vec<Result<()>> = futures::stream::iter(objects)
            .map(|object| {
                let api = api.clone();
                async move { create(&api, &object).await }
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
                Err(_) => &finishes.errors,
            };
            counter.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// What the sampler did: the checker it fed, and the samples it could not take (the API
/// server unreachable).
pub struct Sampled {
    pub checker: Checker,
    pub missed: u64,
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
) -> Result<Sampled> {
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &namespace);
    let queues: Api<ClusterQueue> = Api::all(client);
    let mut admitted_since: HashMap<String, Instant> = HashMap::new();
    // What was handed to the finisher: the version, and when.
    let mut handed: HashMap<String, (String, Instant)> = HashMap::new();
    let mut missed = 0;
    while !stop.load(Ordering::Relaxed) {
        let next = Instant::now() + SAMPLE_EVERY;
        let lists = (
            workloads.list(&ListParams::default()).await,
            queues.list(&ListParams::default()).await,
        );
        let (Ok(listed), Ok(cqs)) = lists else {
            missed += 1;
            sleep_until(next).await;
            continue;
        };
        let listed = listed.items;
        checker.observe(&listed, &cqs.items);
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
    Ok(Sampled { checker, missed })
}

/// Lists the storm's Workloads, retrying while the API server cannot be reached.
pub async fn list(api: &Api<Workload>) -> Result<Vec<Workload>> {
    let deadline = Instant::now() + CREATE_PATIENCE;
    loop {
        match api.list(&ListParams::default()).await {
            Ok(list) => return Ok(list.items),
            Err(e) if matches!(e, kube::Error::Api(_)) || Instant::now() >= deadline => {
                return Err(e).context("list the storm's Workloads");
            }
            Err(_) => sleep(Duration::from_millis(500)).await,
        }
    }
}

/// A storm under way.
pub struct Storm {
    pub start: Instant,
    pub shape: Shape,
    pub api: Api<Workload>,
    finishes: Arc<Finishes>,
    stop: Arc<AtomicBool>,
    sampler: JoinHandle<Result<Sampled>>,
    finisher: JoinHandle<()>,
    creator: JoinHandle<Result<()>>,
}

/// A drained storm's figures.
pub struct Outcome {
    pub sampled: Sampled,
    pub drained_at: Duration,
    figures: String,
}

impl Outcome {
    /// The figures every case prints: storm, samples, evictions, finishes, violations.
    pub fn figures(&self) -> String {
        format!(
            "{}, samples {} (missed {}), drained in {:?}, violations {} {}",
            self.figures,
            self.sampled.checker.samples,
            self.sampled.missed,
            self.drained_at,
            self.sampled.checker.violations(),
            self.sampled.checker.found.kinds()
        )
    }
}

impl Storm {
    /// Starts creating, sampling and finishing the planned storm.
    pub fn start(cohort: &Cohort, plan: Plan) -> Storm {
        let Plan {
            shape,
            workloads: storm,
        } = plan;
        let holds = storm.iter().map(|p| (p.name.clone(), p.hold)).collect();
        let api: Api<Workload> = Api::namespaced(cohort.client.clone(), &cohort.ns.name);
        let start = Instant::now();
        let finishes = Arc::new(Finishes::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (due_tx, due_rx) = mpsc::unbounded_channel();
        let finisher = tokio::spawn(run_finisher(api.clone(), due_rx, finishes.clone()));
        let sampler = tokio::spawn(run_sampler(
            cohort.client.clone(),
            cohort.ns.name.clone(),
            Checker::new(&cohort.name),
            holds,
            due_tx,
            stop.clone(),
        ));
        let creator = tokio::spawn(create_storm(api.clone(), storm, shape, start));
        Storm {
            start,
            shape,
            api,
            finishes,
            stop,
            sampler,
            finisher,
            creator,
        }
    }

    /// How the storm's Workloads stand now.
    pub async fn tally(&self) -> Result<String> {
        Ok(invariants::tally(&list(&self.api).await?))
    }

    /// Stops the sampler and adds what its checker found so far to `failure`.
    async fn fail(self, failure: String) -> anyhow::Error {
        self.stop.store(true, Ordering::Relaxed);
        match self.sampler.await {
            Ok(Ok(sampled)) => anyhow::anyhow!(
                "{failure}\nsamples {}, violations {} {}:\n{}",
                sampled.checker.samples,
                sampled.checker.violations(),
                sampled.checker.found.kinds(),
                sampled.checker.found.report()
            ),
            Ok(Err(e)) => e.context(failure),
            Err(e) => anyhow::Error::new(e).context(failure),
        }
    }

    async fn sampler_alive(&mut self) -> Result<()> {
        if self.sampler.is_finished() {
            (&mut self.sampler).await??;
            bail!("the sampler stopped before it was told to");
        }
        Ok(())
    }

    /// Waits until every Workload is admitted, waiting with a reason, or finished (within
    /// `classified` of now), then until all are finished (within `drained` of the start), and
    /// until each ClusterQueue reports nothing reserved; stops the sampler. `log` gives the tail
    /// of the controller's log for a failure message.
    pub async fn drain(
        mut self,
        cohort: &Cohort,
        classified: Duration,
        drained: Duration,
        log: &dyn Fn() -> String,
    ) -> Result<Outcome> {
        (&mut self.creator).await??;
        let deadline = Instant::now() + classified;
        loop {
            self.sampler_alive().await?;
            let listed = list(&self.api).await?;
            let unclassified = invariants::unclassified(&listed);
            if listed.len() == self.shape.size && unclassified.is_empty() {
                break;
            }
            if Instant::now() >= deadline {
                let failure = format!(
                    "{classified:?} after the last disruption, {} of {} Workloads are neither \
                     admitted, waiting with a reason, nor finished ({}); first:\n{}\n\
                     controller log:\n{}",
                    unclassified.len(),
                    listed.len(),
                    invariants::tally(&listed),
                    unclassified[..unclassified.len().min(5)].join("\n"),
                    log()
                );
                return Err(self.fail(failure).await);
            }
            sleep(Duration::from_millis(500)).await;
        }
        // The finisher drives the storm to its end.
        loop {
            self.sampler_alive().await?;
            let listed = list(&self.api).await?;
            if listed.iter().all(invariants::finished) {
                break;
            }
            if self.start.elapsed() >= drained {
                let failure = format!(
                    "the storm did not finish within {drained:?}: {}\ncontroller log:\n{}",
                    invariants::tally(&listed),
                    log()
                );
                return Err(self.fail(failure).await);
            }
            sleep(Duration::from_millis(500)).await;
        }
        let drained_at = self.start.elapsed();
        // Every finished Workload gave its quota back, in what each ClusterQueue reports.
        for cq in &cohort.queues {
            kueue::until_queue_status(&cohort.client, cq, |s| {
                s.reserving_workloads.unwrap_or(0) == 0 && s.admitted_workloads.unwrap_or(0) == 0
            })
            .await?;
        }
        self.stop.store(true, Ordering::Relaxed);
        let sampled = self.sampler.await??;
        self.finisher.await?;
        let listed = list(&self.api).await?;
        let evictions: i64 = listed
            .iter()
            .filter_map(|w| w.status.as_ref()?.scheduling_stats.as_ref())
            .flat_map(|s| s.evictions.iter())
            .map(|e| i64::from(e.count))
            .sum();
        let figures = format!(
            "storm {} Workloads in {} waves over {} ClusterQueues, evictions {evictions}, \
             finished {} (finish conflicts {}, errors {})",
            self.shape.size,
            self.shape.waves,
            cohort.queues.len(),
            self.finishes.done.load(Ordering::Relaxed),
            self.finishes.conflicts.load(Ordering::Relaxed),
            self.finishes.errors.load(Ordering::Relaxed),
        );
        Ok(Outcome {
            sampled,
            drained_at,
            figures,
        })
    }
}
