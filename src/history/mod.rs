//! History: every benchmark, doctor, tune and report result in an embedded
//! SQLite database (`<state dir>/history.db`), with host, kernel, interface,
//! peer and a settings snapshot; baselines and comparisons against them.
//!
//! The database runs in WAL mode with `synchronous=FULL`: a crash mid-write
//! leaves the last committed state. The schema is versioned ([`schema`]).
//!
//! - [`schema`]: migrations; [`store`]: writing and reading results;
//! - [`settings`]: the settings snapshot and its diff;
//! - [`compare`]: baselines and verdicts;
//! - [`transfers`]: the newest transfer figure per peer, protocol and direction.

pub(crate) mod compare;
pub(crate) mod latest;
pub(crate) mod schema;
pub(crate) mod settings;
pub mod store;
pub(crate) mod transfers;

use std::path::Path;

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

pub(crate) use compare::Verdict;
pub(crate) use store::{NewResult, StoredResult};

/// The database file's name in the state directory.
pub(crate) const DB_FILE: &str = "history.db";

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("history database {}: {}", crate::mounted::shown(path), why(source, *errno))]
    Open {
        path: String,
        /// The errno of the system call SQLite saw fail, when one did.
        errno: Option<i32>,
        #[source]
        source: rusqlite::Error,
    },
    /// A write (a result, a baseline, usage rows) that did not land: the
    /// transaction rolled back, the file is as it was.
    #[error(
        "history database {}: could not be written: {}",
        crate::mounted::shown(path),
        why(source, *errno)
    )]
    Write {
        path: String,
        errno: Option<i32>,
        #[source]
        source: rusqlite::Error,
    },
    #[error("history database: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error(
        "history database has schema version {found}; this hlctl reads up to {supported}: upgrade hlctl"
    )]
    TooNew { found: i64, supported: i64 },
    #[error("no baseline named '{0}' (hlctl baseline list shows them)")]
    NoBaseline(String),
    #[error("no baseline saved yet: hlctl baseline save NAME")]
    NoBaselines,
    #[error(
        "nothing to save: no results in the history yet (run hlctl report, hlctl bench ... or hlctl tune first)"
    )]
    Empty,
    #[error("invalid {what} '{value}': {why}")]
    Invalid {
        what: &'static str,
        value: String,
        why: String,
    },
}

impl HistoryError {
    /// Its class ([`crate::class`]): a bad filter or a missing baseline is
    /// the caller's input, a file the caller may not open or write (EACCES,
    /// EPERM) not permitted, else failed.
    pub fn class(&self) -> crate::class::Class {
        match self {
            HistoryError::Invalid { .. }
            | HistoryError::NoBaseline(_)
            | HistoryError::NoBaselines => crate::class::Class::Invalid,
            HistoryError::Open { errno, .. } | HistoryError::Write { errno, .. } => {
                crate::class::Class::of_errno(*errno)
            }
            _ => crate::class::Class::Failed,
        }
    }

    /// A failure to open the database for a write, said as the failed
    /// write it is.
    pub(crate) fn into_write(self) -> HistoryError {
        match self {
            HistoryError::Open {
                path,
                errno,
                source,
            } => HistoryError::Write {
                path,
                errno,
                source,
            },
            e => e,
        }
    }
}

/// SQLite's error with the errno's text in front of it when a system call
/// failed (`No space left on device (os error 28) (database or disk is full)`).
fn why(source: &rusqlite::Error, errno: Option<i32>) -> String {
    match errno {
        Some(n) if n != 0 => format!("{} ({source})", std::io::Error::from_raw_os_error(n)),
        _ => source.to_string(),
    }
}

/// Why a write to `path` failed: EROFS when its filesystem is mounted
/// read-only (SQLite's last failed call is then often a read-only open of
/// a side file that is not there, ENOENT, which would mislead), else the
/// errno of the last system call that failed under `conn`, if any.
fn errno_of(path: &Path, conn: Option<&Connection>, source: &rusqlite::Error) -> Option<i32> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if nix::sys::statvfs::statvfs(dir)
        .is_ok_and(|v| v.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY))
    {
        return Some(libc::EROFS);
    }
    // SAFETY: the handle is valid while the connection lives;
    // sqlite3_system_errno only reads the connection's last errno.
    let n = conn.map_or(0, |c| unsafe {
        rusqlite::ffi::sqlite3_system_errno(c.handle())
    });
    // SQLITE_FULL with no failed call behind it: SQLite found the room
    // short itself (a full disk all the same).
    let full = source.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull);
    (n != 0)
        .then_some(n)
        .or_else(|| full.then_some(libc::ENOSPC))
}

/// What kind of result a row holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Net,
    Disk,
    Cpu,
    Doctor,
    Tune,
    Report,
    /// `hlctl check` (scheduled checks).
    Check,
    /// `hlctl bench file` (a file over SSH or a mount).
    File,
}

impl Kind {
    pub const ALL: [Kind; 8] = [
        Kind::Net,
        Kind::Disk,
        Kind::Cpu,
        Kind::Doctor,
        Kind::Tune,
        Kind::Report,
        Kind::Check,
        Kind::File,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Net => "net",
            Kind::Disk => "disk",
            Kind::Cpu => "cpu",
            Kind::Doctor => "doctor",
            Kind::Tune => "tune",
            Kind::Report => "report",
            Kind::Check => "check",
            Kind::File => "file",
        }
    }

    pub(crate) fn parse(s: &str) -> Result<Kind, HistoryError> {
        Kind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| HistoryError::Invalid {
                what: "kind",
                value: s.to_string(),
                why: "allowed net, disk, cpu, doctor, tune, report, check".into(),
            })
    }
}

/// An open history database.
pub struct History {
    conn: Connection,
    path: std::path::PathBuf,
}

impl History {
    /// Open (creating and migrating) `<state_dir>/history.db`.
    pub fn open(state_dir: &Path) -> Result<History, HistoryError> {
        Self::open_file(&state_dir.join(DB_FILE))
    }

    pub(crate) fn open_file(path: &Path) -> Result<History, HistoryError> {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let conn = Connection::open(path).map_err(|source| HistoryError::Open {
            path: path.display().to_string(),
            errno: errno_of(path, None, &source),
            source,
        })?;
        let err = |source| HistoryError::Open {
            path: path.display().to_string(),
            errno: errno_of(path, Some(&conn), &source),
            source,
        };
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(err)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(err)?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(err)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(err)?;
        let mut h = History {
            conn,
            path: path.to_path_buf(),
        };
        let migrated = schema::migrate(&mut h.conn);
        h.written(migrated)?;
        Ok(h)
    }

    pub(crate) fn conn(&mut self) -> &mut Connection {
        &mut self.conn
    }
}

/// Commit a write's transaction between its crash points (`points`: before
/// COMMIT, after it; [`crate::crashpoint`]).
pub(crate) fn commit(
    tx: rusqlite::Transaction<'_>,
    points: (&'static str, &'static str),
) -> rusqlite::Result<()> {
    crate::crashpoint::hit(points.0);
    tx.commit()?;
    crate::crashpoint::hit(points.1);
    Ok(())
}

impl History {
    /// A write's result, an SQLite error in it typed as a failed write of
    /// this file with the errno of the system call that failed.
    pub(crate) fn written<T>(&self, r: Result<T, HistoryError>) -> Result<T, HistoryError> {
        r.map_err(|e| match e {
            HistoryError::Sql(source) => HistoryError::Write {
                path: self.path.display().to_string(),
                errno: errno_of(&self.path, Some(&self.conn), &source),
                source,
            },
            e => e,
        })
    }
}
