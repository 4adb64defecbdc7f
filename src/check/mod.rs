//! `hlctl check`: the configured measurements (network to every peer in both
//! directions, disk on every directory, CPU), stored in the history as one
//! `check` result and compared with the configured baseline — or with the
//! previous check when there is none.
//!
//! - [`net`]: one peer, never on top of another measurement;
//! - [`journal`]: regressions to the journal with our MESSAGE_ID.

pub(crate) mod files;
pub(crate) mod journal;
pub(crate) mod net;

use serde::{Deserialize, Serialize};

use crate::bench::progress::{Cancel, Progress, ProgressEvent};
use crate::config::CheckConfig;
use crate::history::compare::{self, Comparison};
use crate::history::{History, HistoryError, Kind, StoredResult};
use crate::path::Peer;
use crate::path::throughput::Direction;
use crate::report::{Entry, Figures, NetEntry, Report};

pub(crate) use crate::bench::net::busy::Backoff;
pub(crate) use files::FileEntry;
pub(crate) use net::PeerResult;

/// The reference's name when a check is compared with the one before it.
pub(crate) const PREVIOUS_CHECK: &str = "previous check";

/// Everything one check measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct CheckReport {
    /// Host, time and the figures (the same shape as `hlctl report`).
    #[serde(flatten)]
    pub(crate) report: Report,
    /// Per peer: retransmits, round-trip time, busy retries.
    pub(crate) peers: Vec<PeerResult>,
    /// `[check] files`: each target's transfer both ways.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) files: Vec<FileEntry>,
    /// Threads of the multi-threaded CPU run.
    pub(crate) cpu_threads: u32,
    /// `[workload]`: the configured workloads judged on this check's figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) workloads: Vec<crate::workload::Answer>,
}

/// Disk and CPU measurements come from the benchmark layer (see `cli::measure`).
pub(crate) struct Benches<'a> {
    pub(crate) disk: &'a dyn Fn(&str, &Cancel) -> Figures,
    pub(crate) cpu: &'a dyn Fn(u32, &Cancel) -> Figures,
}

/// Run the measurements of `cfg`.
pub(crate) fn run(
    cfg: &CheckConfig,
    peers: &[Peer],
    lock: &std::path::Path,
    b: &Benches,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> CheckReport {
    let say = |f: f64, m: String| {
        progress.report(ProgressEvent {
            fraction: f,
            message: m,
        })
    };
    let cpu_runs = if cfg.cpu { 2 } else { 0 };
    let total = (peers.len() + cfg.dirs.len() + cfg.files.len() + cpu_runs).max(1) as f64;
    let mut k = 0.0;
    let backoff = Backoff::for_window(cfg.busy_window_s);
    let mut details = Vec::new();
    let mut network = Vec::new();
    for p in peers {
        say(k / total, format!("network to {}", p.label()));
        k += 1.0;
        let r = net::peer(p, cfg.time_s, lock, &backoff, cancel);
        network.push(net_entry(&r));
        details.push(r);
    }
    let mut disk = Vec::new();
    for d in &cfg.dirs {
        say(k / total, format!("disk on {d}"));
        k += 1.0;
        disk.push(Entry::new(d, (b.disk)(d, cancel)));
    }
    let mut files = Vec::new();
    for t in &cfg.files {
        say(k / total, format!("file over {t}"));
        k += 1.0;
        files.push(files::measure(
            t,
            cfg.file_size_mib,
            cfg.ssh_config.as_deref(),
            lock,
            cancel,
        ));
    }
    let threads = crate::report::cpu_threads();
    let mut cpu = Vec::new();
    if cfg.cpu {
        for (name, t) in [("single", 1), ("multi", threads)] {
            say(k / total, format!("CPU {name}-threaded"));
            k += 1.0;
            cpu.push(Entry::new(name, (b.cpu)(t, cancel)));
        }
    }
    CheckReport {
        report: Report {
            host: crate::host::HostInfo::current(),
            timestamp: crate::host::now_unix(),
            network,
            disk,
            cpu,
            transfers: Vec::new(),
        },
        peers: details,
        files,
        cpu_threads: threads,
        workloads: Vec::new(),
    }
}

/// One peer's figures as the report shows them; the same reason both ways
/// is said once.
fn net_entry(r: &PeerResult) -> NetEntry {
    let mut errors: Vec<String> = Vec::new();
    for e in r.directions.iter().filter_map(|d| d.error.clone()) {
        if !errors.contains(&e) {
            errors.push(e);
        }
    }
    NetEntry {
        peer: r.peer.clone(),
        interface: r.interface.clone(),
        upload_bps: r.bps(Direction::Upload),
        download_bps: r.bps(Direction::Download),
        error: (!errors.is_empty()).then(|| errors.join("; ")),
    }
}

/// The last check, and its comparison with the configured baseline (when it
/// exists) or else with the check before it.
pub(crate) fn last_comparison(
    h: &mut History,
    cfg: &CheckConfig,
) -> Result<Option<(StoredResult, Option<Comparison>)>, HistoryError> {
    let checks = h.list(Some(Kind::Check), None, 2)?;
    let Some(last) = checks.first().cloned() else {
        return Ok(None);
    };
    if let Some(name) = &cfg.baseline {
        match h.compare(Some(name), cfg.threshold_percent) {
            Ok(c) => return Ok(Some((last, Some(c)))),
            Err(HistoryError::NoBaseline(_)) => {}
            Err(e) => return Err(e),
        }
    }
    let c = checks
        .get(1)
        .map(|prev| compare::between(PREVIOUS_CHECK, prev, &last, cfg.threshold_percent));
    Ok(Some((last, c)))
}

/// The kernel release of the last check, if any.
pub(crate) fn last_kernel(h: &mut History) -> Result<Option<String>, HistoryError> {
    Ok(h.list(Some(Kind::Check), None, 1)?
        .into_iter()
        .next()
        .map(|r| r.kernel))
}
