//! Where the network managers keep their files, below a root that tests move.

use std::path::{Path, PathBuf};

use crate::paths::Paths;

/// The managers' file locations and whether their tools may be run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Roots {
    /// `/` on a live system.
    pub(crate) root: PathBuf,
    /// Where hlctl keeps copies of the managers' files before it edits them.
    pub(crate) backup_dir: PathBuf,
    /// Run the managers' own tools (`ifquery`, `networkctl`, `udevadm`,
    /// `netplan`) after a change: only on the live system, never for a moved root.
    pub(crate) tools: bool,
    /// The managers serve the links of this network namespace: true for
    /// the host's own namespace (that of pid 1) and for a moved root (tests);
    /// false inside another namespace, where an ifindex or a name of the
    /// host's managers would name another link.
    pub(crate) managed_ns: bool,
}

impl Roots {
    pub(crate) fn new(paths: &Paths) -> Self {
        Roots {
            root: paths.root.clone(),
            backup_dir: paths.state_dir.join("owner-backup"),
            tools: paths.root == Path::new("/"),
            managed_ns: paths.root != Path::new("/") || in_init_netns(),
        }
    }

    /// An absolute path of the live system, below the root.
    pub(crate) fn at(&self, path: &str) -> PathBuf {
        self.root.join(path.trim_start_matches('/'))
    }

    /// The path as the live system names it (the root taken off).
    pub(crate) fn live(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rest) if self.root != Path::new("/") => format!("/{}", rest.display()),
            _ => path.display().to_string(),
        }
    }

    pub(crate) fn interfaces(&self) -> PathBuf {
        self.at("/etc/network/interfaces")
    }

    /// True when ifupdown2 (not classic ifupdown) is installed.
    pub(crate) fn has_ifupdown2(&self) -> bool {
        self.at("/usr/share/ifupdown2").is_dir() || self.at("/usr/sbin/ifreload").exists()
    }

    pub(crate) fn networkd_link_state(&self, ifindex: u32) -> PathBuf {
        self.at(&format!("/run/systemd/netif/links/{ifindex}"))
    }

    pub(crate) fn udev_data(&self, ifindex: u32) -> PathBuf {
        self.at(&format!("/run/udev/data/n{ifindex}"))
    }

    /// The directories networkd and udev read `.network`/`.link` files and
    /// their drop-ins from, highest priority first.
    pub(crate) fn systemd_network_dirs(&self) -> Vec<PathBuf> {
        [
            "/etc/systemd/network",
            "/run/systemd/network",
            "/usr/local/lib/systemd/network",
            "/usr/lib/systemd/network",
            "/lib/systemd/network",
        ]
        .iter()
        .map(|d| self.at(d))
        .collect()
    }

    pub(crate) fn netplan_dirs(&self) -> Vec<PathBuf> {
        ["/etc/netplan", "/run/netplan", "/lib/netplan"]
            .iter()
            .map(|d| self.at(d))
            .collect()
    }
}

/// True when this process is in pid 1's network namespace (or that cannot
/// be told: `/proc/1/ns/net` unreadable).
fn in_init_netns() -> bool {
    match (
        std::fs::read_link("/proc/self/ns/net"),
        std::fs::read_link("/proc/1/ns/net"),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => true,
    }
}
