//! Typed errors of the disk benchmark; each names the path or option involved.

use std::path::PathBuf;

/// Why a disk benchmark could not run or finish. Each names the path involved.
#[derive(Debug, thiserror::Error)]
pub enum DiskError {
    #[error("invalid --{field}: {reason}")]
    InvalidConfig { field: &'static str, reason: String },
    #[error("{path}: {source}")]
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a directory")]
    NotADirectory { path: PathBuf },
    #[error(
        "refusing to run: {} has {} free, the test needs {} (its files) plus a safety \
         margin of {}; use a smaller --size or fewer --jobs",
        path.display(),
        crate::units::bytes(*available),
        crate::units::bytes(*needed),
        crate::units::bytes(*margin)
    )]
    NoSpace {
        path: PathBuf,
        needed: u64,
        margin: u64,
        available: u64,
    },
    #[error("cannot create test file {path}: {source}")]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot lay out test file {path}: {source}")]
    Layout {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{op} at offset {offset} in {path} failed: {source}")]
    Io {
        path: PathBuf,
        op: &'static str,
        offset: u64,
        source: std::io::Error,
    },
    #[error("the {engine} engine is unavailable: {reason}")]
    EngineUnavailable {
        engine: &'static str,
        reason: String,
    },
    #[error("cannot start a worker thread: {0}")]
    Thread(String),
    #[error("cancelled")]
    Cancelled,
}

/// How a caller reports a [`DiskError`] ([`crate::class`]): bad input
/// (nothing ran), not permitted, or a failure while running.
pub use crate::class::Class as ErrorClass;

impl DiskError {
    pub(crate) fn class(&self) -> ErrorClass {
        let denied = |err: &std::io::Error| {
            matches!(
                err.raw_os_error(),
                Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS)
            )
        };
        match self {
            DiskError::InvalidConfig { .. }
            | DiskError::NotADirectory { .. }
            | DiskError::NoSpace { .. } => ErrorClass::Invalid,
            DiskError::Dir { source, .. } | DiskError::Create { source, .. } if denied(source) => {
                ErrorClass::NotPermitted
            }
            DiskError::Dir { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                ErrorClass::Invalid
            }
            _ => ErrorClass::Failed,
        }
    }
}
