//! The schema, versioned with `PRAGMA user_version`: each migration runs once,
//! in its own transaction, in order. Never edit a released migration: add one.

use rusqlite::Connection;

use super::HistoryError;

/// Migration N (1-based) brings the schema from version N-1 to N.
const MIGRATIONS: &[&str] = &[
    // 1: results with their metrics, baselines as frozen copies of metrics.
    "CREATE TABLE results (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        ts INTEGER NOT NULL,
        kind TEXT NOT NULL,
        host TEXT NOT NULL,
        kernel TEXT NOT NULL,
        interface TEXT,
        peer TEXT,
        settings TEXT NOT NULL,
        result TEXT NOT NULL
    );
    CREATE INDEX results_kind_ts ON results(kind, ts);
    CREATE TABLE metrics (
        result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        subject TEXT NOT NULL,
        value REAL NOT NULL,
        unit TEXT NOT NULL,
        higher_is_better INTEGER NOT NULL
    );
    CREATE INDEX metrics_key ON metrics(name, subject);
    CREATE TABLE baselines (
        name TEXT PRIMARY KEY,
        ts INTEGER NOT NULL,
        host TEXT NOT NULL
    );
    CREATE TABLE baseline_metrics (
        baseline TEXT NOT NULL REFERENCES baselines(name) ON DELETE CASCADE,
        result_id INTEGER NOT NULL,
        ts INTEGER NOT NULL,
        name TEXT NOT NULL,
        subject TEXT NOT NULL,
        value REAL NOT NULL,
        unit TEXT NOT NULL,
        higher_is_better INTEGER NOT NULL,
        settings TEXT NOT NULL
    );",
    // 2: who asked for each result (the caller's uid; NULL in rows stored
    // before, all of them root's or an in-process run's).
    "ALTER TABLE results ADD COLUMN uid INTEGER;",
    // 3: link usage (crate::usage): minute rows for recent days, hour rows
    // for the long term; rates in bit/s, times in ms, all integers (the
    // smallest rows SQLite stores).
    "CREATE TABLE usage_minute (
        iface TEXT NOT NULL,
        t INTEGER NOT NULL,
        speed INTEGER NOT NULL,
        covered_ms INTEGER NOT NULL,
        rx_max INTEGER NOT NULL, rx_bytes INTEGER NOT NULL,
        rx_a50 INTEGER NOT NULL, rx_a80 INTEGER NOT NULL, rx_a95 INTEGER NOT NULL,
        tx_max INTEGER NOT NULL, tx_bytes INTEGER NOT NULL,
        tx_a50 INTEGER NOT NULL, tx_a80 INTEGER NOT NULL, tx_a95 INTEGER NOT NULL,
        PRIMARY KEY (iface, t)
    ) WITHOUT ROWID;
    CREATE TABLE usage_hour (
        iface TEXT NOT NULL,
        t INTEGER NOT NULL,
        speed INTEGER NOT NULL,
        covered_ms INTEGER NOT NULL,
        rx_max INTEGER NOT NULL, rx_bytes INTEGER NOT NULL,
        rx_a50 INTEGER NOT NULL, rx_a80 INTEGER NOT NULL, rx_a95 INTEGER NOT NULL,
        tx_max INTEGER NOT NULL, tx_bytes INTEGER NOT NULL,
        tx_a50 INTEGER NOT NULL, tx_a80 INTEGER NOT NULL, tx_a95 INTEGER NOT NULL,
        rx_p95 INTEGER NOT NULL, tx_p95 INTEGER NOT NULL,
        PRIMARY KEY (iface, t)
    ) WITHOUT ROWID;",
    // 4: the single-thread CPU metric is "cpu 1 thread" (store::cpu_metric_name),
    // in results and in the baselines' frozen copies alike, so a baseline
    // saved before still compares with a run after.
    "UPDATE metrics SET name = 'cpu 1 thread' WHERE name = 'cpu 1 threads';
    UPDATE baseline_metrics SET name = 'cpu 1 thread' WHERE name = 'cpu 1 threads';",
];

/// The schema version this build writes.
pub(crate) const VERSION: i64 = MIGRATIONS.len() as i64;

/// Bring the database up to [`VERSION`]; refuse a newer one.
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), HistoryError> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current > VERSION {
        return Err(HistoryError::TooNew {
            found: current,
            supported: VERSION,
        });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database of schema 3 with the old single-thread CPU name in a
    /// result and in a baseline: migration 4 renames both, and only that one.
    #[test]
    fn migration_4_names_the_single_thread_cpu_metric_once() {
        let mut c = Connection::open_in_memory().unwrap();
        for sql in &MIGRATIONS[..3] {
            c.execute_batch(sql).unwrap();
        }
        c.pragma_update(None, "user_version", 3).unwrap();
        c.execute_batch(
            "INSERT INTO results (id, ts, kind, host, kernel, settings, result) VALUES (1, 10, 'cpu', 'h', 'k', '{}', '{}');
             INSERT INTO metrics VALUES (1, 'cpu 1 threads', '', 470, 'events/s', 1), (1, 'cpu 2 threads', '', 900, 'events/s', 1);
             INSERT INTO baselines VALUES ('good', 10, 'h');
             INSERT INTO baseline_metrics VALUES ('good', 1, 10, 'cpu 1 threads', '', 470, 'events/s', 1, '{}');",
        )
        .unwrap();
        migrate(&mut c).unwrap();
        let names = |table: &str| -> Vec<String> {
            let mut s = c
                .prepare(&format!("SELECT name FROM {table} ORDER BY name"))
                .unwrap();
            s.query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        assert_eq!(names("metrics"), ["cpu 1 thread", "cpu 2 threads"]);
        assert_eq!(names("baseline_metrics"), ["cpu 1 thread"]);
        let v: i64 = c
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, VERSION);
    }
}
