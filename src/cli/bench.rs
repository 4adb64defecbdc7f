//! `hlctl bench ...`: dispatch to one file per benchmark.

use clap::Subcommand;

use super::global::Global;

#[derive(Debug, Subcommand)]
pub(crate) enum BenchCommand {
    // Each variant's help text is the doc comment of its Args struct.
    Net(super::bench_net::NetArgs),
    Disk(super::bench_disk::DiskArgs),
    Cpu(super::bench_cpu::CpuArgs),
    Stress(super::bench_stress::StressArgs),
    File(super::bench_file::FileArgs),
}

pub(crate) fn run(global: &Global, cmd: BenchCommand) -> i32 {
    match cmd {
        BenchCommand::Net(a) => super::bench_net::run(global, a),
        BenchCommand::Disk(a) => super::bench_disk::run(global, a),
        BenchCommand::Cpu(a) => super::bench_cpu::run(global, a),
        BenchCommand::Stress(a) => super::bench_stress::run(global, a),
        BenchCommand::File(a) => super::bench_file::run(global, a),
    }
}
