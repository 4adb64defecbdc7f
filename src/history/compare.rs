//! Baselines (a frozen copy of the latest value of every metric, with the
//! settings at the time) and comparisons against them: a verdict per metric
//! and the settings that changed since.

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::settings::{self, Changed, Snapshot};
use super::store::{Metric, format_value};
use super::{History, HistoryError};
use crate::host::HostInfo;

/// The change (percent) beyond which a metric is a regression or an improvement
/// unless the caller says otherwise.
pub(crate) const DEFAULT_THRESHOLD: f64 = 10.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub(crate) enum Verdict {
    Regression,
    Improved,
    Ok,
    /// Nothing measured since the baseline.
    NotMeasured,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::Regression => "REGRESSION",
            Verdict::Improved => "IMPROVED",
            Verdict::Ok => "OK",
            Verdict::NotMeasured => "NOT MEASURED",
        })
    }
}

/// One metric against the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct MetricComparison {
    pub(crate) name: String,
    pub(crate) subject: String,
    pub(crate) unit: String,
    pub(crate) baseline: f64,
    pub(crate) now: Option<f64>,
    /// (now − baseline) / baseline × 100.
    pub(crate) change_percent: Option<f64>,
    pub(crate) verdict: Verdict,
    /// Settings that differ between the baseline's measurement and this one.
    pub(crate) changed_settings: Vec<Changed>,
    /// One line: "net upload → nas: 112 Mbit/s vs baseline 941 Mbit/s: −88%, REGRESSION".
    pub(crate) text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Comparison {
    pub(crate) baseline: String,
    pub(crate) baseline_ts: i64,
    pub(crate) threshold_percent: f64,
    pub(crate) metrics: Vec<MetricComparison>,
}

impl Comparison {
    pub(crate) fn regressions(&self) -> usize {
        self.metrics
            .iter()
            .filter(|m| m.verdict == Verdict::Regression)
            .count()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct BaselineInfo {
    pub(crate) name: String,
    pub(crate) ts: i64,
    pub(crate) host: String,
    pub(crate) metrics: usize,
}

pub(crate) fn check_name(name: &str) -> Result<(), HistoryError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if ok {
        Ok(())
    } else {
        Err(HistoryError::Invalid {
            what: "baseline name",
            value: name.to_string(),
            why: "use 1 to 64 letters, digits, '-', '_' or '.'".into(),
        })
    }
}

fn arrow(subject: &str) -> String {
    if subject.is_empty() {
        String::new()
    } else {
        format!(" → {subject}")
    }
}

/// The verdict for one pair of values.
pub(crate) fn verdict(
    base: f64,
    now: f64,
    higher_is_better: bool,
    threshold_percent: f64,
) -> (f64, Verdict) {
    let change = if base != 0.0 {
        (now - base) / base * 100.0
    } else {
        0.0
    };
    let better = if higher_is_better { change } else { -change };
    let v = if better < -threshold_percent {
        Verdict::Regression
    } else if better > threshold_percent {
        Verdict::Improved
    } else {
        Verdict::Ok
    };
    (change, v)
}

/// One metric of a reference (baseline or earlier result) against its latest value.
/// `reference` names it in the text: "baseline", "previous check".
fn metric_comparison(
    m: Metric,
    reference: &str,
    before: &Snapshot,
    latest: Option<(f64, Snapshot)>,
    threshold_percent: f64,
) -> MetricComparison {
    match latest {
        None => MetricComparison {
            text: format!(
                "{}{}: {reference} {}, not measured since: {}",
                m.name,
                arrow(&m.subject),
                m.display_value(),
                Verdict::NotMeasured
            ),
            name: m.name,
            subject: m.subject,
            unit: m.unit,
            baseline: m.value,
            now: None,
            change_percent: None,
            verdict: Verdict::NotMeasured,
            changed_settings: Vec::new(),
        },
        Some((now, now_s)) => {
            let (change, v) = verdict(m.value, now, m.higher_is_better, threshold_percent);
            let changed = settings::diff(before, &now_s);
            let sign = if change < 0.0 { "−" } else { "+" };
            let mut text = format!(
                "{}{}: {} vs {reference} {}: {sign}{:.0}%, {v}",
                m.name,
                arrow(&m.subject),
                format_value(now, &m.unit),
                m.display_value(),
                change.abs()
            );
            if v != Verdict::Ok && !changed.is_empty() {
                let list: Vec<String> = changed.iter().map(|c| c.to_string()).collect();
                text += &format!("; changed since the {reference}: {}", list.join(", "));
            }
            MetricComparison {
                name: m.name,
                subject: m.subject,
                unit: m.unit,
                baseline: m.value,
                now: Some(now),
                change_percent: Some(change),
                verdict: v,
                changed_settings: changed,
                text,
            }
        }
    }
}

/// Every metric of `reference` against the same metric (name and subject)
/// of `now`, e.g. this check against the previous one.
pub(crate) fn between(
    label: &str,
    reference: &super::StoredResult,
    now: &super::StoredResult,
    threshold_percent: f64,
) -> Comparison {
    let metrics = reference
        .metrics
        .iter()
        .map(|m| {
            let latest = now
                .metrics
                .iter()
                .find(|x| x.name == m.name && x.subject == m.subject)
                .map(|x| (x.value, now.settings.clone()));
            metric_comparison(
                m.clone(),
                label,
                &reference.settings,
                latest,
                threshold_percent,
            )
        })
        .collect();
    Comparison {
        baseline: label.to_string(),
        baseline_ts: reference.ts,
        threshold_percent,
        metrics,
    }
}

impl History {
    /// Freeze the latest value of every metric of this host as baseline `name`
    /// (replacing an older baseline of that name). Returns the number of metrics.
    pub(crate) fn save_baseline(
        &mut self,
        name: &str,
        host: &HostInfo,
    ) -> Result<usize, HistoryError> {
        check_name(name)?;
        let n = self.insert_baseline(name, host);
        self.written(n)
    }

    fn insert_baseline(&mut self, name: &str, host: &HostInfo) -> Result<usize, HistoryError> {
        let tx = self.conn().transaction()?;
        tx.execute("DELETE FROM baselines WHERE name = ?1", [name])?;
        tx.execute(
            "INSERT INTO baselines (name, ts, host) VALUES (?1, ?2, ?3)",
            params![name, crate::host::now_unix(), host.host],
        )?;
        let n = tx.execute(
            "INSERT INTO baseline_metrics (baseline, result_id, ts, name, subject, value, unit, higher_is_better, settings)
             SELECT ?1, r.id, r.ts, m.name, m.subject, m.value, m.unit, m.higher_is_better, r.settings
             FROM metrics m JOIN results r ON r.id = m.result_id
             WHERE r.host = ?2 AND r.id = (
                 SELECT r2.id FROM metrics m2 JOIN results r2 ON r2.id = m2.result_id
                 WHERE m2.name = m.name AND m2.subject = m.subject AND r2.host = ?2
                 ORDER BY r2.ts DESC, r2.id DESC LIMIT 1)",
            params![name, host.host],
        )?;
        if n == 0 {
            return Err(HistoryError::Empty); // the transaction rolls back on drop
        }
        super::commit(tx, crate::crashpoint::BASELINE)?;
        Ok(n)
    }

    pub(crate) fn baselines(&mut self) -> Result<Vec<BaselineInfo>, HistoryError> {
        let mut st = self.conn().prepare(
            "SELECT b.name, b.ts, b.host, (SELECT COUNT(*) FROM baseline_metrics m WHERE m.baseline = b.name)
             FROM baselines b ORDER BY b.ts DESC, b.rowid DESC",
        )?;
        let rows = st.query_map([], |r| {
            Ok(BaselineInfo {
                name: r.get(0)?,
                ts: r.get(1)?,
                host: r.get(2)?,
                metrics: r.get::<_, i64>(3)? as usize,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Compare the latest measurement of every baseline metric with the
    /// baseline `name` (default: the newest baseline).
    pub(crate) fn compare(
        &mut self,
        name: Option<&str>,
        threshold_percent: f64,
    ) -> Result<Comparison, HistoryError> {
        let all = self.baselines()?;
        let base = match name {
            Some(n) => all
                .into_iter()
                .find(|b| b.name == n)
                .ok_or_else(|| HistoryError::NoBaseline(n.to_string()))?,
            None => all.into_iter().next().ok_or(HistoryError::NoBaselines)?,
        };
        type Row = (i64, Metric, String);
        let rows: Vec<Row> = {
            let mut st = self.conn().prepare(
                "SELECT result_id, name, subject, value, unit, higher_is_better, settings
                 FROM baseline_metrics WHERE baseline = ?1 ORDER BY name, subject",
            )?;
            let it = st.query_map([&base.name], |r| {
                Ok((
                    r.get(0)?,
                    Metric {
                        name: r.get(1)?,
                        subject: r.get(2)?,
                        value: r.get(3)?,
                        unit: r.get(4)?,
                        higher_is_better: r.get(5)?,
                    },
                    r.get(6)?,
                ))
            })?;
            it.collect::<Result<_, _>>()?
        };
        let mut metrics = Vec::new();
        for (result_id, m, base_settings) in rows {
            let latest: Option<(f64, String)> = self
                .conn()
                .query_row(
                    "SELECT m.value, r.settings FROM metrics m JOIN results r ON r.id = m.result_id
                     WHERE m.name = ?1 AND m.subject = ?2 AND r.host = ?3 AND r.id > ?4
                     ORDER BY r.ts DESC, r.id DESC LIMIT 1",
                    params![m.name, m.subject, base.host, result_id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .map(Some)
                .or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(None),
                    e => Err(e),
                })?;
            let before: Snapshot = serde_json::from_str(&base_settings).unwrap_or_default();
            let latest = latest.map(|(v, s)| (v, serde_json::from_str(&s).unwrap_or_default()));
            let mc = metric_comparison(m, "baseline", &before, latest, threshold_percent);
            metrics.push(mc);
        }
        Ok(Comparison {
            baseline: base.name,
            baseline_ts: base.ts,
            threshold_percent,
            metrics,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Kind, NewResult};

    fn add(h: &mut History, bps: f64, speed: &str, ts: i64) {
        let mut s = Snapshot::new();
        s.insert("eth0 link speed".into(), speed.into());
        h.add(&NewResult {
            kind: Kind::Net,
            host: HostInfo {
                host: "lab".into(),
                kernel: "6.1".into(),
            },
            interface: Some("eth0".into()),
            peer: Some("nas".into()),
            settings: s,
            result: serde_json::json!({}),
            metrics: vec![Metric::new("net upload", "nas", bps, "bit/s")],
            ts: Some(ts),
            uid: None,
        })
        .unwrap();
    }

    #[test]
    fn regression_with_the_setting_that_changed() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = History::open(dir.path()).unwrap();
        let host = HostInfo {
            host: "lab".into(),
            kernel: "6.1".into(),
        };
        assert!(matches!(
            h.save_baseline("good", &host),
            Err(HistoryError::Empty)
        ));
        add(&mut h, 930e6, "1000", 100);
        add(&mut h, 941e6, "1000", 200);
        assert_eq!(h.save_baseline("good", &host).unwrap(), 1);
        let c = h.compare(Some("good"), 10.0).unwrap();
        assert_eq!(c.metrics[0].verdict, Verdict::NotMeasured);
        add(&mut h, 112e6, "100", 300);
        let c = h.compare(None, 10.0).unwrap();
        let m = &c.metrics[0];
        assert_eq!(m.verdict, Verdict::Regression);
        assert_eq!(
            m.text,
            "net upload → nas: 112 Mbit/s vs baseline 941 Mbit/s: −88%, REGRESSION; changed since the baseline: eth0 link speed 1000 → 100"
        );
        assert!(matches!(
            h.compare(Some("nope"), 10.0),
            Err(HistoryError::NoBaseline(_))
        ));
        assert!(h.save_baseline("bad name", &host).is_err());
        // Reopening keeps everything (schema already current).
        drop(h);
        let mut h = History::open(dir.path()).unwrap();
        assert_eq!(h.list(Some(Kind::Net), None, 10).unwrap().len(), 3);
        assert_eq!(h.list(None, Some(250), 10).unwrap().len(), 1);
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.db");
        drop(History::open_file(&p).unwrap());
        let c = rusqlite::Connection::open(&p).unwrap();
        c.pragma_update(None, "user_version", 99).unwrap();
        drop(c);
        assert!(matches!(
            History::open_file(&p),
            Err(HistoryError::TooNew { found: 99, .. })
        ));
    }
}
