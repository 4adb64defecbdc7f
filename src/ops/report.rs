//! `report` as an operation: network to each peer, disk in each directory,
//! CPU; stored under the uid that asked. [`ReportRequest`] is what either
//! front end asks for (the CLI's flags, `Manager.Report`'s options), turned
//! into the measurements' span and peers here, once for both.

use super::bench::Ran;
use super::row_store::{Requester, store};
use super::rows;
use crate::bench::progress::{Cancel, Progress};
use crate::history::History;
use crate::history::transfers::{Transfer, newest};
use crate::measure::{ReportSpan, run_report};
use crate::path::Peer;
use crate::paths::Paths;
use crate::report::Report;

/// What a report is asked for, as `hlctl report`'s flags and
/// `Manager.Report`'s options say it (their defaults are these).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ReportRequest {
    /// HOST, HOST:PORT or [IPv6]:PORT each.
    pub(crate) peers: Vec<String>,
    pub(crate) dirs: Vec<String>,
    pub(crate) time_s: u32,
    pub(crate) disk_size_mib: u32,
    pub(crate) bench_time_s: u32,
}

impl Default for ReportRequest {
    fn default() -> Self {
        ReportRequest {
            peers: Vec::new(),
            dirs: Vec::new(),
            time_s: 10,
            disk_size_mib: 256,
            bench_time_s: 10,
        }
    }
}

impl ReportRequest {
    /// The peers, parsed; the first that does not parse is the error.
    pub(crate) fn peers(&self) -> Result<Vec<Peer>, String> {
        self.peers.iter().map(|p| Peer::parse(p)).collect()
    }

    /// How long and how much each measurement runs.
    pub(crate) fn span(&self) -> ReportSpan {
        ReportSpan {
            time_s: self.time_s,
            disk_size: u64::from(self.disk_size_mib) << 20,
            bench_time_s: self.bench_time_s.into(),
        }
    }
}

/// Measure as `req` asks, to its already parsed `peers`.
pub(crate) fn run(
    req: &ReportRequest,
    peers: &[Peer],
    paths: &Paths,
    who: Requester,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Ran<Report> {
    let mut report = run_report(peers, &req.dirs, req.span(), progress, cancel);
    let stored = store(paths, who, rows::report(paths, &report));
    report.transfers = transfers(paths);
    Ran { report, stored }
}

/// How many of the newest history rows the transfers are read from.
const TRANSFER_ROWS: u32 = 500;

/// This host's row of the matrix, from the history the report was stored
/// in (none when there is no history to read).
fn transfers(paths: &Paths) -> Vec<Transfer> {
    History::open(&paths.state_dir)
        .and_then(|mut h| h.list(None, None, TRANSFER_ROWS))
        .map(|rows| newest(&rows))
        .unwrap_or_default()
}
