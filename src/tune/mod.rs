//! `hlctl tune`: measure, change one thing at a time, keep only what a
//! benchmark proves better, roll back everything else, persist the rest.
//!
//! - [`plan`]: candidates from the doctor's inputs, each with its reason;
//! - [`change`]: what a candidate changes (NIC + sysctls);
//! - [`target`]: applying and checking (live, or scripted in tests);
//! - [`checkpoint`]: the on-disk journal with a deadline, restore after a crash;
//! - [`decide`]: the keep/revert rule;
//! - [`cores`]: the candidates where a core is the limit (channels, RPS, coalescing);
//! - [`spread`]: interrupt affinity and XPS of a multi-queue device;
//! - [`softnet`]: backlog and budget, when their softnet counters moved;
//! - [`link`]: the renegotiation candidate, waiting for carrier, its keep rule;
//! - [`run`]: the loop; [`report`]: its result;
//! - [`persist`]: sysctl.d + NIC state, and the last tune for `hlctl rollback`;
//! - [`rollback`]: undo the last tune or a pending journal.

pub(crate) mod change;
pub(crate) mod checkpoint;
pub(crate) mod cores;
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
mod softnet;
mod spread;
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
    /// The journal could not be started (a full or read-only state disk):
    /// the tune stopped before its first change.
    #[error(
        "nothing was changed: the tune journal (what restores the old values if the tune dies) cannot be written: {path}: {source}"
    )]
    NotJournalled {
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
    /// Its class ([`crate::class`]): a NIC error's own, invalid input, else
    /// failed (a peer without a server, a measurement, a restore).
    pub(crate) fn class(&self) -> crate::class::Class {
        match self {
            TuneError::Invalid(_) => crate::class::Class::Invalid,
            TuneError::Nic(n) => n.class(),
            TuneError::NotJournalled { source, .. } => {
                crate::class::Class::of_errno(source.raw_os_error())
            }
            _ => crate::class::Class::Failed,
        }
    }

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

#[cfg(test)]
mod class_tests {
    use super::TuneError;
    use crate::class::Class;
    use crate::nic::error::NicError;

    /// An invalid NIC setting met by a tune is the caller's input (exit 2)
    /// in process and as a job's class through hlctld: both read this.
    #[test]
    fn a_nic_error_keeps_its_class_inside_a_tune() {
        let invalid = NicError::Invalid {
            iface: "eth9".into(),
            problems: Vec::new(),
        };
        assert_eq!(TuneError::Nic(invalid).class(), Class::Invalid);
        assert_eq!(
            TuneError::Nic(invalid_errno(libc::EPERM)).class(),
            Class::NotPermitted
        );
        assert_eq!(
            TuneError::Nic(invalid_errno(libc::EOPNOTSUPP)).class(),
            Class::Failed
        );
        assert_eq!(TuneError::Measure("x".into()).class(), Class::Failed);
        assert_eq!(Class::Invalid.wire(), "invalid");
    }

    fn invalid_errno(errno: i32) -> NicError {
        NicError::Ioctl {
            iface: "eth9".into(),
            op: "test",
            source: std::io::Error::from_raw_os_error(errno),
        }
    }
}
