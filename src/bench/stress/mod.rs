//! Sustained CPU and memory load that watches for thermal throttling: `hlctl bench stress`.
//!
//! CPU workers run the sysbench prime event ([`crate::bench::cpu::count_primes`]) in a
//! loop; memory workers write a pattern over their share of `vm_bytes` and verify it
//! ([`memory`]). Once per interval the sensors are read ([`sensors`]); at the end
//! [`verdict::judge`] answers "throttling observed", "none observed" or "not observable
//! on this machine". Absent sensors give `null`, never a made-up figure.
//!
//! JSON (`--json`) keys: `duration_s`, `cpu_workers`, `vm_workers`, `vm_bytes`,
//! `verdict`, `reasons` (why), `sensors` (what was found), `temperature_c`
//! {`start`,`max`,`end`} or null, `frequency_mhz` {`nominal`,`start`,`min`,`max`,`end`}
//! or null, `throttle_delta` (counter increases) or null, `cpu` {`events`,
//! `events_per_second`}, `memory` {`bytes`,`bytes_written`,`bytes_verified`,
//! `mismatches`,`verified`,`workers`}, `samples` (one per interval: `t_s`,
//! `max_temp_c`, `max_freq_mhz`, `min_freq_mhz`, `throttle_events`, `cooling_state`,
//! `cpu_events_per_second`, `memory_mib_per_second`), `cancelled`.

pub mod memory;
mod samples;
pub(crate) mod sensors;
pub(crate) mod verdict;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

use crate::bench::progress::{Cancel, Progress, ProgressEvent};

pub(crate) use samples::StressReport;
pub(crate) use sensors::Inventory;
pub use verdict::Verdict;

/// How much memory the memory workers use in total.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MemAmount {
    Bytes(u64),
    /// Percent of `MemAvailable` at the start.
    PercentOfAvailable(f64),
}

#[derive(Clone, Debug)]
pub struct StressConfig {
    pub time: Duration,
    /// CPU workers (0 = none).
    pub cpu_workers: usize,
    /// Memory workers (0 = none); they share `vm_bytes`.
    pub vm_workers: usize,
    pub vm_bytes: MemAmount,
    /// How often the sensors are sampled.
    pub interval: Duration,
    /// Where sysfs is (normally `/sys`).
    pub sysfs_root: PathBuf,
}

impl StressConfig {
    /// The defaults of `hlctl bench stress`: 60 s, one CPU worker per online CPU, one
    /// memory worker with 256 MiB, a sample a second, `/sys`.
    pub fn new() -> Self {
        Self {
            time: Duration::from_secs(60),
            cpu_workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            vm_workers: 1,
            vm_bytes: MemAmount::Bytes(256 << 20),
            interval: Duration::from_secs(1),
            sysfs_root: PathBuf::from("/sys"),
        }
    }
}

impl Default for StressConfig {
    fn default() -> Self {
        Self::new()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StressError {
    #[error("invalid --{field}: {reason}")]
    InvalidConfig { field: &'static str, reason: String },
    #[error("cannot read /proc/meminfo: {0}")]
    MemInfo(String),
    #[error("cannot allocate {bytes} bytes for a memory worker")]
    Alloc { bytes: u64 },
    #[error("cannot start a worker thread: {0}")]
    Thread(String),
}

/// Bytes of `MemAvailable` in /proc/meminfo.
pub(crate) fn mem_available() -> Result<u64, StressError> {
    let text = std::fs::read_to_string("/proc/meminfo")
        .map_err(|e| StressError::MemInfo(e.to_string()))?;
    parse_mem_available(&text)
}

/// Bytes of `MemAvailable` in /proc/meminfo's `text`.
pub(crate) fn parse_mem_available(text: &str) -> Result<u64, StressError> {
    let kib = text
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .ok_or_else(|| StressError::MemInfo("no MemAvailable line".into()))?;
    kib.checked_mul(1024)
        .ok_or_else(|| StressError::MemInfo(format!("MemAvailable {kib} kB is out of range")))
}

fn resolve_vm_bytes(cfg: &StressConfig) -> Result<u64, StressError> {
    if cfg.vm_workers == 0 {
        return Ok(0);
    }
    let avail = mem_available()?;
    let bytes = match cfg.vm_bytes {
        MemAmount::Bytes(b) => b,
        MemAmount::PercentOfAvailable(p) if (0.0..=90.0).contains(&p) => {
            (avail as f64 * p / 100.0) as u64
        }
        MemAmount::PercentOfAvailable(p) => {
            let reason = format!("{p}% is out of range: allowed 0% to 90% of available memory");
            return Err(StressError::InvalidConfig {
                field: "vm-bytes",
                reason,
            });
        }
    };
    if bytes > avail / 10 * 9 {
        let reason = format!(
            "{bytes} bytes is more than 90% of the {avail} bytes of memory available; \
             ask for less (e.g. --vm-bytes 50%)"
        );
        return Err(StressError::InvalidConfig {
            field: "vm-bytes",
            reason,
        });
    }
    Ok(bytes)
}

fn validate(cfg: &StressConfig) -> Result<(), StressError> {
    let bad = |field, reason: &str| {
        Err(StressError::InvalidConfig {
            field,
            reason: reason.to_string(),
        })
    };
    if cfg.time.is_zero() || cfg.time > Duration::from_secs(7 * 86_400) {
        return bad("time", "must be more than 0 and at most 7 days");
    }
    if cfg.cpu_workers > 4096 {
        return bad("cpu", "allowed 0 to 4096 workers");
    }
    if cfg.vm_workers > 256 {
        return bad("vm", "allowed 0 to 256 workers");
    }
    if cfg.interval < Duration::from_millis(100) {
        return bad("interval", "must be at least 0.1 s");
    }
    Ok(())
}

/// Run the stress test. Cancelling (Ctrl-C) stops the load and still returns the report,
/// with `cancelled: true`.
pub fn run(
    cfg: &StressConfig,
    progress: &dyn Progress,
    cancel: Cancel,
) -> Result<StressReport, StressError> {
    validate(cfg)?;
    let vm_total = resolve_vm_bytes(cfg)?;
    let per_vm = if cfg.vm_workers > 0 {
        vm_total / cfg.vm_workers as u64 / 8 * 8
    } else {
        0
    };
    // Nothing to write: no memory workers at all (an empty worker would end at once).
    let vm_workers = if per_vm == 0 { 0 } else { cfg.vm_workers };
    let inv = Inventory::discover(&cfg.sysfs_root);
    let first = inv.read();
    let counts = Counts::default();
    let start = Instant::now();
    let (readings, samples, cpu_done, mem_done) = std::thread::scope(|scope| {
        let mut workers = Workers::spawn(scope, &counts, cfg.cpu_workers, vm_workers, per_vm);
        let mut sampler = samples::Sampler::new(&inv, &first, start);
        workers.sample(cfg, &mut sampler, start, progress, &cancel);
        counts.stop.store(true, Ordering::SeqCst);
        let (cpu_done, mem_done) = workers.join();
        let (readings, samples) = sampler.finish();
        workers
            .err
            .map_or(Ok((readings, samples, cpu_done, mem_done)), Err)
    })?;
    let elapsed = start.elapsed();
    let (verdict, reasons) = verdict::judge(&inv, &first, &readings);
    Ok(samples::build(samples::Parts {
        cfg,
        vm_bytes: per_vm * vm_workers as u64,
        elapsed,
        inv: &inv,
        first: &first,
        readings: &readings,
        samples,
        verdict,
        reasons,
        cpu_events: cpu_done,
        memory: mem_done,
        cancelled: cancel.is_cancelled(),
    }))
}

/// What the workers and the sampling loop share: the stop flag and the work done so far.
#[derive(Default)]
struct Counts {
    stop: AtomicBool,
    cpu_events: AtomicU64,
    mem_bytes: AtomicU64,
}

/// The running workers, and the first error starting or ending one.
struct Workers<'scope> {
    counts: &'scope Counts,
    cpu: Vec<ScopedJoinHandle<'scope, u64>>,
    mem: Vec<ScopedJoinHandle<'scope, Result<memory::MemoryWorker, u64>>>,
    err: Option<StressError>,
}

impl<'scope> Workers<'scope> {
    /// Start the CPU workers, then the memory workers (`per_vm` bytes each).
    fn spawn(
        scope: &'scope Scope<'scope, '_>,
        counts: &'scope Counts,
        cpu_workers: usize,
        vm_workers: usize,
        per_vm: u64,
    ) -> Workers<'scope> {
        let spawn = |name: &str| std::thread::Builder::new().name(name.to_string());
        let mut w = Workers {
            counts,
            cpu: Vec::new(),
            mem: Vec::new(),
            err: None,
        };
        for _ in 0..cpu_workers {
            let (stop, ev) = (&counts.stop, &counts.cpu_events);
            match spawn("hlctl-stress-cpu").spawn_scoped(scope, move || cpu_worker(stop, ev)) {
                Ok(h) => w.cpu.push(h),
                Err(e) => w.err = Some(StressError::Thread(e.to_string())),
            }
        }
        for i in 0..vm_workers {
            let (stop, mb) = (&counts.stop, &counts.mem_bytes);
            match spawn("hlctl-stress-vm")
                .spawn_scoped(scope, move || memory::worker(i, per_vm, stop, mb))
            {
                Ok(h) => w.mem.push(h),
                Err(e) => w.err = Some(StressError::Thread(e.to_string())),
            }
        }
        w
    }

    /// Sample the sensors every interval until the time is up, the run is
    /// cancelled, a worker failed to start or a memory worker ended.
    fn sample(
        &self,
        cfg: &StressConfig,
        sampler: &mut samples::Sampler<'_>,
        start: Instant,
        progress: &dyn Progress,
        cancel: &Cancel,
    ) {
        let end = start + cfg.time;
        let mut next = start + cfg.interval;
        while self.err.is_none()
            && !cancel.is_cancelled()
            && !self.mem.iter().any(|h| h.is_finished())
        {
            let now = Instant::now();
            if now >= next.min(end) {
                let s = sampler.take(
                    now,
                    self.counts.cpu_events.load(Ordering::Relaxed),
                    self.counts.mem_bytes.load(Ordering::Relaxed),
                );
                progress.report(ProgressEvent {
                    fraction: (now.duration_since(start).as_secs_f64() / cfg.time.as_secs_f64())
                        .min(1.0),
                    message: s.line(),
                });
                next += cfg.interval;
                if now >= end {
                    break;
                }
            }
            std::thread::sleep(
                next.min(end)
                    .saturating_duration_since(now)
                    .min(Duration::from_millis(50)),
            );
        }
    }

    /// Wait for every worker: the CPU events and the memory workers' results
    /// (a failed memory worker sets `err` if nothing else did).
    fn join(&mut self) -> (u64, Vec<memory::MemoryWorker>) {
        let cpu_done: u64 = self.cpu.drain(..).filter_map(|h| h.join().ok()).sum();
        let mut mem_done = Vec::new();
        for h in self.mem.drain(..) {
            match h.join() {
                Ok(Ok(w)) => mem_done.push(w),
                Ok(Err(bytes)) => self.err = self.err.take().or(Some(StressError::Alloc { bytes })),
                Err(_) => {
                    self.err = self
                        .err
                        .take()
                        .or(Some(StressError::Thread("a memory worker panicked".into())))
                }
            }
        }
        (cpu_done, mem_done)
    }
}

fn cpu_worker(stop: &AtomicBool, events: &AtomicU64) -> u64 {
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        std::hint::black_box(crate::bench::cpu::count_primes(std::hint::black_box(
            10_000,
        )));
        n += 1;
        events.fetch_add(1, Ordering::Relaxed);
    }
    n
}

#[cfg(test)]
mod meminfo_tests {
    use super::*;

    #[test]
    fn mem_available_in_bytes() {
        let text = "MemTotal:       16318528 kB\nMemAvailable:   12345678 kB\n";
        assert_eq!(parse_mem_available(text).unwrap(), 12345678 * 1024);
        assert!(parse_mem_available("MemTotal: 1 kB\n").is_err());
    }

    /// Found by the proc_sys fuzz target: a MemAvailable too large for bytes
    /// in a u64 overflowed (a panic with overflow checks, a wrong size without).
    #[test]
    fn mem_available_too_large_is_an_error() {
        let e = parse_mem_available("MemAvailable: 18014398509481984 kB\n").unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        assert_eq!(
            parse_mem_available("MemAvailable: 18014398509481983 kB\n").unwrap(),
            18014398509481983 * 1024
        );
    }
}
