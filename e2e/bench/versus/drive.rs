//! One phase: the Workloads of a shape created as fast as the API server takes them, a watch
//! that records when each is first admitted, and a finisher that marks each admitted Workload
//! Finished after its class's run time (as Kueue's job controller does when a job ends, and as
//! Kueue's performance harness does), so quota frees up and the whole set drains. The same code
//! drives both controllers. The API server's request counters are read before the first creation
//! and once the set has drained; the creations and the finisher's writes are taken out.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use futures::StreamExt;
use kube::api::{Patch, PatchParams, PostParams};
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client, ResourceExt};
use kuota::api::Workload;
use serde_json::json;
use tokio::time::{Instant, sleep, sleep_until};

use super::process::Controller;
use super::requests::{self, Counts, Key};
use super::shape::Planned;
use crate::support::kueue::condition;

/// Requests in flight at once: the bench's creations, the finisher's patches, and the bare
/// writer (kuota's writer allows 32 as well).
pub const CONCURRENCY: usize = 32;

/// What one controller did with one shape.
pub struct Measured {
    pub total: usize,
    /// Workloads admitted at least once before the patience ran out.
    pub decided: usize,
    /// From the first creation to the last first admission (or to the give-up).
    pub elapsed: Duration,
    /// How long creating every Workload took.
    pub created_in: Duration,
    /// Controller CPU seconds over `elapsed`.
    pub cpu_seconds: f64,
    pub peak_rss_kib: u64,
    /// API requests from the first creation until the set drained, without the benchmark's own.
    pub requests: Counts,
    /// The finisher's status writes (taken out of `requests`), tries included.
    pub finisher_writes: u64,
}

impl Measured {
    pub fn per_second(&self) -> f64 {
        self.decided as f64 / self.elapsed.as_secs_f64()
    }
}

/// Per Workload, as the watch last saw it.
#[derive(Default)]
struct Seen {
    /// Status writes the finisher sent.
    finisher_writes: u64,
    /// Name → (resourceVersion, holds quota now).
    latest: HashMap<String, (String, bool)>,
    first_admitted: HashMap<String, Instant>,
    /// Names with a finish pending.
    scheduled: HashSet<String>,
}

type Shared = Arc<Mutex<Seen>>;

fn lock(seen: &Shared) -> std::sync::MutexGuard<'_, Seen> {
    seen.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn holds_quota(workload: &Workload) -> bool {
    let is_true = |t: &str| condition(workload, t).is_some_and(|c| c.status == "True");
    is_true("QuotaReserved") && !is_true("Finished")
}

pub async fn run(
    client: &Client,
    namespace: &str,
    planned: Vec<Planned>,
    controller: &Controller,
    patience: Duration,
) -> Result<Measured> {
    let api: Api<Workload> = Api::namespaced(client.clone(), namespace);
    let total = planned.len();
    let runtimes: Arc<HashMap<String, Duration>> = Arc::new(
        planned
            .iter()
            .map(|p| (p.workload.name_any(), p.runtime))
            .collect(),
    );
    let seen: Shared = Default::default();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let watching = tokio::spawn(watch(api.clone(), seen.clone(), runtimes, ready_tx));
    ready_rx
        .await
        .context("the Workload watch ended before it listed")?;

    let requests_before = requests::scrape(client).await?;
    let cpu_before = controller.cpu_seconds()?;
    let started = Instant::now();
    let creates: Vec<Result<()>> = futures::stream::iter(planned)
        .map(|p| {
            let api = api.clone();
            async move {
                let name = p.workload.name_any();
                api.create(&PostParams::default(), &p.workload)
                    .await
                    .with_context(|| format!("create Workload {name}"))?;
                Ok(())
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    creates.into_iter().collect::<Result<Vec<()>>>()?;
    let created_in = started.elapsed();
    println!("  {total} Workloads created in {created_in:.1?}");

    let deadline = started + patience;
    let mut next_report = Instant::now() + Duration::from_secs(15);
    let (decided, last) = loop {
        let (decided, last) = {
            let seen = lock(&seen);
            (
                seen.first_admitted.len(),
                seen.first_admitted.values().max().copied(),
            )
        };
        if decided >= total || Instant::now() >= deadline {
            break (decided, last.unwrap_or_else(Instant::now));
        }
        if Instant::now() >= next_report {
            println!(
                "  {decided} of {total} admitted after {:.0?}",
                started.elapsed()
            );
            next_report += Duration::from_secs(15);
        }
        sleep(Duration::from_millis(50)).await;
    };
    let cpu_seconds = controller.cpu_seconds()? - cpu_before;
    let peak_rss_kib = controller.peak_rss_kib()?;
    let elapsed = if decided >= total {
        last.duration_since(started)
    } else {
        started.elapsed()
    };
    until_drained(&seen, Duration::from_secs(120)).await;
    // The queue status that follows the last finish belongs to the phase too.
    sleep(Duration::from_secs(2)).await;
    let finisher_writes = lock(&seen).finisher_writes;
    // The API server counts a server-side apply (the finisher's) under the verb APPLY.
    let workloads = |verb, sub| Key::new(verb, "kueue.x-k8s.io/workloads", sub);
    let requests = requests::scrape(client)
        .await?
        .since(&requests_before)
        .without(&[
            (workloads("POST", ""), total as f64),
            (workloads("APPLY", "status"), finisher_writes as f64),
        ])
        .without_control_plane();
    watching.abort();
    Ok(Measured {
        total,
        decided,
        elapsed,
        created_in,
        cpu_seconds,
        peak_rss_kib,
        requests,
        finisher_writes,
    })
}

/// Waits (at most `limit`) until no admitted Workload is left unfinished, so that deleting
/// them afterwards does not race the finisher.
async fn until_drained(seen: &Shared, limit: Duration) {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if lock(seen).scheduled.is_empty() {
            return;
        }
        sleep(Duration::from_millis(200)).await;
    }
}

/// Records every Workload's state and hands newly admitted ones to a finisher task.
async fn watch(
    api: Api<Workload>,
    seen: Shared,
    runtimes: Arc<HashMap<String, Duration>>,
    ready: tokio::sync::oneshot::Sender<()>,
) {
    let mut ready = Some(ready);
    let in_flight = Arc::new(tokio::sync::Semaphore::new(CONCURRENCY));
    let mut stream = watcher::watcher(api.clone(), watcher::Config::default()).boxed();
    while let Some(event) = stream.next().await {
        let workload = match event {
            Ok(Event::Apply(w) | Event::InitApply(w)) => w,
            Ok(Event::InitDone) => {
                if let Some(ready) = ready.take() {
                    let _ = ready.send(());
                }
                continue;
            }
            _ => continue,
        };
        let now = Instant::now();
        let name = workload.name_any();
        let admitted = holds_quota(&workload);
        let rv = workload.resource_version().unwrap_or_default();
        let mut state = lock(&seen);
        state.latest.insert(name.clone(), (rv, admitted));
        if !admitted {
            continue;
        }
        state.first_admitted.entry(name.clone()).or_insert(now);
        if state.scheduled.insert(name.clone()) {
            let due = now + runtimes.get(&name).copied().unwrap_or_default();
            tokio::spawn(finish_when_due(
                api.clone(),
                seen.clone(),
                in_flight.clone(),
                name,
                due,
            ));
        }
    }
}

/// At `due`, marks the Workload Finished if it still holds quota in the version the watch saw
/// last; a Workload preempted meanwhile is left for its next admission.
async fn finish_when_due(
    api: Api<Workload>,
    seen: Shared,
    in_flight: Arc<tokio::sync::Semaphore>,
    name: String,
    due: Instant,
) {
    sleep_until(due).await;
    loop {
        let latest = lock(&seen).latest.get(&name).cloned();
        let Some((rv, true)) = latest else {
            lock(&seen).scheduled.remove(&name);
            return;
        };
        let Ok(_permit) = in_flight.acquire().await else {
            return;
        };
        let patch = json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "Workload",
            "metadata": {"resourceVersion": rv},
            "status": {"conditions": [{
                "type": "Finished", "status": "True", "reason": "Succeeded",
                "message": "Job finished successfully",
                "lastTransitionTime": k8s_openapi::jiff::Timestamp::now().to_string(),
            }]},
        });
        let params = PatchParams::apply("kueue-job-controller-Finished").force();
        lock(&seen).finisher_writes += 1;
        match api
            .patch_status(&name, &params, &Patch::Apply(&patch))
            .await
        {
            Ok(_) => {
                lock(&seen).scheduled.remove(&name);
                return;
            }
            Err(kube::Error::Api(status)) if status.code == 404 => {
                lock(&seen).scheduled.remove(&name);
                return;
            }
            // Changed since the watch saw it: look again once the watch has caught up.
            Err(_) => sleep(Duration::from_millis(50)).await,
        }
    }
}
