//! The doctor as a daemon job (`Manager.Doctor`). Its read-only checks are
//! open to every local user; what it measures (a CPU stress, transfers and
//! probes to a peer, a disk run that writes files) runs as root and needs
//! the run-benchmark authorization, whichever method asks for it. A caller
//! without it gets the read-only checks and the report says what was left
//! out and why. The report lands in the history only when its
//! measurements were authorized, or the caller is root.

use tracing::warn;
use zbus::Connection;
use zbus::message::Header;

use super::auth::{self, Caller};
use super::job::{Failure, Work};
use crate::dbus::wire::doctor::DoctorParams;
use crate::dbus::wire::error::{Error, Result};
use crate::doctor::Check;
use crate::paths::Paths;

/// What a doctor job may do for its caller.
pub(crate) struct Grant {
    pub(crate) owner: Caller,
    /// The request, less the measurements that were not authorized.
    pub(crate) params: DoctorParams,
    /// Each measurement left out, with the reason.
    pub(crate) skipped: Vec<Check>,
    /// Store the report in the shared history.
    pub(crate) record: bool,
}

impl Grant {
    /// Whether the job measures (and so takes the host's measurement lock).
    pub(crate) fn measures(&self) -> bool {
        !self.params.request.measurements().is_empty()
    }
}

/// Ask polkit for run-benchmark when `asked` measures; without it, keep the
/// read-only checks.
pub(crate) async fn authorize(
    conn: &Connection,
    hdr: &Header<'_>,
    asked: DoctorParams,
) -> Result<Grant> {
    let measurements = asked.request.measurements();
    if measurements.is_empty() {
        let owner = auth::caller(conn, hdr).await?;
        let record = owner.uid == Some(0);
        return Ok(Grant {
            owner,
            params: asked,
            skipped: Vec::new(),
            record,
        });
    }
    let actions = crate::dbus::wire::verb::DOCTOR.actions(false);
    match auth::authorize(conn, hdr, &actions, "doctor measurements").await {
        Ok(owner) => Ok(Grant {
            owner,
            params: asked,
            skipped: Vec::new(),
            record: true,
        }),
        Err(Error::NotAuthorized(why) | Error::InteractiveAuthorizationRequired(why)) => {
            let owner = auth::caller(conn, hdr).await?;
            let skipped = measurements
                .iter()
                .map(|m| Check {
                    check: m.to_string(),
                    interface: None,
                    detail: format!(
                        "skipped: measuring needs the run-benchmark authorization ({why})"
                    ),
                })
                .collect();
            Ok(Grant {
                owner,
                params: DoctorParams {
                    request: asked.request.read_only(),
                    ..asked
                },
                skipped,
                record: false,
            })
        }
        Err(e) => Err(e),
    }
}

/// The work of a doctor job (already decoded, checked and authorized).
pub(crate) fn prepare(grant: Grant, paths: Paths) -> Work {
    Box::new(move |progress, cancel| {
        let who = grant.owner.requester(grant.record);
        let request = &grant.params.request;
        let ran = crate::ops::doctor::run_request(request, &paths, who, progress, cancel).map_err(
            |e| Failure {
                class: e.class(),
                message: e.to_string(),
            },
        )?;
        if let Some(w) = ran.stored.warning() {
            warn!("doctor report {w}");
        }
        // Stored only when nothing was left out (see `authorize`).
        let mut report = ran.report;
        report.not_checked.extend(grant.skipped.iter().cloned());
        serde_json::to_value(report)
            .map(|v| ran.stored.marked(v))
            .map_err(|e| Failure::from(e.to_string()))
    })
}
