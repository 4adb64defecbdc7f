//! A change with `rollback_timeout_s` (`Link.ApplyChanges`,
//! `Manager.SetSysctl`) as a job of kind `try:IFACE` or `try:sysctl`: the
//! change is applied and journalled ([`crate::ops::try_change`]); the job
//! waits, `awaiting-confirmation`, for `Job.Confirm` (keep, and persist
//! when asked), `Job.Cancel` (restore now) or the deadline (restore). Its
//! caller leaving the bus cancels it, so the change is restored at once, as
//! `netplan try` does when its client dies. A crash of hlctld leaves the
//! journal, which hlctld restores when it starts again.

use std::sync::{Arc, Mutex};

use tracing::{info, warn};
use zbus::{Connection, OwnedObjectPath};

use super::auth::Caller;
use super::job::{self, NewJob, Work};
use super::state::{Claim, Confirmation, Daemon, lock};
use crate::dbus::wire::error::{Error, Result};
use crate::ops::try_change::{self, Answer, Pending, TryEnd};

/// The longest `rollback_timeout_s` hlctld takes: the try must end before
/// `--max-job-seconds` cancels its job.
pub(crate) fn max_seconds(d: &Daemon) -> u32 {
    let lifetime = u32::try_from(d.opts.job_lifetime.as_secs()).unwrap_or(u32::MAX);
    try_change::MAX_SECONDS
        .min(lifetime.saturating_sub(1))
        .max(1)
}

/// Start the job that waits for the confirmation of `pending`. On any
/// failure to start it, the change is restored before the error returns.
pub(crate) async fn start(
    conn: &Connection,
    d: &Arc<Daemon>,
    what: &str,
    owner: Caller,
    claim: Option<Claim>,
    objects: Vec<OwnedObjectPath>,
    pending: Pending,
) -> Result<OwnedObjectPath> {
    let flag = Arc::new(Confirmation::default());
    flag.set_awaiting(true);
    let id = pending.id();
    let slot = Arc::new(Mutex::new(Some(pending)));
    let new = NewJob {
        kind: format!("try:{what}"),
        owner,
        detached: false,
        claim,
        confirm: Some(flag.clone()),
        measures: false,
        objects,
        progress_valid: false,
    };
    let work = work(d.clone(), what.to_string(), slot.clone(), flag);
    match job::start(conn, d, new, work).await {
        Ok(p) => Ok(p),
        Err(e) => {
            if let Some(p) = lock(&slot).take() {
                let end = try_change::finish(p, Answer::Cancelled, None);
                log_end(what, &id, &end);
            }
            Err(e)
        }
    }
}

/// The job's work: wait for the answer, then keep or restore.
fn work(
    d: Arc<Daemon>,
    what: String,
    slot: Arc<Mutex<Option<Pending>>>,
    flag: Arc<Confirmation>,
) -> Work {
    Box::new(move |progress, cancel| {
        let Some(p) = lock(&slot).take() else {
            return Err("the try ended before its job started".to_string().into());
        };
        let id = p.id();
        progress.report(crate::bench::progress::ProgressEvent {
            fraction: 0.0,
            message: format!("awaiting confirmation ({} s)", p.timeout_s()),
        });
        let answer = try_change::wait(p.deadline(), &|| flag.is_confirmed(), &|| {
            cancel.is_cancelled()
        });
        flag.set_awaiting(false);
        let end = match answer {
            Answer::Confirmed => {
                let mut nl = lock(&d.writer);
                try_change::finish(p, answer, Some(&mut nl))
            }
            _ => try_change::finish(p, answer, None),
        };
        log_end(&what, &id, &end);
        serde_json::to_value(&end).map_err(|e| e.to_string().into())
    })
}

/// hlctld's log line of how a try ended.
fn log_end(what: &str, id: &str, end: &TryEnd) {
    if end.kept {
        info!(target_name = %what, try_id = %id, "try {id} of {what}: kept ({})", end.why);
    } else if end.errors.is_empty() {
        info!(target_name = %what, try_id = %id, "try {id} of {what}: restored ({})", end.why);
    } else {
        warn!(target_name = %what, try_id = %id, "try {id} of {what}: restoring failed ({}): {}", end.why, end.errors.join("; "));
    }
    if let Some(p) = &end.persisted {
        info!(target_name = %what, try_id = %id, "try {id} of {what}: persisted in {p}");
    }
}

/// Map a try that could not start to the D-Bus error.
pub(crate) fn error(e: try_change::TryError) -> Error {
    match e {
        try_change::TryError::Nic(e) => e.into(),
        try_change::TryError::Sysctl(e) => e.into(),
        try_change::TryError::Journal(crate::tune::TuneError::Busy(m)) => Error::Busy(m),
        j @ try_change::TryError::Journal(_) => Error::Failed(j.to_string()),
    }
}

/// The `job` key of a reply's summary.
pub(crate) fn job_value(p: &OwnedObjectPath) -> zbus::OwnedVariant {
    zbus::Variant::from(p.as_ref())
        .try_to_owned()
        .unwrap_or_else(|_| zbus::OwnedVariant::from(false))
}
