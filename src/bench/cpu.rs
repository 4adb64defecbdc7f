//! A sysbench-comparable CPU benchmark: `hlctl bench cpu`.
//!
//! One **event** is sysbench 1.0's `cpu` event exactly: for every candidate `c` from 3 to
//! `max_prime − 1`, trial-divide by `l = 2, 3, …` while `l <= sqrt(c)` (a double), in
//! 64-bit unsigned integers, stopping at the first divisor; count `c` when no divisor was
//! found. With `max_prime = 10000` that is 1228 primes per event (2 is never tested).
//!
//! The instruction mix follows the binary users run (GCC, Debian): a 64-bit `div` per
//! trial (LLVM would otherwise add a 32-bit-divide shortcut, which makes the event up to
//! twice as fast on some CPUs and the figures incomparable), and the `l = 2` trial done
//! as a test of the low bit, as GCC peels it. The result goes through `black_box`.
//!
//! Timing as sysbench: each thread checks the time limit before starting an event (so an
//! event in progress at the limit is finished and counted), times every event, and
//! `events_per_second` = all threads' events / wall time. With more than one thread the
//! report also carries a 1-thread run of the same length, so scaling is visible.

use std::hint::black_box;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::bench::progress::{Cancel, Progress, ProgressEvent};

/// What to run.
#[derive(Clone, Debug)]
pub struct CpuConfig {
    /// Worker threads for the main run.
    pub threads: usize,
    /// Length of each run.
    pub time: Duration,
    /// sysbench's `--cpu-max-prime`.
    pub max_prime: u32,
    /// With `threads > 1`, first run one thread for the same time.
    pub single_thread_baseline: bool,
}

impl CpuConfig {
    /// The defaults of `hlctl bench cpu`: all online CPUs, 10 s, max prime 10000.
    pub(crate) fn new() -> Self {
        Self {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            time: Duration::from_secs(10),
            max_prime: 10_000,
            single_thread_baseline: true,
        }
    }
}

impl Default for CpuConfig {
    fn default() -> Self {
        Self::new()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CpuError {
    #[error("invalid --{field}: {reason}")]
    InvalidConfig { field: &'static str, reason: String },
    #[error("cannot start a worker thread: {0}")]
    Thread(String),
}

/// Per-event latency in milliseconds, as sysbench prints it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyMs {
    pub min: f64,
    pub avg: f64,
    pub p95: f64,
    pub max: f64,
    pub sum: f64,
}

/// One run with a fixed number of threads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuPhase {
    pub threads: usize,
    pub events: u64,
    pub duration_s: f64,
    pub events_per_second: f64,
    pub latency_ms: LatencyMs,
    /// Events per thread (sysbench's "thread fairness").
    pub per_thread_events: Vec<u64>,
}

/// The result. The top-level keys are those of the `threads`-thread run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuReport {
    #[serde(flatten)]
    pub run: CpuPhase,
    pub(crate) max_prime: u32,
    /// Primes one event finds (1228 for max_prime 10000).
    pub primes_per_event: u64,
    /// The 1-thread run, when `threads > 1`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub single_thread: Option<CpuPhase>,
    /// events/s with N threads ÷ events/s with 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaling: Option<f64>,
    pub cancelled: bool,
    /// What makes the figures less than they seem: other load on the
    /// machine, steal, a run too short.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Run the benchmark. Cancelling stops after the events in progress and returns what was
/// measured so far, with `cancelled: true`.
pub fn run(
    cfg: &CpuConfig,
    progress: &dyn Progress,
    cancel: Cancel,
) -> Result<CpuReport, CpuError> {
    if !(1..=4096).contains(&cfg.threads) {
        let reason = format!("{} is out of range: allowed 1 to 4096", cfg.threads);
        return Err(CpuError::InvalidConfig {
            field: "threads",
            reason,
        });
    }
    if cfg.time.is_zero() || cfg.time > Duration::from_secs(86_400) {
        let reason = "must be more than 0 and at most 86400 seconds".to_string();
        return Err(CpuError::InvalidConfig {
            field: "time",
            reason,
        });
    }
    if cfg.max_prime == 0 {
        let reason = "must be at least 1 (sysbench's default is 10000)".to_string();
        return Err(CpuError::InvalidConfig {
            field: "max-prime",
            reason,
        });
    }
    let watch = crate::bench::load::LoadWatch::start();
    let baseline = cfg.single_thread_baseline && cfg.threads > 1;
    let phases = if baseline { 2.0 } else { 1.0 };
    let single = if baseline {
        Some(run_phase(cfg.max_prime, 1, cfg.time, &cancel, &|f, m| {
            progress.report(ProgressEvent {
                fraction: f / phases,
                message: m,
            })
        })?)
    } else {
        None
    };
    let offset = if baseline { 1.0 } else { 0.0 };
    let run = run_phase(cfg.max_prime, cfg.threads, cfg.time, &cancel, &|f, m| {
        progress.report(ProgressEvent {
            fraction: (offset + f) / phases,
            message: m,
        })
    })?;
    let scaling = single
        .as_ref()
        .filter(|s| s.events_per_second > 0.0)
        .map(|s| run.events_per_second / s.events_per_second);
    let warnings = warnings(&watch, &run, cancel.is_cancelled());
    Ok(CpuReport {
        run,
        max_prime: cfg.max_prime,
        primes_per_event: count_primes(cfg.max_prime),
        single_thread: single,
        warnings,
        scaling,
        cancelled: cancel.is_cancelled(),
    })
}

/// The warnings on a finished run (none on a cancelled one: it says so).
fn warnings(watch: &crate::bench::load::LoadWatch, run: &CpuPhase, cancelled: bool) -> Vec<String> {
    use crate::bench::load;
    if cancelled {
        return Vec::new();
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut w = watch
        .finish()
        .map_or_else(Vec::new, |seen| seen.warnings(cpus));
    let took = Duration::from_secs_f64(run.duration_s.max(0.0));
    w.extend(load::short_run_warning(took, "give it --time 10"));
    w
}

/// One sysbench cpu event: the number of primes in `3..max_prime`, found by trial division.
pub fn count_primes(max_prime: u32) -> u64 {
    event(max_prime, None).unwrap_or(0)
}

/// The event; checks `cancel` every 2²⁰ candidates (never, for the usual max_prime).
#[inline(never)]
fn event(max_prime: u32, cancel: Option<&Cancel>) -> Option<u64> {
    const CHUNK: u64 = 1 << 20;
    let max = black_box(u64::from(max_prime));
    let mut n = 0u64;
    let mut from = 3u64;
    while from < max {
        let to = max.min(from + CHUNK);
        n += primes_in(from, to);
        from = to;
        if from < max && cancel.is_some_and(Cancel::is_cancelled) {
            return None;
        }
    }
    Some(black_box(n))
}

#[inline(always)]
fn primes_in(from: u64, to: u64) -> u64 {
    let mut n = 0u64;
    let mut c = from;
    while c < to {
        let t = as_f64(c).sqrt();
        let mut l = 2u64;
        if 2.0 <= t {
            if c & 1 == 0 {
                // l = 2 divides c: not prime (the peeled first trial).
                c += 1;
                continue;
            }
            l = 3;
            while as_f64(l) <= t {
                if rem(c, l) == 0 {
                    break;
                }
                l += 1;
            }
        }
        if as_f64(l) > t {
            n += 1;
        }
        c += 1;
    }
    n
}

/// `x as f64` for `x < 2⁶³` (always true here: x < 2³² + 1) via the signed conversion,
/// one instruction, as GCC emits for sysbench.
#[inline(always)]
fn as_f64(x: u64) -> f64 {
    x as i64 as f64
}

/// `a % b` with a 64-bit `div`, the instruction sysbench's binary uses.
#[inline(always)]
fn rem(a: u64, b: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let r: u64;
        // SAFETY: b ≥ 3, so no division by zero; rdx = 0 so the quotient fits.
        unsafe {
            std::arch::asm!(
                "div {b}",
                b = in(reg) b,
                inout("rax") a => _,
                inout("rdx") 0u64 => r,
                options(pure, nomem, nostack),
            );
        }
        r
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        a % b
    }
}

struct Worker {
    events: u64,
    hist: Histogram<u64>,
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("static histogram bounds are valid")
}

/// Run `threads` workers for `time`; `tick(fraction, message)` reports progress.
fn run_phase(
    max_prime: u32,
    threads: usize,
    time: Duration,
    cancel: &Cancel,
    tick: &dyn Fn(f64, String),
) -> Result<CpuPhase, CpuError> {
    let gate: OnceLock<Instant> = OnceLock::new();
    let abort = AtomicBool::new(false);
    let live = AtomicU64::new(0);
    let (elapsed, results) = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        let mut spawn_err = None;
        for _ in 0..threads {
            let (gate, abort, live) = (&gate, &abort, &live);
            let spawned = std::thread::Builder::new()
                .name("hlctl-cpu".into())
                .spawn_scoped(scope, move || {
                    worker(max_prime, time, gate, abort, live, cancel)
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    spawn_err = Some(CpuError::Thread(e.to_string()));
                    abort.store(true, Ordering::SeqCst);
                    break;
                }
            }
        }
        let start = Instant::now();
        let _ = gate.set(start);
        let mut last = (start, 0u64);
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(50));
            let now = Instant::now();
            if now.duration_since(last.0) >= Duration::from_millis(500) {
                let ev = live.load(Ordering::Relaxed);
                let eps = (ev - last.1) as f64 / now.duration_since(last.0).as_secs_f64();
                last = (now, ev);
                let frac = (now.duration_since(start).as_secs_f64() / time.as_secs_f64()).min(1.0);
                tick(frac, format!("{threads} thread(s): {eps:.0} events/s"));
            }
        }
        let elapsed = start.elapsed();
        let results: Vec<Worker> = handles.into_iter().filter_map(|h| h.join().ok()).collect();
        (elapsed, spawn_err.map_or(Ok(results), Err))
    });
    let results = results?;
    let mut hist = histogram();
    for w in &results {
        let _ = hist.add(&w.hist);
    }
    let events: u64 = results.iter().map(|w| w.events).sum();
    let secs = elapsed.as_secs_f64();
    let ms = |ns: f64| ns / 1e6;
    let latency_ms = if hist.is_empty() {
        LatencyMs::default()
    } else {
        LatencyMs {
            min: ms(hist.min() as f64),
            avg: ms(hist.mean()),
            p95: ms(hist.value_at_quantile(0.95) as f64),
            max: ms(hist.max() as f64),
            sum: ms(hist.mean() * hist.len() as f64),
        }
    };
    Ok(CpuPhase {
        threads,
        events,
        duration_s: secs,
        events_per_second: if secs > 0.0 {
            events as f64 / secs
        } else {
            0.0
        },
        latency_ms,
        per_thread_events: results.iter().map(|w| w.events).collect(),
    })
}

fn worker(
    max_prime: u32,
    time: Duration,
    gate: &OnceLock<Instant>,
    abort: &AtomicBool,
    live: &AtomicU64,
    cancel: &Cancel,
) -> Worker {
    let mut w = Worker {
        events: 0,
        hist: histogram(),
    };
    let start = *gate.wait();
    let mut now = Instant::now();
    while now.duration_since(start) < time
        && !cancel.is_cancelled()
        && !abort.load(Ordering::Relaxed)
    {
        let Some(primes) = event(max_prime, Some(cancel)) else {
            break;
        };
        black_box(primes);
        let end = Instant::now();
        w.hist
            .saturating_record(end.duration_since(now).as_nanos().max(1) as u64);
        w.events += 1;
        live.fetch_add(1, Ordering::Relaxed);
        now = end;
    }
    w
}
