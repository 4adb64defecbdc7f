//! What a worker thread gets (its job) and what it hands back (its statistics).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::layout::BenchFile;
use super::offsets::OffsetGen;
use crate::bench::progress::Cancel;

/// Everything one worker needs, borrowed for the run.
pub(crate) struct JobSpec<'a> {
    pub(crate) file: &'a BenchFile,
    pub(crate) bs: u64,
    pub(crate) iodepth: u32,
    pub(crate) offsets: &'a OffsetGen,
    pub(crate) runtime: Duration,
    pub(crate) gate: &'a StartGate,
    pub(crate) cancel: &'a Cancel,
    pub(crate) live: &'a Live,
}

impl JobSpec<'_> {
    /// Say "set up", wait for every worker to be, and return the common start instant.
    /// `None` when the run was aborted before it started.
    pub(crate) fn wait_start(&self) -> Option<Instant> {
        self.gate.ready.fetch_add(1, Ordering::SeqCst);
        let start = *self.gate.start.wait();
        (!self.gate.aborted()).then_some(start)
    }

    /// Whether to stop issuing new I/O.
    pub(crate) fn stopping(&self, deadline: Instant, now: Instant) -> bool {
        now >= deadline || self.cancel.is_cancelled() || self.gate.aborted()
    }

    /// Tell the other workers to stop (this one failed).
    pub(crate) fn abort_all(&self) {
        self.gate.abort.store(true, Ordering::SeqCst);
    }
}

/// Starts every worker at the same instant, once all have set up.
#[derive(Default)]
pub(crate) struct StartGate {
    pub(crate) ready: AtomicUsize,
    pub(crate) start: OnceLock<Instant>,
    pub(crate) abort: AtomicBool,
}

impl StartGate {
    pub(crate) fn aborted(&self) -> bool {
        self.abort.load(Ordering::Relaxed)
    }
    /// Release the workers (with `abort` set first when they must not run).
    pub(crate) fn open(&self, abort: bool) -> Instant {
        if abort {
            self.abort.store(true, Ordering::SeqCst);
        }
        let now = Instant::now();
        let _ = self.start.set(now);
        *self.start.get().unwrap_or(&now)
    }
}

/// Running totals for the progress display.
#[derive(Default)]
pub(crate) struct Live {
    ios: AtomicU64,
    bytes: AtomicU64,
}

impl Live {
    pub(crate) fn add(&self, ios: u64, bytes: u64) {
        self.ios.fetch_add(ios, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }
    pub(crate) fn get(&self) -> (u64, u64) {
        (
            self.ios.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
        )
    }
}

/// Latency histogram bounds: 1 ns to 1 hour, 3 significant digits (≤ 0.1 % error).
pub(crate) fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("static histogram bounds are valid")
}

/// One worker's results.
pub(crate) struct WorkerStats {
    pub(crate) hist: Histogram<u64>,
    pub(crate) read_ios: u64,
    pub(crate) write_ios: u64,
    pub(crate) read_bytes: u64,
    pub(crate) write_bytes: u64,
    pub(crate) short_ios: u64,
    /// When the last I/O completed (None: none did).
    pub(crate) last_done: Option<Instant>,
}

impl WorkerStats {
    pub(crate) fn new() -> Self {
        Self {
            hist: new_histogram(),
            read_ios: 0,
            write_ios: 0,
            read_bytes: 0,
            write_bytes: 0,
            short_ios: 0,
            last_done: None,
        }
    }

    /// Count one completed I/O of `done` bytes out of `wanted`, which took `lat`.
    pub(crate) fn record(
        &mut self,
        write: bool,
        done: u64,
        wanted: u64,
        lat: Duration,
        now: Instant,
    ) {
        self.hist.saturating_record(lat.as_nanos().max(1) as u64);
        if write {
            self.write_ios += 1;
            self.write_bytes += done;
        } else {
            self.read_ios += 1;
            self.read_bytes += done;
        }
        if done < wanted {
            self.short_ios += 1;
        }
        self.last_done = Some(now);
    }
}
