//! The command line of `hlctld` (clap derive). It lives in the library so that
//! the binary stays thin and the packaging can generate hlctld(8) from it.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use super::service::Bus;
use super::state::Options;
use crate::paths::Paths;

/// The hlctl system daemon: serves org.hlctl.Daemon1 on the system bus,
/// authorizes every change through polkit, re-applies persisted NIC settings.
///
/// hlctld is started by systemd (hlctld.service) or by D-Bus activation when a
/// client first calls org.hlctl.Daemon1; it is not meant to be run by hand
/// except for tests and rescue. Anyone may read through it; every change is
/// authorized by polkit on the caller (actions org.hlctl.Daemon1.*). It logs
/// to journald when present, to stderr otherwise.
///
/// Files: /var/lib/hlctl (persisted NIC settings), /etc/sysctl.d/90-hlctl.conf
/// (persisted sysctls).
#[derive(Debug, Parser)]
#[command(name = "hlctld", version, max_term_width = 100)]
pub struct DaemonArgs {
    /// Serve on the bus at ADDRESS (e.g. unix:path=/tmp/test-bus) instead of the system bus.
    #[arg(long, value_name = "ADDRESS", conflicts_with = "session")]
    pub(crate) bus: Option<String>,

    /// Serve on the session bus (development only; polkit still decides).
    #[arg(long)]
    pub(crate) session: bool,

    /// Treat DIR as the root for hlctl's files (state directory, sysctl.d).
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub(crate) root: PathBuf,

    /// Directory of persisted state [default: ROOT/var/lib/hlctl].
    #[arg(long, value_name = "DIR")]
    pub(crate) state_dir: Option<PathBuf>,

    /// sysctl.d directory that receives 90-hlctl.conf [default: ROOT/etc/sysctl.d].
    #[arg(long, value_name = "DIR")]
    pub(crate) sysctl_dir: Option<PathBuf>,

    /// The configuration file [default: ROOT/etc/hlctl/hlctl.toml]: the
    /// Prometheus textfile directory ([metrics]) is taken from it.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,

    /// Seconds a finished job stays on the bus so its result can be read.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub(crate) job_linger: u64,

    /// The longest a job may run: hlctld cancels it then (a cancelled
    /// benchmark still reports what it measured; a tune rolls back).
    #[arg(long, value_name = "SECONDS", default_value_t = 4 * 3600,
          value_parser = crate::units::ranged(1u64, 7 * 24 * 3600))]
    pub(crate) max_job_seconds: u64,

    /// Testing aid: hold every change this many milliseconds before applying it.
    #[arg(long, value_name = "MS", default_value_t = 0, hide = true)]
    pub(crate) test_hold_ms: u64,

    /// Testing aid: sample link usage every MS milliseconds instead of 10 s.
    #[arg(long, value_name = "MS", default_value_t = 10_000, hide = true,
          value_parser = crate::units::ranged(100u64, 600_000))]
    pub(crate) test_usage_interval_ms: u64,

    /// Log debug messages too.
    #[arg(short, long)]
    pub verbose: bool,
}

impl DaemonArgs {
    /// The bus to serve on.
    pub fn bus(&self) -> Bus {
        match (&self.bus, self.session) {
            (Some(a), _) => Bus::Address(a.clone()),
            (None, true) => Bus::Session,
            (None, false) => Bus::System,
        }
    }

    /// File locations after applying `--root`, `--state-dir` and `--sysctl-dir`.
    pub(crate) fn paths(&self) -> Paths {
        let mut paths = Paths::under(&self.root);
        if let Some(d) = &self.state_dir {
            paths.state_dir = d.clone();
        }
        if let Some(d) = &self.sysctl_dir {
            paths.sysctl_search[0] = d.clone();
            paths.sysctl_dir = d.clone();
        }
        if let Some(f) = &self.config {
            paths.config_file = f.clone();
        }
        paths
    }

    /// The daemon's options.
    pub fn options(&self) -> Options {
        Options {
            paths: self.paths(),
            hold: Duration::from_millis(self.test_hold_ms),
            job_linger: Duration::from_secs(self.job_linger),
            job_lifetime: Duration::from_secs(self.max_job_seconds),
            usage_interval: Duration::from_millis(self.test_usage_interval_ms),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_dir_moves_the_file_and_the_first_search_dir() {
        let a = DaemonArgs::parse_from(["hlctld", "--root", "/r", "--sysctl-dir", "/s"]);
        let p = a.paths();
        assert_eq!(p.sysctl_dir, PathBuf::from("/s"));
        assert_eq!(p.sysctl_search[0], PathBuf::from("/s"));
        assert_eq!(p.state_dir, PathBuf::from("/r/var/lib/hlctl"));
        assert!(matches!(a.bus(), Bus::System));
    }

    #[test]
    fn bus_and_session_conflict() {
        assert!(
            DaemonArgs::try_parse_from(["hlctld", "--bus", "unix:path=/x", "--session"]).is_err()
        );
    }
}
