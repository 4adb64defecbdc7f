//! `hlctl report` as a daemon job (`Manager.Report`, run-benchmark): the
//! benchmarks run in hlctld, the report is the job's result and lands in the
//! history like an in-process run's.

use tracing::warn;

use super::job::{Failure, Work};
use crate::dbus::wire::report::ReportParams;
use crate::history::History;
use crate::measure::{ReportSpan, report_row, run_report};
use crate::path::Peer;
use crate::paths::Paths;

/// The work of a report job for `p` (already decoded and checked).
pub(crate) fn prepare(p: ReportParams, paths: Paths) -> Work {
    Box::new(move |progress, cancel| {
        let peers = p
            .peers
            .iter()
            .map(|x| Peer::parse(x))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Failure {
                class: "invalid",
                message: e,
            })?;
        let span = ReportSpan {
            time_s: p.time_s,
            disk_size: u64::from(p.disk_size_mib) << 20,
            bench_time_s: p.bench_time_s.into(),
        };
        let report = run_report(&peers, &p.dirs, span, progress, cancel);
        if let Err(e) =
            History::open(&paths.state_dir).and_then(|mut h| h.add(&report_row(&paths, &report)))
        {
            warn!("report not stored in the history: {e}");
        }
        serde_json::to_value(report).map_err(|e| Failure::from(e.to_string()))
    })
}
