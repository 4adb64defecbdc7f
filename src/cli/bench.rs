//! `hlctl bench ...`: dispatch to one file per benchmark.

use clap::Subcommand;

use super::args::Global;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Network throughput against `iperf3 -s` or `hlctl serve` (iperf3 protocol).
    Net(super::bench_net::NetArgs),
}

pub fn run(global: &Global, cmd: BenchCommand) -> i32 {
    match cmd {
        BenchCommand::Net(a) => super::bench_net::run(global, a),
    }
}
