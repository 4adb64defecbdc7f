//! `check` as an operation, whole: the configuration with the caller's
//! overrides, `--if-kernel-changed`, the measurements (one on the host at a
//! time), the history row under the uid that asked, the comparison with the
//! baseline (or with the previous check), each regression to the journal,
//! the Prometheus textfile, and the verdict the exit code follows. `hlctl
//! check` in process and hlctld's `Manager.Check` job both call [`run`]; the
//! CLI only prints the [`CheckOutcome`].

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::row_store::{Requester, store};
use super::rows;
use crate::bench::progress::{Cancel, Progress};
use crate::check::{self, CheckReport};
use crate::config::Config;
use crate::history::compare::Comparison;
use crate::history::{History, HistoryError, Verdict};
use crate::path::Peer;
use crate::paths::Paths;

/// What the command line (`hlctl check --peer ...`) or `Manager.Check`'s
/// options change in the configuration's `[check]` for one run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Overrides {
    /// Measure to these peers instead of the configured ones.
    pub(crate) peers: Vec<String>,
    /// Measure the disk in these directories instead of the configured ones.
    pub(crate) dirs: Vec<String>,
    /// Skip the CPU runs.
    pub(crate) no_cpu: bool,
    /// Compare with this baseline instead of the configured one.
    pub(crate) baseline: Option<String>,
    /// Seconds per run (network, disk and CPU).
    pub(crate) time_s: Option<u32>,
    /// Seconds of the disk and CPU runs (the old `--bench-time`).
    pub(crate) bench_time_s: Option<u64>,
    /// MiB written and read back per directory.
    pub(crate) disk_size_mib: Option<u64>,
    /// Seconds within which a busy peer is retried.
    pub(crate) busy_window_s: Option<u64>,
    /// Only check when the kernel release differs from the last check's.
    pub(crate) if_kernel_changed: bool,
}

impl Overrides {
    /// Every peer parses; the first that does not is the error.
    pub(crate) fn validate(&self) -> Result<(), CheckError> {
        for p in &self.peers {
            Peer::parse(p).map_err(CheckError::Invalid)?;
        }
        Ok(())
    }
}

/// Why a check did not run.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CheckError {
    /// The caller's mistake (a peer that does not parse, nothing to check).
    #[error("{0}")]
    Invalid(String),
    /// The history could not be read.
    #[error(transparent)]
    History(#[from] HistoryError),
}

impl CheckError {
    /// Its class ([`crate::class`]).
    pub(crate) fn class(&self) -> crate::class::Class {
        match self {
            CheckError::Invalid(_) => crate::class::Class::Invalid,
            CheckError::History(e) => e.class(),
        }
    }
}

/// Everything a check did, as both front ends show it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct CheckOutcome {
    /// Configuration problems (each ignored), a row not stored, a metrics
    /// file not written.
    pub(crate) warnings: Vec<String>,
    /// `--if-kernel-changed`: what it decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) kernel: Option<String>,
    /// Nothing ran: `--if-kernel-changed` found the kernel unchanged (or no
    /// check yet).
    #[serde(default)]
    pub(crate) skipped: bool,
    pub(crate) check: Option<CheckReport>,
    pub(crate) comparison: Option<Comparison>,
    /// How many metrics regressed.
    pub(crate) regressions: usize,
    /// Where the regressions were logged (`journald` or `stderr`).
    pub(crate) regressions_logged_to: Option<String>,
    /// What could not be measured, each with its subject.
    pub(crate) failures: Vec<String>,
    /// Every `[workload]` need the check measured short of.
    pub(crate) below_need: Vec<String>,
    /// The Prometheus textfile written.
    pub(crate) metrics_file: Option<PathBuf>,
    /// No regression, no failed measurement, no need short: exit 0.
    pub(crate) passed: bool,
}

/// The configuration file (`required`: named by the caller, so it must
/// exist) with `o` applied.
fn effective(
    paths: &Paths,
    required: bool,
    o: &Overrides,
) -> Result<(Config, Vec<String>), CheckError> {
    let loaded = crate::config::load(&paths.config_file, required);
    let warnings = loaded
        .problems
        .iter()
        .map(|p| format!("{p} (ignored)"))
        .collect();
    let mut c = loaded.config;
    o.validate()?;
    if !o.peers.is_empty() {
        c.check.peers = o.peers.clone();
    }
    if !o.dirs.is_empty() {
        c.check.dirs = o.dirs.clone();
    }
    c.check.cpu &= !o.no_cpu;
    if let Some(b) = &o.baseline {
        c.check.baseline = Some(b.clone());
    }
    if let Some(t) = o.time_s {
        c.check.time_s = t;
        c.check.bench_time_s = u64::from(t);
    }
    c.check.bench_time_s = o.bench_time_s.unwrap_or(c.check.bench_time_s);
    c.check.disk_size_mib = o.disk_size_mib.unwrap_or(c.check.disk_size_mib);
    c.check.busy_window_s = o.busy_window_s.unwrap_or(c.check.busy_window_s);
    if !c.check_has_work() {
        return Err(CheckError::Invalid(format!(
            "nothing to check: set [check] peers, dirs, files or cpu in {} (or --peer/--dir)",
            paths.config_file.display()
        )));
    }
    Ok((c, warnings))
}

/// Run one check as `o` asks: `Ok` with a skipped outcome when
/// `--if-kernel-changed` finds nothing to do.
pub(crate) fn run(
    paths: &Paths,
    config_required: bool,
    o: &Overrides,
    who: Requester,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<CheckOutcome, CheckError> {
    let (cfg, mut warnings) = effective(paths, config_required, o)?;
    let mut kernel = None;
    if o.if_kernel_changed {
        let (note, skip) = same_kernel(paths)?;
        kernel = Some(note);
        if skip {
            return Ok(CheckOutcome {
                warnings,
                kernel,
                skipped: true,
                passed: true,
                ..Default::default()
            });
        }
    }
    let report = measure(&cfg, paths, who, progress, cancel, &mut warnings);
    let comparison = History::open(&paths.state_dir)
        .and_then(|mut h| check::last_comparison(&mut h, &cfg.check))?
        .and_then(|(_, c)| c);
    let logged_to = log_regressions(comparison.as_ref());
    let metrics_file = match crate::metrics::refresh(paths, &cfg) {
        Some(Ok(p)) => Some(p),
        Some(Err(e)) => {
            warnings.push(format!("metrics file not written: {e}"));
            None
        }
        None => None,
    };
    let failures = failures(&report);
    let below_need = below_need(&report);
    let regressions = regressions(comparison.as_ref()).count();
    Ok(CheckOutcome {
        warnings,
        kernel,
        skipped: false,
        passed: regressions == 0 && failures.is_empty() && below_need.is_empty(),
        check: Some(report),
        comparison,
        regressions,
        regressions_logged_to: logged_to.map(str::to_string),
        failures,
        below_need,
        metrics_file,
    })
}

/// Measure what `cfg` names and store it under the uid that asked.
fn measure(
    cfg: &Config,
    paths: &Paths,
    who: Requester,
    progress: &dyn Progress,
    cancel: &Cancel,
    warnings: &mut Vec<String>,
) -> CheckReport {
    let (size, secs) = (cfg.check.disk_size_mib << 20, cfg.check.bench_time_s);
    let disk = move |d: &str, c: &Cancel| crate::measure::disk(d, size, secs, c);
    let cpu = move |t: u32, c: &Cancel| crate::measure::cpu(t, secs, c);
    let mut report = check::run(
        &cfg.check,
        &cfg.peers(),
        &paths.measure_lock_file(),
        &check::Benches {
            disk: &disk,
            cpu: &cpu,
        },
        progress,
        cancel,
    );
    report.workloads = super::workload::on_check(&report, &cfg.workload.workloads());
    let stored = store(paths, who, rows::check(paths, &report));
    warnings.extend(stored.warning());
    report
}

/// `--if-kernel-changed`: what to say, and whether there is nothing to do
/// (the kernel is the last check's, or no check ran yet).
fn same_kernel(paths: &Paths) -> Result<(String, bool), HistoryError> {
    let now = crate::host::HostInfo::current().kernel;
    Ok(
        match History::open(&paths.state_dir).and_then(|mut h| check::last_kernel(&mut h))? {
            Some(k) if k == now => (
                format!("kernel {now} is the one of the last check; nothing to do"),
                true,
            ),
            None => (
                "no check ran yet; the timer's first run makes the reference".into(),
                true,
            ),
            Some(k) => (format!("kernel changed ({k} → {now}): checking"), false),
        },
    )
}

fn regressions(
    c: Option<&Comparison>,
) -> impl Iterator<Item = &crate::history::compare::MetricComparison> {
    c.into_iter()
        .flat_map(|c| &c.metrics)
        .filter(|m| m.verdict == Verdict::Regression)
}

/// Every regression to the journal (or stderr); where they went.
fn log_regressions(c: Option<&Comparison>) -> Option<&'static str> {
    regressions(c).fold(None, |_, m| {
        Some(check::journal::regression(
            &format!("regression: {}", m.text),
            &m.name,
            &m.subject,
        ))
    })
}

/// Every `[workload]` layer the check measured below its need, with the
/// metric: "below the need: net 115 Mbit/s, plex-4k ×2 needs 200 Mbit/s".
fn below_need(r: &CheckReport) -> Vec<String> {
    r.workloads
        .iter()
        .flat_map(|a| {
            a.rows
                .iter()
                .filter(|x| x.verdict == "short")
                .map(move |x| {
                    format!(
                        "below the need: {} {}, {} needs {} ({})",
                        x.layer.name(),
                        x.layer.format(x.measured.unwrap_or(0.0)),
                        a.workload.label(),
                        x.layer.format(x.needed),
                        x.source
                    )
                })
        })
        .collect()
}

/// What could not be measured, each with its subject.
fn failures(r: &CheckReport) -> Vec<String> {
    r.report
        .network
        .iter()
        .filter_map(|n| n.error.clone())
        .chain(
            r.report
                .disk
                .iter()
                .chain(&r.report.cpu)
                .filter_map(|e| e.error.as_ref().map(|x| format!("{}: {x}", e.subject))),
        )
        .chain(r.files.iter().filter_map(|e| {
            e.error
                .as_ref()
                .map(|x| format!("file over {}: {x}", e.target))
        }))
        .collect()
}
