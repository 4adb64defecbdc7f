//! A file protocol's figures beside the layers under it, and which layer
//! limits each direction. `bench file` measures the transfer
//! ([`crate::bench::file`]), raw TCP to the same host
//! ([`crate::bench::net`]), the local disk the file comes from
//! ([`crate::bench::disk`]) and this CPU's AEADs per core
//! ([`crate::bench::crypto`]); this module holds them together
//! ([`FileRun`]) and names the limit with its evidence ([`verdict`]).
//! It reads the engines; no engine reads it.

pub(crate) mod cipher;
pub(crate) mod fleet;
pub(crate) mod settings;
pub(crate) mod verdict;

use serde::{Deserialize, Serialize};

use crate::bench::crypto::CryptoFigure;
use crate::bench::file::FileReport;
use crate::path::route::Toward;
use fleet::HostFigures;
pub(crate) use verdict::{Limit, Verdict};

/// A layer measured beside the transfer, or why it was not.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Beside<T> {
    Measured(T),
    Skipped { why: String },
}

impl<T> Beside<T> {
    pub(crate) fn measured(&self) -> Option<&T> {
        match self {
            Beside::Measured(t) => Some(t),
            Beside::Skipped { .. } => None,
        }
    }
}

/// Raw TCP to the transfer's host, each direction as `bench net` measured it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetFigures {
    /// `HOST:PORT` of the iperf3 server (`hlctl serve`, `iperf3 -s`).
    pub peer: String,
    /// This host to the peer, bit/s.
    pub upload_bps: f64,
    /// The peer to this host, bit/s.
    pub download_bps: f64,
}

/// The local disk the file comes from and goes to (`bench disk --seq-dd`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiskFigures {
    pub dir: String,
    pub filesystem: String,
    pub write_bytes_per_second: f64,
    pub read_bytes_per_second: f64,
}

/// What one `bench file` run measured and what it concluded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileRun {
    pub file: FileReport,
    /// The address the server resolved to, and this host's interface
    /// toward it (`address`, `interface`): what the matrix divides a figure
    /// by (that link's speed, and the server's own link through its
    /// address). Neither for a local directory, or a server that did not
    /// resolve.
    #[serde(flatten)]
    pub toward: Toward,
    pub network: Beside<NetFigures>,
    pub disk: Beside<DiskFigures>,
    /// This CPU's AEADs, one core each.
    pub crypto: Vec<CryptoFigure>,
    /// The server's own disks and CPU as the fleet's Prometheus holds them
    /// (its last `hlctl check`), when `--prometheus` was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<Beside<HostFigures>>,
    /// One per direction, write first.
    pub verdicts: Vec<Verdict>,
}

impl FileRun {
    /// The run with its verdicts judged: `toward` is where the server
    /// resolved to ([`Toward::server`]), `fleet` the server's own figures.
    pub(crate) fn judged(
        file: FileReport,
        toward: Toward,
        network: Beside<NetFigures>,
        disk: Beside<DiskFigures>,
        crypto: Vec<CryptoFigure>,
        fleet: Option<Beside<HostFigures>>,
    ) -> FileRun {
        let mut run = FileRun {
            toward,
            file,
            network,
            disk,
            crypto,
            fleet,
            verdicts: Vec::new(),
        };
        run.verdicts = verdict::judge(&run);
        run
    }
}
