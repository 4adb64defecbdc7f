//! `hlctl tune`: measure, change one thing at a time, keep only what a
//! benchmark proves better, roll back everything else, persist the rest.
//!
//! - [`plan`]: candidates from the doctor's inputs, each with its reason;
//! - [`change`]: what a candidate changes (NIC + sysctls);
//! - [`target`]: applying and checking (live, or scripted in tests);
//! - [`checkpoint`]: the on-disk journal with a deadline, restore after a crash;
//! - [`decide`]: the keep/revert rule;
//! - [`link`]: the renegotiation candidate, waiting for carrier, its keep rule;
//! - [`run`]: the loop; [`report`]: its result;
//! - [`persist`]: sysctl.d + NIC state, and the last tune for `hlctl rollback`;
//! - [`rollback`]: undo the last tune or a pending journal.

pub(crate) mod change;
pub(crate) mod checkpoint;
pub(crate) mod decide;
pub(crate) mod link;
pub(crate) mod outcome;
pub(crate) mod params;
pub(crate) mod persist;
pub(crate) mod plan;
pub(crate) mod rollback;
pub(crate) mod run;
mod runs;
pub(crate) mod session;
pub(crate) mod status;
pub(crate) mod target;
mod trial;

use std::path::Path;

pub(crate) use change::Change;
pub(crate) use outcome::TuneReport;
pub(crate) use run::{Context, run};

#[derive(Debug, thiserror::Error)]
pub(crate) enum TuneError {
    #[error(transparent)]
    Nic(#[from] crate::nic::error::NicError),
    #[error("{0}")]
    Busy(String),
    #[error("cancelled")]
    Cancelled,
    #[error("{0}: the confirm deadline passed and the changes were restored")]
    DeadlinePassed(String),
    #[error("measuring: {0}")]
    Measure(String),
    #[error("restoring failed: {0}")]
    Restore(String),
    #[error("tune journal: {0}")]
    Journal(String),
    #[error("persisting: {0}")]
    Persist(String),
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Invalid(String),
    /// No benchmark server answers at the peer: nothing was changed.
    #[error("{0}")]
    Peer(String),
}

impl TuneError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        TuneError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}

#[cfg(test)]
mod false_keep;
#[cfg(test)]
mod tests;
