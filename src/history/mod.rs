//! History: every benchmark, doctor, tune and report result in an embedded
//! SQLite database (`<state dir>/history.db`), with host, kernel, interface,
//! peer and a settings snapshot; baselines and comparisons against them.
//!
//! The database runs in WAL mode with `synchronous=FULL`: a crash mid-write
//! leaves the last committed state. The schema is versioned ([`schema`]).
//!
//! - [`schema`]: migrations; [`store`]: writing and reading results;
//! - [`settings`]: the settings snapshot and its diff;
//! - [`compare`]: baselines and verdicts.

pub(crate) mod compare;
pub(crate) mod latest;
pub(crate) mod schema;
pub(crate) mod settings;
pub mod store;

use std::path::Path;

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

pub(crate) use compare::Verdict;
pub(crate) use store::{NewResult, StoredResult};

/// The database file's name in the state directory.
pub(crate) const DB_FILE: &str = "history.db";

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("history database {}: {source}", crate::mounted::shown(path))]
    Open {
        path: String,
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
}

impl Kind {
    pub(crate) const ALL: [Kind; 7] = [
        Kind::Net,
        Kind::Disk,
        Kind::Cpu,
        Kind::Doctor,
        Kind::Tune,
        Kind::Report,
        Kind::Check,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Net => "net",
            Kind::Disk => "disk",
            Kind::Cpu => "cpu",
            Kind::Doctor => "doctor",
            Kind::Tune => "tune",
            Kind::Report => "report",
            Kind::Check => "check",
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
}

impl History {
    /// Open (creating and migrating) `<state_dir>/history.db`.
    pub fn open(state_dir: &Path) -> Result<History, HistoryError> {
        Self::open_file(&state_dir.join(DB_FILE))
    }

    pub(crate) fn open_file(path: &Path) -> Result<History, HistoryError> {
        let err = |source| HistoryError::Open {
            path: path.display().to_string(),
            source,
        };
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let mut conn = Connection::open(path).map_err(err)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(err)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(err)?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(err)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(err)?;
        schema::migrate(&mut conn)?;
        Ok(History { conn })
    }

    pub(crate) fn conn(&mut self) -> &mut Connection {
        &mut self.conn
    }
}
