//! The top-level clap definition of `hlctl`.

use clap::{Parser, Subcommand};

/// Inspect, change, measure and tune the network of a home-lab box.
///
/// hlctl reads every NIC setting (link, rings, pause, offloads, channels,
/// coalescing, counters) and the TCP sysctls, changes them safely over
/// rtnetlink and ethtool netlink (validate everything, snapshot, apply, read
/// back, restore on failure), and measures with built-in network (iperf3
/// compatible), disk and CPU benchmarks.
///
/// Every verb goes through the hlctld daemon on the system bus (started by
/// D-Bus activation where available), which asks polkit whether you may
/// change things; anyone may look. Without the daemon, root runs everything
/// in this process, and so does any user for what needs no privilege (show,
/// bench, doctor, history of their own). --local runs in this process.
///
/// Exit codes: 0 done; 1 failed (a change set was restored); 2 invalid input
/// (nothing changed); 3 not permitted; 4 hlctld not reachable (for a change
/// that needs it or root) or gone while a job ran.
#[derive(Debug, Parser)]
#[command(
    name = "hlctl",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(flatten)]
    pub(crate) global: super::global::Global,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    Show(super::show::ShowArgs),
    Set(super::set::SetArgs),
    Sysctl(super::sysctl::SysctlArgs),
    Export(super::export::ExportArgs),
    /// Run a benchmark: network (iperf3-compatible), disk, CPU, stress.
    #[command(subcommand)]
    Bench(super::bench::BenchCommand),
    /// Serve iperf3-compatible network tests (works with `iperf3 -c`).
    Serve(super::serve::ServeArgs),
    Doctor(super::doctor::DoctorArgs),
    Tune(super::tune::TuneArgs),
    Rollback(super::rollback::RollbackArgs),
    Reapply(super::reapply::ReapplyArgs),
    Status(super::status::StatusArgs),
    History(super::history::HistoryArgs),
    Baseline(super::baseline::BaselineArgs),
    Compare(super::compare::CompareArgs),
    Usage(super::usage::UsageArgs),
    Report(super::report::ReportArgs),
    Matrix(super::matrix::MatrixArgs),
    Check(super::check::CheckArgs),
    Config(super::config::ConfigArgs),
    Completions(super::assets::CompletionsArgs),
    Man(super::assets::ManArgs),
}

/// `hlctl`'s clap tree, built, as the man pages and completions describe it.
pub fn hlctl_command() -> clap::Command {
    use clap::CommandFactory;
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every verb's flags are unique and well-formed (e.g. no short flag twice).
    #[test]
    fn the_clap_tree_is_consistent() {
        super::Cli::command().debug_assert();
    }

    fn report(words: &[&str]) -> super::super::report::ReportArgs {
        let argv = ["hlctl", "report"].iter().chain(words);
        match clap::Parser::try_parse_from(argv).map(|c: super::Cli| c.command) {
            Ok(super::Command::Report(a)) => a,
            other => panic!("{words:?}: {:?}", other.err()),
        }
    }

    /// One name for run length: `--time` sets every run of a report; the old
    /// `--bench-time` still parses, hidden, and sets the disk and CPU runs.
    #[test]
    fn time_is_the_run_length_and_bench_time_a_hidden_alias() {
        let a = report(&["--time", "3"]);
        assert_eq!((a.time, a.request().bench_time_s), (3, 3));
        let a = report(&["--time", "3", "--bench-time", "7"]);
        assert_eq!((a.time, a.request().bench_time_s), (3, 7));
        let mut cmd = super::Cli::command();
        let help = cmd
            .find_subcommand_mut("report")
            .unwrap()
            .render_long_help()
            .to_string();
        assert!(help.contains("--time"), "{help}");
        assert!(!help.contains("bench-time"), "{help}");
    }
}
