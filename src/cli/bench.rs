//! `hlctl bench ...`: dispatch to one file per benchmark.

use clap::Subcommand;

use super::args::Global;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {}

pub fn run(_global: &Global, cmd: BenchCommand) -> i32 {
    match cmd {}
}
