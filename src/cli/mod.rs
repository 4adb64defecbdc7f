//! The `hlctl` command line: words → typed request → engine → text or JSON.
//!
//! One file per verb; [`args`] holds the top-level clap definition and
//! [`output`] the shared printing and progress helpers.

pub mod args;
pub mod bench;
pub mod bench_net;
pub mod interrupt;
pub mod output;
pub mod serve;

use clap::Parser;

/// Exit codes shared by every verb.
pub mod exit {
    /// Done.
    pub const OK: i32 = 0;
    /// Failed (a change set was restored).
    pub const FAILED: i32 = 1;
    /// Invalid input; nothing changed.
    pub const INVALID: i32 = 2;
    /// Not permitted.
    pub const NOT_PERMITTED: i32 = 3;
}

/// Parse the process arguments and run the verb; returns the exit code.
pub fn main() -> i32 {
    let cli = match args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    exit::OK
                }
                _ => exit::INVALID,
            };
        }
    };
    run(cli)
}

/// Run one parsed command line; returns the exit code.
pub fn run(cli: args::Cli) -> i32 {
    let global = cli.global;
    match cli.command {
        args::Command::Bench(a) => bench::run(&global, a),
        args::Command::Serve(a) => serve::run(&global, a),
    }
}
