//! The usage tables of the history database (schema migration 3): minute
//! rows merged as they come (a restart mid-minute adds to the same row),
//! rolled up into hour rows once an hour is over, each kind kept for its
//! own number of days.

use rusqlite::types::Value;
use rusqlite::{Row, params, params_from_iter};

use super::verdict::PathFigure;
use super::{Bucket, Flow, stats};
use crate::history::{History, HistoryError};

/// How long each kind of row is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Retention {
    pub(crate) minute_days: u32,
    pub(crate) hour_days: u32,
}

const COLUMNS: &str = "iface, t, speed, covered_ms, rx_max, rx_bytes, rx_a50, rx_a80, rx_a95, \
                       tx_max, tx_bytes, tx_a50, tx_a80, tx_a95";

/// Store minute rows, adding to a row of the same minute already there.
pub(crate) fn add_minutes(h: &mut History, rows: &[Bucket]) -> Result<(), HistoryError> {
    let r = insert_minutes(h, rows);
    h.written(r)
}

fn insert_minutes(h: &mut History, rows: &[Bucket]) -> Result<(), HistoryError> {
    let tx = h.conn().transaction()?;
    {
        let mut st = tx.prepare_cached(&format!(
            "INSERT INTO usage_minute ({COLUMNS}) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14)
             ON CONFLICT(iface, t) DO UPDATE SET
               speed = excluded.speed, covered_ms = covered_ms + excluded.covered_ms,
               rx_max = max(rx_max, excluded.rx_max), rx_bytes = rx_bytes + excluded.rx_bytes,
               rx_a50 = rx_a50 + excluded.rx_a50, rx_a80 = rx_a80 + excluded.rx_a80,
               rx_a95 = rx_a95 + excluded.rx_a95,
               tx_max = max(tx_max, excluded.tx_max), tx_bytes = tx_bytes + excluded.tx_bytes,
               tx_a50 = tx_a50 + excluded.tx_a50, tx_a80 = tx_a80 + excluded.tx_a80,
               tx_a95 = tx_a95 + excluded.tx_a95"
        ))?;
        for b in rows {
            st.execute(params_from_iter(row_values(b)))?;
        }
    }
    crate::history::commit(tx, crate::crashpoint::USAGE_MINUTES)?;
    Ok(())
}

/// Store hour rows as they are (replacing one of the same hour).
pub(crate) fn add_hours(h: &mut History, rows: &[Bucket]) -> Result<(), HistoryError> {
    let tx = h.conn().transaction()?;
    {
        let mut st = tx.prepare_cached(&format!(
            "INSERT OR REPLACE INTO usage_hour ({COLUMNS}, rx_p95, tx_p95)
             VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16)"
        ))?;
        for b in rows {
            let p95 = |f: &Flow| Value::Integer(f.p95_bps.unwrap_or(f.max_bps) as i64);
            let mut v = row_values(b);
            v.extend([p95(&b.rx), p95(&b.tx)]);
            st.execute(params_from_iter(v))?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// A bucket as the values of [`COLUMNS`], in order.
fn row_values(b: &Bucket) -> Vec<Value> {
    let flow = |f: &Flow| {
        [
            f.max_bps as i64,
            f.bytes as i64,
            f.above_ms[0] as i64,
            f.above_ms[1] as i64,
            f.above_ms[2] as i64,
        ]
    };
    let mut v = vec![Value::Text(b.iface.clone()), Value::Integer(b.start)];
    let ints = [b.speed_bps as i64, b.covered_ms as i64];
    v.extend(
        ints.into_iter()
            .chain(flow(&b.rx))
            .chain(flow(&b.tx))
            .map(Value::Integer),
    );
    v
}

/// Roll every hour that ended before `now` (Unix s) into its hour row, and
/// drop the rows older than `keep`. Returns how many hour rows were made.
pub(crate) fn roll_up(h: &mut History, now: i64, keep: Retention) -> Result<usize, HistoryError> {
    let this_hour = now.div_euclid(3600) * 3600;
    let due: Vec<(String, i64)> = {
        let mut st = h.conn().prepare_cached(
            "SELECT iface, (t / 3600) * 3600 AS hour FROM usage_minute WHERE t < ?1
             GROUP BY iface, hour
             EXCEPT SELECT iface, t FROM usage_hour",
        )?;
        st.query_map([this_hour], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?
    };
    let mut hours = Vec::with_capacity(due.len());
    for (iface, hour) in &due {
        let minutes = minutes_in(h, iface, *hour, hour + 3600)?;
        hours.extend(stats::hour_of(iface, *hour, &minutes));
    }
    add_hours(h, &hours)?;
    let day = 86_400;
    let c = h.conn();
    c.execute(
        "DELETE FROM usage_minute WHERE t < ?1",
        [now - i64::from(keep.minute_days) * day],
    )?;
    c.execute(
        "DELETE FROM usage_hour WHERE t < ?1",
        [now - i64::from(keep.hour_days) * day],
    )?;
    Ok(hours.len())
}

fn minutes_in(
    h: &mut History,
    iface: &str,
    from: i64,
    to: i64,
) -> Result<Vec<Bucket>, HistoryError> {
    let mut st = h.conn().prepare_cached(&format!(
        "SELECT {COLUMNS} FROM usage_minute WHERE iface = ?1 AND t >= ?2 AND t < ?3 ORDER BY t"
    ))?;
    let rows = st.query_map(params![iface, from, to], |r| bucket(r, 60, false))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Every bucket of `iface` (or of every link) from `since` (Unix s): the
/// minute rows, and the hour rows of hours no minute row covers any more.
pub(crate) fn buckets(
    h: &mut History,
    iface: Option<&str>,
    since: i64,
) -> Result<Vec<Bucket>, HistoryError> {
    let mut out: Vec<Bucket> = {
        let mut st = h.conn().prepare_cached(&format!(
            "SELECT {COLUMNS}, rx_p95, tx_p95 FROM usage_hour h
             WHERE (?1 IS NULL OR iface = ?1) AND t >= ?2
               AND NOT EXISTS (SELECT 1 FROM usage_minute m
                               WHERE m.iface = h.iface AND m.t >= h.t AND m.t < h.t + 3600)
             ORDER BY iface, t"
        ))?;
        let rows = st.query_map(params![iface, since.div_euclid(3600) * 3600], |r| {
            bucket(r, 3600, true)
        })?;
        rows.collect::<Result<_, _>>()?
    };
    let mut st = h.conn().prepare_cached(&format!(
        "SELECT {COLUMNS} FROM usage_minute WHERE (?1 IS NULL OR iface = ?1) AND t >= ?2
         ORDER BY iface, t"
    ))?;
    for b in st.query_map(params![iface, since], |r| bucket(r, 60, false))? {
        out.push(b?);
    }
    out.sort_by(|a, b| (&a.iface, a.start).cmp(&(&b.iface, b.start)));
    Ok(out)
}

/// The links with usage rows.
pub(crate) fn ifaces(h: &mut History) -> Result<Vec<String>, HistoryError> {
    let mut st = h.conn().prepare_cached(
        "SELECT iface FROM usage_hour UNION SELECT iface FROM usage_minute ORDER BY 1",
    )?;
    let rows = st.query_map([], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The newest throughput of the path beyond `iface` the history holds since
/// `since`: a network benchmark through the link (upload or download,
/// whichever was faster) and the newest sequential read of a disk here.
pub(crate) fn path_figures(
    h: &mut History,
    iface: &str,
    since: i64,
) -> Result<Vec<PathFigure>, HistoryError> {
    let queries = [
        (
            "SELECT m.name, m.subject, m.value, r.ts, r.kind FROM metrics m JOIN results r ON r.id = m.result_id
             WHERE r.interface = ?1 AND r.ts >= ?2 AND m.unit = 'bit/s' AND m.name IN ('net upload', 'net download')
             ORDER BY r.ts DESC, m.value DESC LIMIT 1",
            1.0,
        ),
        (
            "SELECT m.name, m.subject, m.value, r.ts, r.kind FROM metrics m JOIN results r ON r.id = m.result_id
             WHERE ?1 = ?1 AND r.ts >= ?2 AND m.unit = 'B/s' AND m.name IN ('disk read', 'disk seq-read')
             ORDER BY r.ts DESC LIMIT 1",
            8.0,
        ),
    ];
    let mut out = Vec::new();
    for (sql, to_bits) in queries {
        let mut st = h.conn().prepare_cached(sql)?;
        let mut rows = st.query(params![iface, since])?;
        if let Some(r) = rows.next()? {
            let (name, subject, value, ts, kind): (String, String, f64, i64, String) =
                (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?);
            out.push(PathFigure {
                what: format!(
                    "{name} {} {subject} ({kind}, {})",
                    if to_bits > 1.0 { "of" } else { "to" },
                    crate::history::store::format_ts(ts)
                ),
                bps: value * to_bits,
            });
        }
    }
    Ok(out)
}

fn bucket(r: &Row<'_>, len_s: i64, hour: bool) -> rusqlite::Result<Bucket> {
    let int = |i: usize| r.get::<_, i64>(i).map(|v| v.max(0) as u64);
    let flow = |at: usize, p95: usize| -> rusqlite::Result<Flow> {
        Ok(Flow {
            max_bps: int(at)? as f64,
            bytes: int(at + 1)?,
            above_ms: [int(at + 2)?, int(at + 3)?, int(at + 4)?],
            p95_bps: if hour { Some(int(p95)? as f64) } else { None },
        })
    };
    Ok(Bucket {
        iface: r.get(0)?,
        start: r.get(1)?,
        len_s,
        speed_bps: int(2)? as f64,
        covered_ms: int(3)?,
        rx: flow(4, 14)?,
        tx: flow(9, 15)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::stats::span;

    fn minute(iface: &str, t: i64, rx_bps: f64) -> Bucket {
        let mut b = Bucket::new(iface, t, 60, 1e9);
        b.covered_ms = 60_000;
        b.rx.max_bps = rx_bps;
        b.rx.bytes = (rx_bps / 8.0 * 60.0) as u64;
        b.tx.max_bps = rx_bps / 10.0;
        b
    }

    #[test]
    fn a_restart_mid_minute_adds_to_the_same_row_and_hours_roll_up() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = History::open(dir.path()).unwrap();
        let t = 1_800_000_000 / 3600 * 3600;
        let mut a = minute("eth0", t, 100e6);
        a.covered_ms = 30_000;
        let mut b = minute("eth0", t, 300e6);
        b.covered_ms = 30_000;
        add_minutes(&mut h, &[a.clone(), b.clone()]).unwrap();
        let got = buckets(&mut h, Some("eth0"), t).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].covered_ms, 60_000);
        assert_eq!(got[0].rx.bytes, a.rx.bytes + b.rx.bytes);
        assert_eq!(got[0].rx.max_bps, 300e6);
        let keep = Retention {
            minute_days: 1,
            hour_days: 400,
        };
        assert_eq!(
            roll_up(&mut h, t + 1800, keep).unwrap(),
            0,
            "the hour is not over"
        );
        assert_eq!(roll_up(&mut h, t + 3600, keep).unwrap(), 1);
        assert_eq!(roll_up(&mut h, t + 3600, keep).unwrap(), 0, "rolled once");
        // A day later the minute is gone and the hour row stands for it.
        roll_up(&mut h, t + 86_400 + 3600, keep).unwrap();
        let got = buckets(&mut h, Some("eth0"), t).unwrap();
        assert_eq!((got.len(), got[0].len_s), (1, 3600));
        assert_eq!(got[0].rx.bytes, a.rx.bytes + b.rx.bytes);
        assert_eq!(ifaces(&mut h).unwrap(), vec!["eth0".to_string()]);
    }

    /// A year of one busy link as hlctld keeps it: 14 days of minute rows
    /// and 400 days of hour rows at most. The size is asserted; the time of
    /// a 365-day answer is printed (benches/usage.sh runs it in release).
    #[test]
    fn a_synthetic_year_stays_small() {
        let dir = tempfile::tempdir().unwrap();
        // benches/usage.sh keeps the year to time `hlctl usage --days 365` on it.
        let keep = std::env::var_os("HLCTL_USAGE_YEAR_DIR").map(std::path::PathBuf::from);
        let at = keep.clone().unwrap_or_else(|| dir.path().to_path_buf());
        let mut h = History::open(&at).unwrap();
        let now = if keep.is_some() {
            crate::host::now_unix() / 3600 * 3600
        } else {
            1_800_000_000 / 3600 * 3600
        };
        let year = 365 * 86_400;
        let hours: Vec<Bucket> = (0..365 * 24)
            .map(|i| {
                let start = now - year + i * 3600;
                let m = minute("enp1s0", start, 1e6 * (i % 900) as f64);
                stats::hour_of("enp1s0", start, &[m]).unwrap()
            })
            .collect();
        add_hours(&mut h, &hours).unwrap();
        h.conn()
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .unwrap();
        let db = at.join(crate::history::DB_FILE);
        let hours_only = std::fs::metadata(&db).unwrap().len();
        let minutes: Vec<Bucket> = (0..14 * 1440)
            .map(|i| minute("enp1s0", now - 14 * 86_400 + i * 60, 1e6 * (i % 950) as f64))
            .collect();
        add_minutes(&mut h, &minutes).unwrap();
        h.conn()
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .unwrap();
        let size = std::fs::metadata(&db).unwrap().len();
        let t0 = std::time::Instant::now();
        let b = buckets(&mut h, Some("enp1s0"), now - year).unwrap();
        let s = span(&b, 0).unwrap();
        let took = t0.elapsed();
        println!(
            "a year of one link: {} hour rows = {} on disk (with the schema), + {} minute rows (14 days) = {}; 365 days read and summed in {:?}",
            hours.len(),
            crate::units::bytes(hours_only),
            minutes.len(),
            crate::units::bytes(size),
            took
        );
        assert!(size < 3 << 20, "a year of one link takes {size} bytes");
        assert!(s.p95_from_hours && s.rx.peak_bps >= 899e6);
    }
}
