//! `doctor` as an operation: gather, check, store the report under the uid
//! that asked.

use super::bench::Ran;
use super::record::{Requester, store};
use super::rows;
use crate::bench::progress::{Cancel, Progress};
use crate::doctor::{self, DoctorError, Options, Report};
use crate::path::measure::Measure;
use crate::paths::Paths;

/// Diagnose as `opts` asks, measuring the path with `measure` when a peer
/// is given.
pub(crate) fn run(
    opts: &Options,
    paths: &Paths,
    measure: Option<&dyn Measure>,
    who: Requester,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Ran<Report>, DoctorError> {
    // A doctor that will measure towards the peer checks first, where it
    // runs, that a benchmark server answers there.
    if let (Some(peer), Some(_)) = (&opts.peer, measure) {
        crate::bench::net::check_peer(&peer.host, peer.port)
            .map_err(|e| DoctorError::Peer(e.to_string()))?;
    }
    let (mut report, inputs) = doctor::run(opts, paths, measure, progress, cancel)?;
    report.workloads = super::workload::answers(opts, paths, &report, progress, cancel);
    let stored = store(paths, who, rows::doctor(&report, &inputs));
    Ok(Ran { report, stored })
}
