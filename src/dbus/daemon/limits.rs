//! What one caller may start: hlctld runs every job as root, so an
//! unprivileged user must not be able to fill the machine with them.
//!
//! - at most [`PER_USER`] active jobs per uid other than root's;
//! - at most [`TOTAL`] active jobs in all;
//! - a job is cancelled when it has run for hlctld's `--max-job-seconds`
//!   (4 hours unless set), whatever it is;
//! - jobs that measure (benchmarks, a doctor or report that measures, a
//!   tune) take the host's measurement lock one at a time
//!   ([`crate::bench::exclusive`]), so no figure is taken on top of another.
//!
//! A refused start is `org.hlctl.Daemon1.Error.LimitExceeded`, naming the
//! limit; nothing was started.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::auth::Caller;
use super::state::JobState;
use crate::dbus::wire::error::{Error, Result};

/// Active jobs one unprivileged uid may have.
pub(crate) const PER_USER: usize = 2;
/// Active jobs in all.
pub(crate) const TOTAL: usize = 8;

/// Refuse a new job for `owner` when a limit is reached; `jobs` is the
/// daemon's job table, locked by the caller until the new job is in it.
pub(crate) fn admit(jobs: &BTreeMap<u64, Arc<JobState>>, owner: &Caller) -> Result<()> {
    let active: Vec<_> = jobs.values().filter(|j| j.status().is_active()).collect();
    if active.len() >= TOTAL {
        return Err(Error::LimitExceeded(format!(
            "{} jobs are running, the most hlctld runs at once ({TOTAL}); try again when one has ended",
            active.len()
        )));
    }
    if owner.uid == Some(0) {
        return Ok(());
    }
    let theirs = active.iter().filter(|j| j.owner.uid == owner.uid).count();
    if theirs >= PER_USER {
        return Err(Error::LimitExceeded(format!(
            "uid {} already has {theirs} jobs running, the most an unprivileged user may have \
             ({PER_USER}); cancel one (Job.Cancel) or wait for it to end",
            owner.uid_text()
        )));
    }
    Ok(())
}
