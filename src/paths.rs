//! Where hlctl keeps its files. Every path can be moved (tests, chroots, images).

use std::path::{Path, PathBuf};

use serde::Serialize;

/// File locations used by the engine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Paths {
    /// The root every other path is under (`/` on a live system); the network
    /// managers' files are found below it ([`crate::nic::owner::Roots`]).
    pub(crate) root: PathBuf,
    /// State directory: persisted NIC settings, history, tuning journal.
    pub(crate) state_dir: PathBuf,
    /// The sysctl.d directory hlctl writes `90-hlctl.conf` into.
    pub(crate) sysctl_dir: PathBuf,
    /// Every place sysctl configuration is read from, in systemd-sysctl's
    /// order of directories; `/etc/sysctl.conf` is applied last by procps.
    pub(crate) sysctl_search: Vec<PathBuf>,
    pub(crate) sysctl_conf: PathBuf,
    /// The kernel's sysctl tree.
    pub(crate) proc_sys: PathBuf,
    /// `hlctl.toml` (see [`crate::config`]).
    pub(crate) config_file: PathBuf,
}

/// The name of the file hlctl owns in the sysctl.d directory.
pub(crate) const SYSCTL_FILE: &str = "90-hlctl.conf";
/// The name of the persisted NIC settings file in the state directory.
pub(crate) const NIC_STATE_FILE: &str = "nic-settings.json";
/// The lock file that keeps this host's measurements apart.
pub(crate) const MEASURE_LOCK_FILE: &str = "measure.lock";
/// The configuration file on a live system (`hlctl.toml(5)`).
pub(crate) const CONFIG_FILE: &str = "/etc/hlctl/hlctl.toml";

impl Paths {
    /// The standard locations below `root` (`/` on a live system).
    pub(crate) fn under(root: &Path) -> Self {
        let r = |p: &str| root.join(p.trim_start_matches('/'));
        Self {
            root: root.to_path_buf(),
            state_dir: r("/var/lib/hlctl"),
            sysctl_dir: r("/etc/sysctl.d"),
            sysctl_search: [
                "/etc/sysctl.d",
                "/run/sysctl.d",
                "/usr/local/lib/sysctl.d",
                "/usr/lib/sysctl.d",
                "/lib/sysctl.d",
            ]
            .iter()
            .map(|p| r(p))
            .collect(),
            sysctl_conf: r("/etc/sysctl.conf"),
            proc_sys: PathBuf::from("/proc/sys"),
            config_file: r(CONFIG_FILE),
        }
    }

    pub(crate) fn sysctl_file(&self) -> PathBuf {
        self.sysctl_dir.join(SYSCTL_FILE)
    }

    /// Held while this host measures or serves a measurement (see
    /// [`crate::bench::exclusive`]).
    pub(crate) fn measure_lock_file(&self) -> PathBuf {
        self.state_dir.join(MEASURE_LOCK_FILE)
    }

    pub(crate) fn nic_state_file(&self) -> PathBuf {
        self.state_dir.join(NIC_STATE_FILE)
    }
}

impl Default for Paths {
    fn default() -> Self {
        Self::under(Path::new("/"))
    }
}
