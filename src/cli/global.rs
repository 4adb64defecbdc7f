//! The options every verb accepts, and the paths they name.

use std::path::PathBuf;

use clap::Args;

use crate::paths::Paths;

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
