//! The server's own figures, as the fleet measured them on the server
//! itself: its disks and CPU from its last `hlctl check`. [`crate::matrix`]
//! reads them from the fleet's Prometheus; the verdict ([`super::verdict`])
//! judges a transfer against them. Plain data here, so that this engine
//! never reads the workflow that fetches it.

use serde::{Deserialize, Serialize};

/// A directory's sequential figure on the host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostDisk {
    pub dir: String,
    /// `seq-read` or `seq-write`.
    pub pattern: String,
    pub bytes_per_second: f64,
}

/// The CPU benchmark's figure on the host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostCpu {
    pub threads: u32,
    pub events_per_second: f64,
}

/// What the fleet knows of one host's own disks and CPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostFigures {
    /// The host as the fleet names it (its `host` label, else its instance).
    pub host: String,
    /// The Prometheus the figures came from (without a password).
    pub prometheus: String,
    pub disks: Vec<HostDisk>,
    pub cpu: Vec<HostCpu>,
}

impl HostFigures {
    /// The fastest sequential figure of `pattern` over the host's
    /// directories, with its directory: which one backs a share is not
    /// known here, so the host's best is what it could give.
    pub(crate) fn fastest(&self, pattern: &str) -> Option<&HostDisk> {
        self.disks
            .iter()
            .filter(|d| d.pattern == pattern)
            .max_by(|a, b| a.bytes_per_second.total_cmp(&b.bytes_per_second))
    }
}
