//! Link usage ([`crate::usage`]): a thread of its own reads the counters of
//! every physical link (and of the virtual links `[usage] links` names) at
//! a fixed interval with one rtnetlink dump, folds them into minute rows,
//! stores each minute as it ends, rolls finished hours up, and at shutdown
//! stores the minute still filling, so a restart loses no sample.

use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use tracing::{debug, info, warn};

use super::state::Daemon;
use crate::config::{Config, UsageConfig};
use crate::history::History;
use crate::nic::netlink::{Netlink, RtLink};
use crate::usage::fold::{Folder, Reading};
use crate::usage::store::{self, Retention};

/// The running sampler; [`Sampler::stop`] stores what it holds and ends it.
pub(crate) struct Sampler {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<()>,
}

impl Sampler {
    /// Start sampling every `interval` unless `[usage] enable = false`.
    pub(crate) fn spawn(d: &Arc<Daemon>, cfg: Config, interval: Duration) -> Option<Sampler> {
        if !cfg.usage.enable {
            info!("usage: not sampled ([usage] enable = false)");
            return None;
        }
        let (stop, rx) = mpsc::channel();
        let d = d.clone();
        let thread = std::thread::Builder::new()
            .name("usage".into())
            .spawn(move || run(&d, &cfg, interval, &rx))
            .map_err(|e| warn!("usage: cannot start the sampler: {e}"))
            .ok()?;
        Some(Sampler { stop, thread })
    }

    /// Store the minute still filling and end the thread.
    pub(crate) fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.thread.join();
    }
}

fn run(d: &Daemon, config: &Config, interval: Duration, stop: &mpsc::Receiver<()>) {
    let cfg = &config.usage;
    let mut nl = match Netlink::new() {
        Ok(nl) => nl,
        Err(e) => return warn!("usage: not sampled: {e}"),
    };
    // Opened with the first row to store: a host with nothing to sample
    // gets no database from it.
    let mut h = Store::default();
    let keep = Retention {
        minute_days: cfg.minute_days,
        hour_days: cfg.retention_days,
    };
    info!(
        "usage: sampling every {} ms (minutes kept {} days, hours {} days)",
        interval.as_millis(),
        keep.minute_days,
        keep.hour_days
    );
    let mut folder = Folder::default();
    loop {
        let readings = match nl.links() {
            Ok(links) => readings(d, cfg, &links),
            Err(e) => {
                debug!("usage: the link dump failed: {e}");
                Vec::new()
            }
        };
        let closed = folder.tick(now_ms(), &readings);
        if !closed.is_empty() {
            save(d, &mut h, &closed, keep);
            metrics(d, config);
        }
        match stop.recv_timeout(interval) {
            Err(RecvTimeoutError::Timeout) => {}
            _ => break,
        }
    }
    let open = folder.flush();
    if !open.is_empty() {
        save(d, &mut h, &open, keep);
        metrics(d, config);
    }
    info!("usage: {} link(s)' current minute stored", open.len());
}

/// The usage gauges move with every minute stored.
fn metrics(d: &Daemon, config: &Config) {
    if let Some(Err(e)) = crate::metrics::refresh(d.paths(), config) {
        debug!("usage: metrics file not written: {e}");
    }
}

/// The database the sampler stores into, and whether its last write failed.
#[derive(Default)]
struct Store {
    db: Option<History>,
    /// Minute rows not stored since the last write that landed.
    lost: Option<usize>,
}

impl Store {
    /// Note a write of `rows` rows: what to say about it, once per change
    /// (a full disk is said when it starts and when it ends, not every
    /// minute).
    fn outcome(&mut self, rows: usize, r: Result<(), String>) -> Option<Said> {
        match (r, self.lost) {
            (Ok(()), None) => None,
            (Ok(()), Some(lost)) => {
                self.lost = None;
                Some(Said::Again { lost })
            }
            (Err(e), None) => {
                self.lost = Some(rows);
                Some(Said::Failing(e))
            }
            (Err(_), Some(lost)) => {
                self.lost = Some(lost + rows);
                None
            }
        }
    }
}

/// What the sampler says about storing.
#[derive(Debug, PartialEq)]
enum Said {
    Failing(String),
    Again { lost: usize },
}

fn save(d: &Daemon, st: &mut Store, rows: &[crate::usage::Bucket], keep: Retention) {
    let r = write(d, &mut st.db, rows);
    match st.outcome(rows.len(), r.map_err(|e| e.to_string())) {
        Some(Said::Failing(e)) => warn!(
            "usage: minute rows cannot be stored (said once; the sampler goes on and tries each minute): {e}"
        ),
        Some(Said::Again { lost }) => {
            info!("usage: minute rows are stored again ({lost} row(s) could not be)")
        }
        None => {}
    }
    if let (Some(h), None) = (st.db.as_mut(), st.lost)
        && let Err(e) = store::roll_up(h, crate::host::now_unix(), keep)
    {
        warn!("usage: hourly roll-up: {e}");
    }
}

/// Open the database if it is not yet, and store `rows`.
fn write(
    d: &Daemon,
    db: &mut Option<History>,
    rows: &[crate::usage::Bucket],
) -> Result<(), crate::history::HistoryError> {
    if db.is_none() {
        *db = Some(History::open(&d.paths().state_dir)?);
    }
    match db.as_mut() {
        Some(h) => store::add_minutes(h, rows),
        None => Ok(()),
    }
}

/// The links to sample and the speed each is judged against: a physical
/// speed, or a link the configuration names (its speed, else the one it
/// reports). A link without a speed is not sampled.
fn readings(d: &Daemon, cfg: &UsageConfig, links: &[RtLink]) -> Vec<Reading> {
    links
        .iter()
        .filter_map(|rt| {
            let model = d.link_by_index(rt.ifindex)?.model();
            let reported = crate::nic::speed::link_speed(&model);
            let asked = cfg.links.iter().find(|(n, _)| *n == rt.name);
            let speed_bps = match (asked, reported) {
                (Some((_, Some(s))), _) => *s,
                (Some((_, None)), Some(r)) => r.bps(),
                (None, Some(r)) if r.is_physical() => r.bps(),
                _ => return None,
            };
            Some(Reading {
                iface: rt.name.clone(),
                ifindex: rt.ifindex,
                rx_bytes: rt.counters.rx_bytes,
                tx_bytes: rt.counters.tx_bytes,
                speed_bps,
            })
        })
        .collect()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full disk is said when the first write fails and when one lands
    /// again, with the rows lost meanwhile; not at every failed minute.
    #[test]
    fn a_failing_store_is_said_once_and_its_end_with_the_rows_lost() {
        let mut st = Store::default();
        assert_eq!(st.outcome(2, Ok(())), None);
        assert_eq!(
            st.outcome(2, Err("full".into())),
            Some(Said::Failing("full".into()))
        );
        assert_eq!(st.outcome(3, Err("full".into())), None);
        assert_eq!(st.outcome(1, Err("full".into())), None);
        assert_eq!(st.outcome(2, Ok(())), Some(Said::Again { lost: 6 }));
        assert_eq!(st.outcome(2, Ok(())), None);
    }
}
