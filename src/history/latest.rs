//! The newest stored figure of a kind: what a workload verdict takes from
//! the history when it did not measure a layer now (no `--peer`, no
//! `--dir`, a read-only doctor), with the figure's age.

use rusqlite::params;

use super::store::format_ts;
use super::{History, HistoryError};

/// Which metrics count as one figure: names (any of), a unit, optionally
/// the subject (a peer, a directory).
#[derive(Clone, Debug)]
pub(crate) struct Wanted<'a> {
    pub(crate) names: &'a [&'a str],
    pub(crate) unit: &'a str,
    pub(crate) subject: Option<&'a str>,
}

/// A stored figure and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Latest {
    pub(crate) value: f64,
    pub(crate) name: String,
    pub(crate) subject: String,
    /// The result's kind (`net`, `report`, `check`, `doctor`...).
    pub(crate) kind: String,
    pub(crate) ts: i64,
}

impl Latest {
    /// `net upload to nas.lan:5201 (doctor, 2026-12-01 10:00:00)`.
    pub(crate) fn describe(&self) -> String {
        let subject = if self.subject.is_empty() {
            String::new()
        } else {
            format!(" of {}", self.subject)
        };
        format!(
            "{}{subject} ({}, {})",
            self.name,
            self.kind,
            format_ts(self.ts)
        )
    }
}

impl History {
    /// The newest metric `w` names.
    pub(crate) fn latest(&mut self, w: &Wanted<'_>) -> Result<Option<Latest>, HistoryError> {
        let names = serde_json::to_string(w.names).unwrap_or_default();
        let mut st = self.conn().prepare_cached(
            "SELECT m.value, m.name, m.subject, r.kind, r.ts FROM metrics m
             JOIN results r ON r.id = m.result_id
             WHERE m.name IN (SELECT value FROM json_each(?1)) AND m.unit = ?2
               AND (?3 IS NULL OR m.subject = ?3)
             ORDER BY r.ts DESC, r.id DESC LIMIT 1",
        )?;
        let mut rows = st.query(params![names, w.unit, w.subject])?;
        let Some(r) = rows.next()? else {
            return Ok(None);
        };
        Ok(Some(Latest {
            value: r.get(0)?,
            name: r.get(1)?,
            subject: r.get(2)?,
            kind: r.get(3)?,
            ts: r.get(4)?,
        }))
    }
}
