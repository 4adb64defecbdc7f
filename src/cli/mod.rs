//! The `hlctl` command line: words → typed request → engine → text or JSON.
//!
//! One file per verb; [`args`] holds the top-level clap definition and
//! [`output`] the shared printing and progress helpers.

pub mod args;
pub mod assets;
pub(crate) mod backend;
pub(crate) mod baseline;
pub(crate) mod bench;
pub(crate) mod bench_cpu;
pub(crate) mod bench_disk;
pub(crate) mod bench_file;
pub(crate) mod bench_file_text;
pub(crate) mod bench_net;
pub(crate) mod bench_parse;
pub(crate) mod bench_stress;
pub(crate) mod check;
pub(crate) mod compare;
pub(crate) mod config;
pub(crate) mod doctor;
pub(crate) mod error;
pub(crate) mod export;
pub(crate) mod fleet;
pub(crate) mod global;
pub(crate) mod history;
pub(crate) mod interrupt;
pub(crate) mod kept;
pub(crate) mod matrix;
pub(crate) mod net_auth;
pub(crate) mod output;
pub(crate) mod peer_check;
pub(crate) mod reapply;
pub(crate) mod remote;
pub(crate) mod report;
pub(crate) mod rollback;
pub(crate) mod serve;
pub(crate) mod set;
pub(crate) mod show;
mod show_queues;
pub(crate) mod status;
pub(crate) mod sysctl;
pub(crate) mod try_wait;
pub(crate) mod tune;
pub(crate) mod tune_text;
pub(crate) mod unstored;
pub(crate) mod usage;

use clap::Parser;

/// Exit codes shared by every verb: [`crate::class::Class::exit_code`] of
/// each error class, and 0.
pub(crate) mod exit {
    use crate::class::Class;

    /// Done.
    pub(crate) const OK: i32 = 0;
    /// Failed (a change set was restored).
    pub(crate) const FAILED: i32 = Class::Failed.exit_code();
    /// Invalid input; nothing changed.
    pub(crate) const INVALID: i32 = Class::Invalid.exit_code();
    /// Not permitted.
    pub(crate) const NOT_PERMITTED: i32 = Class::NotPermitted.exit_code();
    /// hlctld is not reachable (and the command needs it or root), or it
    /// went away while a job ran.
    pub(crate) const NO_DAEMON: i32 = Class::NoDaemon.exit_code();
}

/// Parse the process arguments and run the verb; returns the exit code.
pub fn main() -> i32 {
    default_sigpipe();
    if let Err(e) = crate::crashpoint::init() {
        eprintln!("hlctl: {e}");
        return exit::INVALID;
    }
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

/// A reader that stops early (`hlctl show --json | head`) ends hlctl as it
/// ends `ip` or `ethtool`: by SIGPIPE, quietly, instead of a panic in
/// `println!`. Rust starts programs with SIGPIPE ignored; sockets are not
/// affected (std's TCP and zbus send with MSG_NOSIGNAL).
fn default_sigpipe() {
    // SAFETY: signal(2) with SIG_DFL installs no handler; it runs before any
    // thread is spawned, so nothing races the change of disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Run one parsed command line; returns the exit code.
pub(crate) fn run(cli: args::Cli) -> i32 {
    let global = cli.global;
    let code = match cli.command {
        args::Command::Show(a) => show::run(&global, a),
        args::Command::Set(a) => set::run(&global, a),
        args::Command::Sysctl(a) => sysctl::run(&global, a),
        args::Command::Export(a) => export::run(&global, a),
        args::Command::Bench(a) => bench::run(&global, a),
        args::Command::Serve(a) => serve::run(&global, a),
        args::Command::Doctor(a) => doctor::run(&global, a),
        args::Command::Tune(a) => tune::run(&global, a),
        args::Command::Rollback(a) => rollback::run(&global, a),
        args::Command::Reapply(a) => reapply::run(&global, a),
        args::Command::Status(a) => status::run(&global, a),
        args::Command::History(a) => history::run(&global, a),
        args::Command::Baseline(a) => baseline::run(&global, a),
        args::Command::Compare(a) => compare::run(&global, a),
        args::Command::Usage(a) => usage::run(&global, a),
        args::Command::Report(a) => report::run(&global, a),
        args::Command::Matrix(a) => matrix::run(&global, a),
        args::Command::Check(a) => check::run(&global, a),
        args::Command::Config(a) => config::run(&global, a),
        args::Command::Completions(a) => assets::completions(a, args::hlctl_command()),
        args::Command::Man(a) => assets::man(a, args::hlctl_command()),
    };
    unstored::exit_code(code)
}

/// Print an error for the user and return the exit code it maps to.
pub(crate) fn fail(err: &dyn std::error::Error, code: i32) -> i32 {
    eprintln!("hlctl: {err}");
    code
}

/// Exit code for a NIC engine error.
pub(crate) fn nic_exit_code(e: &crate::nic::error::NicError) -> i32 {
    e.class().exit_code()
}

#[cfg(test)]
#[path = "page_units_tests.rs"]
mod page_units_tests;
