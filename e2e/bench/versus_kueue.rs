//! kuota against Kueue's manager, side by side in one run on the same local control plane (a
//! benchmark, not a test: it prints figures and asserts nothing about time):
//!
//! 1. the API server's ceiling for Workload status writes: a bare client that only writes
//!    admissions, with no controller running;
//! 2. Kueue's performance-harness shape (5 cohorts × 6 ClusterQueues, 15,000 Workloads), run
//!    by kuota, its objects removed, then run by Kueue's manager;
//! 3. the same shape on a TAS flavor over 1,000 kwok nodes, kuota then Kueue.
//!
//! Only one controller runs at a time. For each: the time from the first Workload's creation
//! until every Workload has been admitted once, admissions per second, the controller's CPU
//! seconds over that time, its peak resident set, and the API requests per Workload (the API
//! server's counters, without the benchmark's own creations and finishes).
//!
//! ```text
//! e2e/cluster up --nodes 0 && eval "$(e2e/cluster env)"
//! cargo bench --features e2e --bench versus_kueue
//! e2e/cluster down
//! ```
//!
//! Kueue's manager comes from e2e/kueue-build.sh (or `KUEUE_DIR`, a folder it made). Settings,
//! all from the environment: `VERSUS_WORKLOADS` (15000), `VERSUS_TAS_WORKLOADS` (15000),
//! `VERSUS_BARE_WRITES` (15000), `VERSUS_QPS` / `VERSUS_BURST` (the `clientConnection` both
//! controllers get; -1 / 0: no client-side limit), `VERSUS_RUN_SCALE` (1: the harness's run
//! times), `VERSUS_PATIENCE_SECS` (1800, per phase), `VERSUS_SHAPES` (`baseline,tas`),
//! `VERSUS_CONTROLLERS` (`kuota,kueue`: which controllers run each shape, e.g. `kuota` alone to
//! measure it quickly).

#[path = "../tests/support/mod.rs"]
#[allow(dead_code)]
mod support;

#[path = "versus/cluster.rs"]
mod cluster;
#[path = "versus/drive.rs"]
mod drive;
#[path = "versus/process.rs"]
mod process;
#[path = "versus/requests.rs"]
mod requests;
#[path = "versus/shape.rs"]
mod shape;

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use kube::Client;

use drive::Measured;
use process::{Controller, RateLimit};
use shape::Shape;
use support::nodes::NodeSet;
use support::unique_name;

fn setting<T: FromStr>(name: &str, default: T) -> Result<T> {
    match std::env::var(name) {
        Ok(value) if !value.is_empty() => value
            .parse()
            .ok()
            .with_context(|| format!("{name}={value:?} is not valid")),
        _ => Ok(default),
    }
}

fn state_dir() -> PathBuf {
    match std::env::var_os("KUOTA_E2E_STATE") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => support::repo_root().join("e2e/.state"),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Which {
    Kuota,
    Kueue,
}

struct Row {
    shape: &'static str,
    controller: &'static str,
    measured: Measured,
}

struct Run {
    client: Client,
    kueue: PathBuf,
    state: PathBuf,
    limit: RateLimit,
    scale: f64,
    patience: Duration,
    id: String,
}

impl Run {
    async fn phase(
        &self,
        which: Which,
        shape_name: &'static str,
        count: usize,
        tas_nodes: Option<String>,
    ) -> Result<Row> {
        let controller = match which {
            Which::Kuota => Controller::kuota(&self.state, self.limit).await?,
            Which::Kueue => Controller::kueue(&self.kueue, &self.state, self.limit).await?,
        };
        let tag = if which == Which::Kuota { "kt" } else { "kq" };
        let shape = Shape {
            prefix: format!("{}-{shape_name}-{tag}", self.id),
            namespace: format!("{}-{shape_name}-{tag}", self.id),
            tas_nodes,
        };
        println!(
            "{shape_name}, {}: {count} Workloads (log: {})",
            controller.name,
            controller.log.display()
        );
        cluster::create_namespace(&self.client, &shape.namespace).await?;
        support::kueue::apply_yaml(&self.client, &shape.namespace, &shape.queues_yaml()).await?;
        cluster::until_queues_active(&self.client, &shape).await?;
        let planned = shape.workloads(count, self.scale)?;
        let measured = drive::run(
            &self.client,
            &shape.namespace,
            planned,
            &controller,
            self.patience,
        )
        .await?;
        print_row(shape_name, controller.name, &measured);
        cluster::remove(&self.client, &shape).await?;
        let name = controller.name;
        controller.stop().await?;
        Ok(Row {
            shape: shape_name,
            controller: name,
            measured,
        })
    }
}

fn print_row(shape: &str, controller: &str, m: &Measured) {
    println!(
        "  {shape}, {controller}: {} of {} admitted in {:.1} s (created in {:.1} s): \
         {:.1} admissions/s, {:.1} CPU s, peak RSS {:.1} MiB, {:.2} API requests per Workload \
         ({} finisher writes taken out)",
        m.decided,
        m.total,
        m.elapsed.as_secs_f64(),
        m.created_in.as_secs_f64(),
        m.per_second(),
        m.cpu_seconds,
        m.peak_rss_kib as f64 / 1024.0,
        m.requests.total() / m.total.max(1) as f64,
        m.finisher_writes
    );
}

#[tokio::main]
async fn main() -> Result<()> {
    let workloads: usize = setting("VERSUS_WORKLOADS", 15_000)?;
    let tas_workloads: usize = setting("VERSUS_TAS_WORKLOADS", 15_000)?;
    let bare_writes: usize = setting("VERSUS_BARE_WRITES", 15_000)?;
    let shapes: String = setting("VERSUS_SHAPES", "baseline,tas".to_string())?;
    let controllers: String = setting("VERSUS_CONTROLLERS", "kuota,kueue".to_string())?;
    let which: Vec<Which> = [(Which::Kuota, "kuota"), (Which::Kueue, "kueue")]
        .into_iter()
        .filter(|(_, name)| controllers.split(',').any(|c| c == *name))
        .map(|(which, _)| which)
        .collect();
    ensure!(
        !which.is_empty(),
        "VERSUS_CONTROLLERS={controllers:?} names neither kuota nor kueue"
    );
    let limit = RateLimit {
        qps: setting("VERSUS_QPS", -1.0)?,
        burst: setting("VERSUS_BURST", 0)?,
    };
    let kueue = support::kueue_build::dir(None)?;
    let run = Run {
        client: support::client().await?,
        state: state_dir(),
        limit,
        scale: setting("VERSUS_RUN_SCALE", 1.0)?,
        patience: Duration::from_secs(setting("VERSUS_PATIENCE_SECS", 1800)?),
        id: unique_name("vs"),
        kueue,
    };
    println!(
        "Kueue from {}; clientConnection qps {} burst {} for both; run times × {}",
        run.kueue.display(),
        limit.qps,
        limit.burst,
        run.scale
    );
    cluster::apply_kueue_crds(&run.client, &run.kueue).await?;
    cluster::create_namespace(&run.client, "kueue-system").await?;

    let bare_ns = format!("{}-bare", run.id);
    cluster::create_namespace(&run.client, &bare_ns).await?;
    let [created, wrote] = cluster::bare_writer(&run.client, &bare_ns, bare_writes).await?;
    let ceiling = bare_writes as f64 / wrote.as_secs_f64();
    println!(
        "bare writer: {bare_writes} Workloads created in {:.1} s ({:.0}/s), their admissions \
         written in {:.1} s: {ceiling:.0} status writes/s",
        created.as_secs_f64(),
        bare_writes as f64 / created.as_secs_f64(),
        wrote.as_secs_f64()
    );
    cluster::remove_namespace(&run.client, &bare_ns).await?;

    let mut rows = Vec::new();
    if shapes.split(',').any(|s| s == "baseline") {
        for &which in &which {
            rows.push(run.phase(which, "baseline", workloads, None).await?);
        }
    }
    if shapes.split(',').any(|s| s == "tas") {
        let mut nodes = NodeSet::new(&unique_name("vn"), 10, 10, 10);
        nodes
            .labels
            .insert("e2e.kuota.dev/bench".into(), nodes.prefix.clone());
        let names = nodes.create(&run.client).await?;
        println!("{} kwok nodes ready", names.len());
        for &which in &which {
            rows.push(
                run.phase(which, "tas", tas_workloads, Some(nodes.prefix.clone()))
                    .await?,
            );
        }
        nodes.delete(&run.client).await?;
    }

    println!(
        "\n| Shape | Controller | Admitted | First creation → last admission | Admissions/s | Controller CPU s | Peak RSS |"
    );
    println!("|---|---|---|---|---|---|---|");
    for row in &rows {
        let m = &row.measured;
        println!(
            "| {} | {} | {} of {} | {:.1} s | {:.1} | {:.1} | {:.1} MiB |",
            row.shape,
            row.controller,
            m.decided,
            m.total,
            m.elapsed.as_secs_f64(),
            m.per_second(),
            m.cpu_seconds,
            m.peak_rss_kib as f64 / 1024.0
        );
    }
    println!(
        "| bare writer | (none) | {bare_writes} status writes | {:.1} s | {ceiling:.0} writes/s | | |",
        wrote.as_secs_f64()
    );
    let columns: Vec<requests::Column> = rows
        .iter()
        .map(|row| requests::Column {
            title: format!("{}, {}", row.shape, row.controller),
            counts: &row.measured.requests,
            workloads: row.measured.total,
        })
        .collect();
    println!(
        "\nAPI requests from the first creation until the set drained, without the benchmark's \
         creations and finisher writes (409 conflicts in parentheses):\n\n{}\n",
        requests::table(&columns, 0.01)
    );
    // Ratios only where both controllers ran the shape.
    for pair in rows.chunks(which.len()) {
        if let [kuota, kueue] = pair {
            let (a, b) = (&kuota.measured, &kueue.measured);
            println!(
                "{}: kuota/Kueue admissions/s {:.2}×, kuota at {:.0} % of the bare-writer ceiling, \
                 peak RSS kuota/Kueue {:.2}, CPU s kuota/Kueue {:.2}",
                kuota.shape,
                a.per_second() / b.per_second(),
                100.0 * a.per_second() / ceiling,
                a.peak_rss_kib as f64 / b.peak_rss_kib as f64,
                a.cpu_seconds / b.cpu_seconds
            );
        }
    }
    Ok(())
}
