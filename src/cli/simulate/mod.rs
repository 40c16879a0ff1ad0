//! `kuota simulate`: run kuota's admission decisions on manifests, without a cluster.
//!
//! Reads ClusterQueues, Cohorts, ResourceFlavors, LocalQueues, priority classes, Namespaces and
//! Workloads (pending, or admitted when `status.admission` is set), and for topology-aware
//! scheduling Topologies, Nodes and bound Pods; replaces the failed nodes of admitted TAS
//! Workloads (or evicts them), runs admission cycles until nothing changes, and prints every
//! Workload, ClusterQueue and LocalQueue with the status kuota would write. The path is the
//! controller's: the objects go through the state caches into one engine, and its decisions
//! through the status writers.

pub mod documents;
mod load;
pub mod objects;
mod output;
mod placement_notes;
mod workloads;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;

use crate::engine::model::{EngineConfig, FairSharingConfig};
use crate::engine::queue_report::QueueReport;
use crate::engine::topology::node_health::HotSwap;
use crate::engine::{WorkloadKey, WorkloadState};
use crate::state::ClusterState;
use crate::status::annotations::set_carried;
use crate::status::queues::{cluster_queue_status, local_queue_status};
use crate::status::workload::{node_failure_eviction, workload_status};
use objects::Objects;
pub use output::Format;

/// Arguments of `kuota simulate`.
#[derive(Debug, clap::Args)]
pub struct SimulateArgs {
    /// Manifest file or folder (YAML or JSON; `-` for standard input). Repeatable.
    #[arg(short = 'f', long = "filename", required = true)]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Table)]
    pub output: Format,
    /// Feature gates, as `Name=true,Name=false` with Kueue's gate names.
    #[arg(long = "feature-gates", default_value = "")]
    pub feature_gates: String,
    /// Enable fair sharing (Kueue's `fairSharing` configuration block with default strategies).
    #[arg(long = "fair-sharing")]
    pub fair_sharing: bool,
    /// Time stamped on every condition and quota reservation (RFC 3339); defaults to now.
    #[arg(long = "now")]
    pub now: Option<String>,
    /// Kueue's configuration file, as `kuota controller --config` reads it: its feature gates,
    /// fair sharing, quota check strategy and what requests count as (`resources`).
    #[arg(long = "config")]
    pub config: Option<PathBuf>,
}

/// Bad input: the message names the file, document, object and field. Exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(String);

/// What a successful run prints.
pub fn simulate(args: &SimulateArgs) -> Result<String, InputError> {
    let bad = |message: String| InputError(message);
    let mut config = match &args.config {
        Some(path) => crate::config::load(Some(path), &args.feature_gates)
            .map_err(|e| bad(format!("--config {}: {e}", path.display())))?
            .config
            .engine_config(),
        None => EngineConfig {
            features: args
                .feature_gates
                .parse()
                .map_err(|e| bad(format!("--feature-gates: {e}")))?,
            ..EngineConfig::default()
        },
    };
    if args.fair_sharing {
        config.fair_sharing = FairSharingConfig::enabled();
    }
    let features = config.features.clone();
    let now = match &args.now {
        Some(text) => text
            .parse()
            .map(Time)
            .map_err(|e| bad(format!("--now {text:?}: {e}")))?,
        // The command's edge: without `--now` the time is read here once and passed on.
        None => crate::clock::Clock::system().time(),
    };
    let documents = documents::read_all(&args.files).map_err(|e| bad(e.to_string()))?;
    let objects = objects::decode_all(documents).map_err(|e| bad(e.to_string()))?;
    let workloads = workloads::workloads_to_simulate(&objects).map_err(|e| bad(e.to_string()))?;
    let mut state = ClusterState::new(config);
    load::load(&mut state, &objects, &workloads).map_err(bad)?;
    let swaps = state.replace_failed_nodes(&features);
    let engine = state.engine();
    // Admissions are reserved at `--now`, in whole seconds as their conditions show it.
    engine.set_now(now.0.as_second().saturating_mul(1000));
    let outcome = engine.run_until_stable();
    let states: HashMap<&WorkloadKey, &WorkloadState> =
        outcome.workloads.iter().map(|s| (&s.workload, s)).collect();
    let results: Vec<_> = workloads
        .into_iter()
        .map(|located| {
            let mut workload = located.object;
            let key = WorkloadKey::of(&workload);
            let Some(state) = states.get(&key) else {
                return workload;
            };
            let generation = workload.metadata.generation;
            let mut status = workload_status(workload.status.as_ref(), state, &now, generation);
            if let Some(HotSwap::Evicted(why)) = swaps.get(&key) {
                node_failure_eviction(&mut status, state, &why.message(), &now, generation);
            }
            set_carried(workload.annotations_mut(), &state.carried);
            workload.status = Some(status);
            workload
        })
        .collect();
    let queues = queues_with_status(&objects, &engine.queue_report(), &now);
    // Printed Workloads carry their placement quality (kuota.dev/placement-quality).
    let results = placement_notes::annotated(&objects, &results);
    let rendered = match args.output {
        Format::Table => {
            let mut notes = placement_notes::notes(&objects, &results, &swaps);
            output::add_preemption_notes(&mut notes, &outcome.events);
            output::table(engine.structure(), &results, &notes)
        }
        Format::Json => serde_json::to_string_pretty(&output::list(&results, &queues))
            .map(|s| s + "\n")
            .map_err(|e| bad(e.to_string()))?,
        Format::Yaml => yaml_serde::to_string(&output::list(&results, &queues))
            .map_err(|e| bad(e.to_string()))?,
    };
    Ok(rendered)
}

/// Runs `kuota simulate`: prints the result (exit code 1 when it cannot be written), or the input
/// error with exit code 2.
pub fn run(args: &SimulateArgs) -> ExitCode {
    match simulate(args) {
        Ok(text) => super::stdio::print_or_report("kuota simulate", &text),
        Err(error) => {
            super::stdio::report("kuota simulate", error);
            ExitCode::from(2)
        }
    }
}

/// The ClusterQueues and LocalQueues given, each with the status kuota would write.
fn queues_with_status(
    objects: &Objects,
    report: &QueueReport,
    now: &Time,
) -> Vec<serde_json::Value> {
    let mut queues = Vec::new();
    for located in &objects.cluster_queues {
        let mut queue = located.object.clone();
        if let Some(cq) = report.cluster_queue(&queue.name_any()) {
            let generation = queue.metadata.generation;
            queue.status = Some(cluster_queue_status(
                queue.status.as_ref(),
                cq,
                now,
                generation,
            ));
        }
        queues.push(serde_json::to_value(&queue).unwrap_or_default());
    }
    for located in &objects.local_queues {
        let mut queue = located.object.clone();
        let (namespace, name) = (queue.namespace().unwrap_or_default(), queue.name_any());
        if let Some(lq) = report
            .local_queues
            .iter()
            .find(|q| q.namespace == namespace && q.name == name)
        {
            let generation = queue.metadata.generation;
            queue.status = Some(local_queue_status(
                queue.status.as_ref(),
                report,
                lq,
                now,
                generation,
            ));
        }
        queues.push(serde_json::to_value(&queue).unwrap_or_default());
    }
    queues
}
