//! Tuning as a daemon job (`Manager.Tune`), with the commit-confirm deadline
//! enforced here: the job's kept changes wait for `Job.Confirm` from the
//! client; if it does not come within the confirm timeout (the client died,
//! its connection dropped, the machine stopped answering) the changes are
//! rolled back. A watchdog thread restores any journal whose deadline passed,
//! and at start the daemon restores journals left by a crash.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::{info, warn};

use super::job::{Failure, Work};
use super::state::Confirmation;
use crate::bench::progress::{Cancel, ProgressEvent};
use crate::dbus::wire::error::{Error, Result};
use crate::paths::Paths;
use crate::tune::checkpoint;
use crate::tune::params::TuneParams;
use crate::tune::rollback::restore_journal;

/// Decode the `params` option and check it before anything starts.
pub(crate) fn check(p: TuneParams) -> Result<TuneParams> {
    p.options(None).map_err(Error::InvalidArgument)?;
    Ok(p)
}

/// The job's work, and its commit-confirm handshake (`Job.Confirm`).
pub(crate) fn prepare(
    p: TuneParams,
    paths: Paths,
    who: crate::ops::Requester,
) -> (Work, Arc<Confirmation>) {
    let flag = Arc::new(Confirmation::default());
    let f = flag.clone();
    let work: Work = Box::new(move |progress, cancel| {
        let timeout = Duration::from_secs(p.confirm_timeout_s.unwrap_or(60));
        let mut confirm = |_: &crate::tune::TuneReport| {
            let until = Instant::now() + timeout;
            f.set_awaiting(true);
            let confirmed = loop {
                if f.is_confirmed() {
                    break true;
                }
                if Instant::now() >= until || cancel.is_cancelled() {
                    break false;
                }
                let left = until.saturating_duration_since(Instant::now()).as_secs();
                progress.report(ProgressEvent {
                    fraction: 0.99,
                    message: format!("awaiting confirmation ({left} s left)"),
                });
                std::thread::sleep(Duration::from_millis(200));
            };
            f.set_awaiting(false);
            if !confirmed {
                warn!(interface = %p.interface, "tune not confirmed within {} s: rolling back", timeout.as_secs());
            }
            confirmed
        };
        let r = crate::ops::tune::run(&p, &paths, who, progress, cancel, &mut confirm);
        match r {
            Ok(ran) => {
                if let Some(w) = ran.stored.warning() {
                    warn!("tune result {w}");
                }
                serde_json::to_value(ran.report)
                    .map(|v| ran.stored.marked(v))
                    .map_err(|e| Failure::from(e.to_string()))
            }
            Err(e) => Err(Failure {
                class: e.class(),
                message: e.to_string(),
            }),
        }
    });
    (work, flag)
}

/// At daemon start: restore journals left by a crash, then watch deadlines.
pub(crate) fn on_start(paths: &Paths) {
    for r in crate::ops::reapply::restore_unfinished(paths) {
        let what = if r.tune_id.starts_with(crate::ops::try_change::ID_PREFIX) {
            "an unconfirmed try"
        } else if r.tune_id.starts_with(crate::ops::nic::SET_PREFIX) {
            "a change set cut short"
        } else {
            "an unfinished tune"
        };
        if r.errors.is_empty() {
            info!(interface = %r.interface, tune = %r.tune_id, "restored the settings of {what} ({})", r.why);
        } else {
            warn!(interface = %r.interface, tune = %r.tune_id, "restoring {what} failed: {}", r.errors.join("; "));
        }
    }
    let _ = checkpoint::spawn_watchdog(
        paths.clone(),
        Duration::from_millis(500),
        Cancel::new(),
        restore_journal(paths),
        |r| {
            if r.errors.is_empty() {
                info!(interface = %r.interface, tune = %r.tune_id, "rolled back: {}", r.why);
            } else {
                warn!(interface = %r.interface, tune = %r.tune_id, "rollback at the deadline failed: {}", r.errors.join("; "));
            }
        },
    );
}
