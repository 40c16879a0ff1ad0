//! `kuota simulate`: run kuota's admission decisions on manifests, without a cluster.
//!
//! Reads ClusterQueues, Cohorts, ResourceFlavors, LocalQueues, priority classes, Namespaces and
//! Workloads (pending, or admitted when `status.admission` is set), and for topology-aware
//! scheduling Topologies, Nodes and bound Pods; replaces the failed nodes of admitted TAS
//! Workloads (or evicts them), runs admission cycles until nothing changes, and prints every
//! Workload with the status kuota would write.

pub mod documents;
pub mod objects;
mod output;
mod placement_notes;
mod snapshot;
mod topology;

use std::path::PathBuf;
use std::process::ExitCode;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::engine::Engine;
use crate::engine::features::FeatureGates;
use crate::engine::model::{EngineConfig, FairSharingConfig};
use crate::engine::topology::SnapshotPlacer;
use crate::status::workload::{node_failure_eviction, workload_status};
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
    /// Time stamped on every condition (RFC 3339); defaults to now.
    #[arg(long = "now")]
    pub now: Option<String>,
}

/// Bad input: the message names the file, document, object and field. Exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(String);

/// What a successful run prints.
pub fn simulate(args: &SimulateArgs) -> Result<String, InputError> {
    let bad = |message: String| InputError(message);
    let features: FeatureGates = args
        .feature_gates
        .parse()
        .map_err(|e| bad(format!("--feature-gates: {e}")))?;
    let now = match &args.now {
        Some(text) => text
            .parse()
            .map(Time)
            .map_err(|e| bad(format!("--now {text:?}: {e}")))?,
        None => Time(k8s_openapi::jiff::Timestamp::now()),
    };
    let documents = documents::read_all(&args.files).map_err(|e| bad(e.to_string()))?;
    let objects = objects::decode_all(documents).map_err(|e| bad(e.to_string()))?;
    let workloads = snapshot::workloads_to_simulate(&objects).map_err(|e| bad(e.to_string()))?;
    let mut prepared =
        snapshot::prepare(&objects, workloads).map_err(|(at, e)| bad(format!("{at}: {e}")))?;
    let mut topology = topology::build(&objects, &prepared.snapshot).map_err(bad)?;
    let swaps = topology::hot_swap(&objects, &mut topology, &mut prepared.snapshot, &features);
    let placer = SnapshotPlacer::new(topology, features.clone());
    let config = EngineConfig {
        features,
        fair_sharing: if args.fair_sharing {
            FairSharingConfig::enabled()
        } else {
            FairSharingConfig::default()
        },
        ..EngineConfig::default()
    };
    let mut engine = Engine::with_placer(prepared.snapshot.clone(), config, Box::new(placer))
        .map_err(|e| bad(e.to_string()))?;
    let outcome = engine.run_until_stable();
    let results: Vec<_> = prepared
        .workloads
        .into_iter()
        .zip(&outcome.workloads)
        .map(|(located, state)| {
            let mut workload = located.object;
            let generation = workload.metadata.generation;
            let mut status = workload_status(state, &now, generation);
            if let Some(topology::HotSwap::Evicted { message, .. }) =
                swaps.get(&state.workload.to_string())
            {
                node_failure_eviction(&mut status, message, &now, generation);
            }
            workload.status = Some(status);
            workload
        })
        .collect();
    // Printed Workloads carry their placement quality (kuota.dev/placement-quality).
    let results = placement_notes::annotated(&objects, &results);
    let rendered = match args.output {
        Format::Table => {
            let mut notes = placement_notes::notes(&objects, &results, &swaps);
            output::add_preemption_notes(&mut notes, &outcome.events);
            output::table(&prepared.snapshot, &results, &notes)
        }
        Format::Json => serde_json::to_string_pretty(&output::list(&results))
            .map(|s| s + "\n")
            .map_err(|e| bad(e.to_string()))?,
        Format::Yaml => {
            yaml_serde::to_string(&output::list(&results)).map_err(|e| bad(e.to_string()))?
        }
    };
    Ok(rendered)
}

/// Runs `kuota simulate`: prints the result, or the input error with exit code 2.
pub fn run(args: &SimulateArgs) -> ExitCode {
    match simulate(args) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("kuota simulate: {error}");
            ExitCode::from(2)
        }
    }
}
