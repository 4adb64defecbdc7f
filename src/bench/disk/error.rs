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
        "refusing to run: {path} has {available} bytes free, the test needs {needed} bytes \
         (its files) plus a safety margin of {margin} bytes; use a smaller --size or fewer --jobs"
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
