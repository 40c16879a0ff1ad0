//! The `kuota` binary's subcommands.

mod controller;
mod crds;
pub mod simulate;
mod stdio;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "kuota",
    about = "Admission and quota for Kubernetes, serving the Kueue v1beta2 API"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the controller: watch the cluster, admit Workloads and write their status.
    Controller(controller::ControllerArgs),
    /// Print the CustomResourceDefinitions kuota serves, as multi-document YAML.
    Crds(crds::CrdsArgs),
    /// Run admission decisions on manifests, without a cluster, and print every Workload's status.
    Simulate(simulate::SimulateArgs),
    /// Print kuota's version.
    Version,
}

/// Parses the command line and runs the chosen subcommand.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Controller(args) => controller::run(&args),
        Command::Crds(args) => match crds::run(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                stdio::report("kuota crds", format_args!("{error:#}"));
                ExitCode::FAILURE
            }
        },
        Command::Simulate(args) => simulate::run(&args),
        Command::Version => stdio::print_or_report(
            "kuota version",
            &format!("kuota {}\n", env!("CARGO_PKG_VERSION")),
        ),
    }
}
