//! The top-level clap definition of `hlctl`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::paths::Paths;

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
/// change things; anyone may look. --local runs everything in-process (root).
///
/// Exit codes: 0 done; 1 failed (a change set was restored); 2 invalid input
/// (nothing changed); 3 not permitted.
#[derive(Debug, Parser)]
#[command(
    name = "hlctl",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(flatten)]
    pub(crate) global: Global,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Options every verb accepts.
#[derive(Clone, Debug, Args)]
pub(crate) struct Global {
    /// Print machine-readable JSON on stdout instead of text (-J as in iperf3).
    #[arg(short = 'J', long, global = true)]
    pub(crate) json: bool,

    /// Treat DIR as the root for hlctl's files (state directory, sysctl.d), e.g. for a chroot or an image.
    #[arg(
        long,
        global = true,
        value_name = "DIR",
        env = "HLCTL_ROOT",
        default_value = "/"
    )]
    pub(crate) root: PathBuf,

    /// Directory of persisted state [default: ROOT/var/lib/hlctl].
    #[arg(long, global = true, value_name = "DIR", env = "HLCTL_STATE_DIR")]
    pub(crate) state_dir: Option<PathBuf>,

    /// sysctl.d directory that receives 90-hlctl.conf [default: ROOT/etc/sysctl.d].
    #[arg(long, global = true, value_name = "DIR", env = "HLCTL_SYSCTL_DIR")]
    pub(crate) sysctl_dir: Option<PathBuf>,

    /// The configuration file [default: ROOT/etc/hlctl/hlctl.toml].
    #[arg(long, global = true, value_name = "FILE", env = "HLCTL_CONFIG")]
    pub(crate) config: Option<PathBuf>,

    /// Talk to hlctld on the D-Bus bus at ADDRESS (e.g. unix:path=/run/test/bus)
    /// instead of the system bus (which honours DBUS_SYSTEM_BUS_ADDRESS).
    #[arg(long, global = true, value_name = "ADDRESS", conflicts_with = "local")]
    pub(crate) bus: Option<String>,

    /// Run the engine in this process instead of asking hlctld (root only;
    /// for rescue situations). --root, --state-dir and --sysctl-dir apply only
    /// here: through the daemon, its own paths are used. Without --local,
    /// root falls back to in-process by itself when hlctld cannot be reached.
    #[arg(long, global = true, env = "HLCTL_LOCAL")]
    pub(crate) local: bool,
}

impl Global {
    /// File locations after applying `--root`, `--state-dir` and `--sysctl-dir`.
    pub(crate) fn paths(&self) -> Paths {
        let mut p = Paths::under(&self.root);
        if let Some(d) = &self.state_dir {
            p.state_dir = d.clone();
        }
        if let Some(d) = &self.sysctl_dir {
            p.sysctl_search[0] = d.clone();
            p.sysctl_dir = d.clone();
        }
        if let Some(f) = &self.config {
            p.config_file = f.clone();
        }
        p
    }
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
    Status(super::status::StatusArgs),
    History(super::history::HistoryArgs),
    Baseline(super::baseline::BaselineArgs),
    Compare(super::compare::CompareArgs),
    Report(super::report::ReportArgs),
    Check(super::check::CheckArgs),
    Config(super::config::ConfigArgs),
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every verb's flags are unique and well-formed (e.g. no short flag twice).
    #[test]
    fn the_clap_tree_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
