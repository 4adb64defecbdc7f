//! `hlctl report` as a daemon job (`Manager.Report`, run-benchmark): the
//! benchmarks run in hlctld ([`crate::ops::report`]), the report is the
//! job's result and lands in the history under the caller's uid.

use tracing::warn;

use super::job::{Failure, Work};
use crate::dbus::wire::report::ReportParams;
use crate::measure::ReportSpan;
use crate::ops::Requester;
use crate::path::Peer;
use crate::paths::Paths;

/// The work of a report job for `p` (already decoded, checked and
/// authorized for `who`).
pub(crate) fn prepare(p: ReportParams, paths: Paths, who: Requester) -> Work {
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
        let ran = crate::ops::report::run(&peers, &p.dirs, span, &paths, who, progress, cancel);
        if let Some(w) = ran.stored.warning() {
            warn!("report {w}");
        }
        serde_json::to_value(ran.report).map_err(|e| Failure::from(e.to_string()))
    })
}
