//! The `kuota` binary's subcommands.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod simulate;

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
    /// Print kuota's version.
    Version,
}

/// Parses the command line and runs the chosen subcommand.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Version => {
            println!("kuota {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
    }
}
