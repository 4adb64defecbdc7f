//! `hlctl report` as a daemon job (`Manager.Report`, run-benchmark): the
//! benchmarks run in hlctld ([`crate::ops::report`]), the report is the
//! job's result and lands in the history under the caller's uid.

use tracing::warn;

use super::job::{Failure, Work};
use crate::dbus::wire::report::ReportParams;
use crate::ops::Requester;
use crate::paths::Paths;

/// The work of a report job for `p` (already decoded, checked and
/// authorized for `who`).
pub(crate) fn prepare(p: ReportParams, paths: Paths, who: Requester) -> Work {
    Box::new(move |progress, cancel| {
        let peers = p.request.peers().map_err(|e| Failure {
            class: crate::class::Class::Invalid,
            message: e,
        })?;
        let ran = crate::ops::report::run(&p.request, &peers, &paths, who, progress, cancel);
        if let Some(w) = ran.stored.warning() {
            warn!("report {w}");
        }
        serde_json::to_value(ran.report)
            .map(|v| ran.stored.marked(v))
            .map_err(|e| Failure::from(e.to_string()))
    })
}
