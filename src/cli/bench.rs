//! `hlctl bench ...`: dispatch to one file per benchmark.

use clap::Subcommand;

use super::args::Global;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Disk: fio-like random/sequential I/O (O_DIRECT, io_uring), or dd-style with --seq-dd.
    Disk(super::bench_disk::DiskArgs),
    /// CPU: the sysbench cpu prime test, events per second.
    Cpu(super::bench_cpu::CpuArgs),
    /// Stress: sustained CPU and memory load, watching for thermal throttling.
    Stress(super::bench_stress::StressArgs),
}

pub fn run(global: &Global, cmd: BenchCommand) -> i32 {
    match cmd {
        BenchCommand::Disk(a) => super::bench_disk::run(global, a),
        BenchCommand::Cpu(a) => super::bench_cpu::run(global, a),
        BenchCommand::Stress(a) => super::bench_stress::run(global, a),
    }
}
