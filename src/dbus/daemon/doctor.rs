//! The doctor as a daemon job (`Manager.Doctor`): read-only diagnosis, open
//! to every local user, except the disk measurement in `dirs`, which writes
//! files as root and needs the run-benchmark authorization. The report is the
//! job's result and lands in the history like an in-process run's.

use std::time::Duration;

use tracing::warn;

use super::job::{Failure, Work};
use crate::dbus::wire::doctor::DoctorParams;
use crate::doctor::{self, Options};
use crate::history::History;
use crate::path::Peer;
use crate::paths::Paths;

/// The work of a doctor job for `p` (already decoded and checked).
pub(crate) fn prepare(p: DoctorParams, paths: Paths) -> Work {
    Box::new(move |progress, cancel| {
        let peer = p
            .peer
            .as_deref()
            .map(Peer::parse)
            .transpose()
            .map_err(|e| Failure {
                class: "invalid",
                message: e,
            })?;
        let opts = Options {
            interfaces: p.interfaces.clone(),
            peer: peer.clone(),
            dirs: p.dirs.clone(),
            runs: p.runs,
            stress: Duration::from_secs(p.stress_s.into()),
            disk_size: u64::from(p.disk_size_mib) << 20,
            ..Default::default()
        };
        let measure = peer
            .as_ref()
            .map(|peer| crate::path::measure_for(peer, p.time_s));
        let (report, inputs) = doctor::run(&opts, &paths, measure.as_deref(), progress, cancel)
            .map_err(|e| Failure {
                class: match &e {
                    doctor::DoctorError::Nic(crate::nic::error::NicError::NoSuchInterface {
                        ..
                    }) => "invalid",
                    _ => "failed",
                },
                message: e.to_string(),
            })?;
        let row = crate::history::record::doctor(&report, &inputs);
        if let Err(e) = History::open(&paths.state_dir).and_then(|mut h| h.add(&row)) {
            warn!("doctor report not stored in the history: {e}");
        }
        serde_json::to_value(report).map_err(|e| Failure::from(e.to_string()))
    })
}
