//! `report` as an operation: network to each peer, disk in each directory,
//! CPU; stored under the uid that asked.

use super::bench::Ran;
use super::record::{Requester, store};
use super::rows;
use crate::bench::progress::{Cancel, Progress};
use crate::measure::{ReportSpan, run_report};
use crate::path::Peer;
use crate::paths::Paths;
use crate::report::Report;

pub(crate) fn run(
    peers: &[Peer],
    dirs: &[String],
    span: ReportSpan,
    paths: &Paths,
    who: Requester,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Ran<Report> {
    let report = run_report(peers, dirs, span, progress, cancel);
    let stored = store(paths, who, rows::report(paths, &report));
    Ran { report, stored }
}
