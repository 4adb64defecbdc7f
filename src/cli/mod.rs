//! The `hlctl` command line: words → typed request → engine → text or JSON.
//!
//! One file per verb; [`args`] holds the top-level clap definition and
//! [`output`] the shared printing and progress helpers.

pub mod args;
pub mod backend;
pub mod baseline;
pub mod bench;
pub mod bench_cpu;
pub mod bench_disk;
pub mod bench_net;
pub mod bench_parse;
pub mod bench_stress;
pub mod check;
pub mod compare;
pub mod config;
pub mod doctor;
pub mod export;
pub mod history;
pub mod interrupt;
pub mod output;
pub mod record;
pub mod records;
pub mod remote;
pub mod report;
pub mod rollback;
pub mod serve;
pub mod set;
pub mod show;
pub mod status;
pub mod sysctl;
pub mod tune;
pub mod tune_remote;

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
        args::Command::Show(a) => show::run(&global, a),
        args::Command::Set(a) => set::run(&global, a),
        args::Command::Sysctl(a) => sysctl::run(&global, a),
        args::Command::Export(a) => export::run(&global, a),
        args::Command::Bench(a) => bench::run(&global, a),
        args::Command::Serve(a) => serve::run(&global, a),
        args::Command::Doctor(a) => doctor::run(&global, a),
        args::Command::Tune(a) => tune::run(&global, a),
        args::Command::Rollback(a) => rollback::run(&global, a),
        args::Command::Status(a) => status::run(&global, a),
        args::Command::History(a) => history::run(&global, a),
        args::Command::Baseline(a) => baseline::run(&global, a),
        args::Command::Compare(a) => compare::run(&global, a),
        args::Command::Report(a) => report::run(&global, a),
        args::Command::Check(a) => check::run(&global, a),
        args::Command::Config(a) => config::run(&global, a),
    }
}

/// Print an error for the user and return the exit code it maps to.
pub fn fail(err: &dyn std::error::Error, code: i32) -> i32 {
    eprintln!("hlctl: {err}");
    code
}

/// Exit code for a NIC engine error.
pub fn nic_exit_code(e: &crate::nic::error::NicError) -> i32 {
    use crate::nic::error::NicError;
    match e {
        NicError::Invalid { .. } | NicError::NoSuchInterface { .. } => exit::INVALID,
        _ if matches!(e.errno(), Some(libc::EPERM) | Some(libc::EACCES)) => exit::NOT_PERMITTED,
        _ => exit::FAILED,
    }
}

/// Open the process's netlink connection, or print why not.
pub fn netlink() -> Result<crate::nic::netlink::Netlink, i32> {
    crate::nic::netlink::Netlink::new().map_err(|e| {
        let e = crate::nic::error::NicError::Connect(e);
        fail(&e, nic_exit_code(&e))
    })
}
