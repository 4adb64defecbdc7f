//! The top-level clap definition of `hlctl`.

use clap::{Args, Parser, Subcommand};

/// Inspect, change, measure and tune the network of a home-lab box.
#[derive(Debug, Parser)]
#[command(name = "hlctl", version, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every verb accepts.
#[derive(Clone, Debug, Args)]
pub struct Global {
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a benchmark: network (iperf3-compatible), disk, CPU, stress.
    #[command(subcommand)]
    Bench(super::bench::BenchCommand),
    /// Serve iperf3-compatible network tests (works with `iperf3 -c`).
    Serve(super::serve::ServeArgs),
}
