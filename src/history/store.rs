//! Writing results (one transaction per result with its metrics) and reading them back.

use crate::path::throughput::Direction;
use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::settings::Snapshot;
use super::{History, HistoryError, Kind};
use crate::host::HostInfo;

/// One number of a result: `net upload` to `10.0.0.2:5201`, 941e6 bit/s.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// `net upload`, `net download`, `disk seq-write`, `cpu single`...
    pub(crate) name: String,
    /// What was measured against: a peer, a directory, or empty.
    pub(crate) subject: String,
    pub(crate) value: f64,
    /// `bit/s`, `B/s`, `IOPS`, `events/s`.
    pub(crate) unit: String,
    pub(crate) higher_is_better: bool,
}

impl Metric {
    pub fn new(name: &str, subject: &str, value: f64, unit: &str) -> Metric {
        Metric {
            name: name.into(),
            subject: subject.into(),
            value,
            unit: unit.into(),
            higher_is_better: true,
        }
    }

    /// The value with its unit, e.g. `941 Mbit/s`.
    pub(crate) fn display_value(&self) -> String {
        format_value(self.value, &self.unit)
    }
}

pub(crate) fn format_value(v: f64, unit: &str) -> String {
    match unit {
        "bit/s" => crate::units::bps(v),
        "B/s" => format!("{}/s", crate::units::bytes(v as u64)),
        _ => format!("{v:.0} {unit}"),
    }
}

/// The CPU benchmark's metric for a run on `threads` threads: "cpu 1
/// thread", "cpu 4 threads" (rows before schema 4 said "cpu 1 threads";
/// migration 4 renamed them).
pub(crate) fn cpu_metric_name(threads: usize) -> String {
    match threads {
        1 => "cpu 1 thread".to_string(),
        n => format!("cpu {n} threads"),
    }
}

/// `bench file`'s metric of one protocol and direction: "file ssh read".
pub(crate) fn file_metric_name(protocol: &str, direction: &str) -> String {
    format!("file {protocol} {direction}")
}

/// A `bench file` transfer pair's metrics: each direction's bytes per
/// second, named by protocol and direction, at the place measured
/// (`user@host:port:/dir` or the directory).
pub(crate) fn file_metrics(f: &crate::bench::file::FileReport) -> Vec<Metric> {
    f.transfers()
        .into_iter()
        .map(|t| {
            let name = file_metric_name(&f.protocol, t.direction.as_str());
            Metric::new(&name, &f.place, t.bytes_per_second, "B/s")
        })
        .collect()
}

/// The protocol and direction of a [`file_metric_name`], or `None` for any
/// other metric.
pub(crate) fn parse_file_metric(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix("file ")?;
    let (protocol, direction) = rest.rsplit_once(' ')?;
    (!protocol.is_empty() && matches!(direction, "read" | "write")).then_some((protocol, direction))
}

/// The two throughput metrics of a path to `peer` (upload, download).
pub(crate) fn net_metrics(peer: &str, upload_bps: f64, download_bps: f64) -> Vec<Metric> {
    vec![
        net_metric(peer, Direction::Upload, upload_bps),
        net_metric(peer, Direction::Download, download_bps),
    ]
}

/// One direction's network figure to `peer`.
pub(crate) fn net_metric(peer: &str, dir: Direction, bps: f64) -> Metric {
    Metric::new(&format!("net {dir}"), peer, bps, "bit/s")
}

/// A result to store.
#[derive(Clone, Debug)]
pub struct NewResult {
    pub kind: Kind,
    pub host: HostInfo,
    pub interface: Option<String>,
    pub peer: Option<String>,
    pub settings: Snapshot,
    pub result: serde_json::Value,
    pub metrics: Vec<Metric>,
    /// Unix seconds; `None` = now.
    pub ts: Option<i64>,
    /// Who asked for it: the uid of hlctld's caller; `None` = the user of
    /// this process (an in-process run).
    pub uid: Option<u32>,
}

/// A stored result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct StoredResult {
    pub(crate) id: i64,
    pub(crate) ts: i64,
    pub(crate) kind: String,
    pub(crate) host: String,
    pub(crate) kernel: String,
    pub(crate) interface: Option<String>,
    pub(crate) peer: Option<String>,
    /// Who asked for it (`None` in rows stored before uids were recorded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) uid: Option<u32>,
    pub(crate) metrics: Vec<Metric>,
    pub(crate) settings: Snapshot,
    pub(crate) result: serde_json::Value,
}

impl History {
    /// Store one result with its metrics (atomically); returns its id.
    pub fn add(&mut self, r: &NewResult) -> Result<i64, HistoryError> {
        let id = self.insert(r);
        self.written(id)
    }

    fn insert(&mut self, r: &NewResult) -> Result<i64, HistoryError> {
        let tx = self.conn().transaction()?;
        tx.execute(
            "INSERT INTO results (ts, kind, host, kernel, interface, peer, settings, result, uid)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                r.ts.unwrap_or_else(crate::host::now_unix),
                r.kind.as_str(),
                r.host.host,
                r.host.kernel,
                r.interface,
                r.peer,
                serde_json::to_string(&r.settings).unwrap_or_else(|_| "{}".into()),
                r.result.to_string(),
                r.uid.unwrap_or_else(|| nix::unistd::getuid().as_raw()),
            ],
        )?;
        let id = tx.last_insert_rowid();
        for m in &r.metrics {
            tx.execute(
                "INSERT INTO metrics (result_id, name, subject, value, unit, higher_is_better)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![id, m.name, m.subject, m.value, m.unit, m.higher_is_better],
            )?;
        }
        super::commit(tx, crate::crashpoint::HISTORY_ROW)?;
        Ok(id)
    }

    fn metrics_of(&mut self, id: i64) -> Result<Vec<Metric>, HistoryError> {
        let mut st = self.conn().prepare_cached(
            "SELECT name, subject, value, unit, higher_is_better FROM metrics WHERE result_id = ?1 ORDER BY rowid",
        )?;
        let rows = st.query_map([id], |r| {
            Ok(Metric {
                name: r.get(0)?,
                subject: r.get(1)?,
                value: r.get(2)?,
                unit: r.get(3)?,
                higher_is_better: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Results, newest first, optionally of one kind and since a time.
    pub(crate) fn list(
        &mut self,
        kind: Option<Kind>,
        since: Option<i64>,
        limit: u32,
    ) -> Result<Vec<StoredResult>, HistoryError> {
        let mut out = Vec::new();
        {
            let mut st = self.conn().prepare(
                "SELECT id, ts, kind, host, kernel, interface, peer, settings, result, uid FROM results
                 WHERE (?1 IS NULL OR kind = ?1) AND (?2 IS NULL OR ts >= ?2)
                 ORDER BY ts DESC, id DESC LIMIT ?3",
            )?;
            let rows = st.query_map(params![kind.map(Kind::as_str), since, limit], |r| {
                let settings: String = r.get(7)?;
                let result: String = r.get(8)?;
                Ok(StoredResult {
                    id: r.get(0)?,
                    ts: r.get(1)?,
                    kind: r.get(2)?,
                    host: r.get(3)?,
                    kernel: r.get(4)?,
                    interface: r.get(5)?,
                    peer: r.get(6)?,
                    uid: r.get(9)?,
                    metrics: Vec::new(),
                    settings: serde_json::from_str(&settings).unwrap_or_default(),
                    result: serde_json::from_str(&result).unwrap_or(serde_json::Value::Null),
                })
            })?;
            for r in rows {
                out.push(r?);
            }
        }
        for r in out.iter_mut() {
            r.metrics = self.metrics_of(r.id)?;
        }
        Ok(out)
    }
}

/// Parse `--since`: `YYYY-MM-DD`, `YYYY-MM-DD HH:MM[:SS]` (UTC), or Unix seconds.
pub(crate) fn parse_since(s: &str) -> Result<i64, HistoryError> {
    let bad = |why: &str| HistoryError::Invalid {
        what: "date",
        value: s.to_string(),
        why: why.to_string(),
    };
    if let Ok(n) = s.parse::<i64>() {
        return Ok(n);
    }
    let (date, time) = s.split_once([' ', 'T']).unwrap_or((s, "00:00:00"));
    let d: Vec<i64> = date
        .split('-')
        .map(|x| x.parse::<i64>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad("expected YYYY-MM-DD [HH:MM[:SS]] (UTC) or Unix seconds"))?;
    let t: Vec<i64> = time
        .split(':')
        .map(|x| x.parse::<i64>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad("the time must be HH:MM[:SS]"))?;
    let [y, m, day] = d[..] else {
        return Err(bad("expected YYYY-MM-DD"));
    };
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || t.len() < 2 || t.len() > 3 {
        return Err(bad("month 1 to 12, day 1 to 31, time HH:MM[:SS]"));
    }
    let (hh, mm, ss) = (t[0], t[1], t.get(2).copied().unwrap_or(0));
    if !(0..24).contains(&hh) || !(0..60).contains(&mm) || !(0..61).contains(&ss) {
        return Err(bad("hours 0 to 23, minutes and seconds 0 to 59"));
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Ok(days * 86_400 + hh * 3600 + mm * 60 + ss)
}

/// Unix seconds → `YYYY-MM-DD HH:MM:SS` (UTC).
pub(crate) fn format_ts(ts: i64) -> String {
    let (y, m, d, secs) = crate::units::civil(ts);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip() {
        assert_eq!(parse_since("1970-01-01").unwrap(), 0);
        assert_eq!(parse_since("2026-11-29 23:33").unwrap(), 1_795_995_180);
        assert_eq!(format_ts(1_795_995_180), "2026-11-29 23:33:00");
        assert!(parse_since("2026-13-01").is_err());
        assert!(parse_since("yesterday").is_err());
    }
}
