//! `hlctl check` as a daemon job (`Manager.Check`, run-benchmark): hlctld's
//! own configuration with the caller's overrides, run whole by
//! [`crate::ops::check`] (measurements, the history row under the caller's
//! uid, the comparison, the journal lines, the Prometheus textfile); the
//! job's result is the [`crate::ops::check::CheckOutcome`].

use tracing::warn;

use super::job::{Failure, Work};
use crate::dbus::wire::check::CheckParams;
use crate::ops::Requester;
use crate::paths::Paths;

/// The work of a check job for `p` (already decoded and authorized for `who`).
pub(crate) fn prepare(p: CheckParams, paths: Paths, who: Requester) -> Work {
    Box::new(move |progress, cancel| {
        let outcome = crate::ops::check::run(&paths, false, &p.overrides, who, progress, cancel)
            .map_err(|e| Failure {
                class: e.class(),
                message: e.to_string(),
            })?;
        for w in &outcome.warnings {
            warn!("check: {w}");
        }
        serde_json::to_value(outcome).map_err(|e| Failure::from(e.to_string()))
    })
}
