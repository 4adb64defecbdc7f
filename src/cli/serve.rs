//! `hlctl serve`: an iperf3-compatible server.

use clap::Args;

use super::args::Global;

#[derive(Debug, Args)]
pub struct ServeArgs {}

pub fn run(_global: &Global, _args: ServeArgs) -> i32 {
    super::exit::FAILED
}
