//! The disk benchmark's result, with the JSON keys of `hlctl bench disk --json`.
//!
//! Required keys: `rw`, `bs_bytes`, `iodepth`, `jobs`, `duration_s`, `iops`,
//! `bytes_per_second`, `latency_us` {`p50`,`p90`,`p99`,`p99_9`,`max`}, `engine`, `direct`.
//! Also: `mb_per_s` (10⁶), `mib_per_s` (2²⁰), totals, `cpu`, the filesystem, warnings.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::Serialize;

use super::job::{WorkerStats, new_histogram};
use super::{DiskConfig, FsInfo, RwMode};

/// Completion latency percentiles in microseconds (HDR histogram, ≤ 0.1 % error).
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct LatencyUs {
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub max: f64,
}

impl LatencyUs {
    /// From a histogram of nanoseconds.
    pub(crate) fn from_ns(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        Self {
            min: us(h.min()),
            mean: h.mean() / 1000.0,
            p50: us(h.value_at_quantile(0.50)),
            p90: us(h.value_at_quantile(0.90)),
            p99: us(h.value_at_quantile(0.99)),
            p99_9: us(h.value_at_quantile(0.999)),
            max: us(h.max()),
        }
    }
}

/// One direction of a mixed (`randrw`) run.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct DirectionStats {
    pub ios: u64,
    pub(crate) bytes: u64,
    pub(crate) iops: f64,
    pub(crate) bytes_per_second: f64,
}

/// CPU time the whole process used during the measurement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct CpuUse {
    pub user_s: f64,
    pub system_s: f64,
    /// (user + system) / wall time × 100; 100 = one CPU fully busy.
    pub percent: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct DiskReport {
    pub rw: RwMode,
    pub bs_bytes: u64,
    pub iodepth: u32,
    pub jobs: u32,
    pub duration_s: f64,
    pub iops: f64,
    pub bytes_per_second: f64,
    pub latency_us: LatencyUs,
    /// `io_uring` or `psync`.
    pub engine: String,
    /// Whether O_DIRECT was used.
    pub direct: bool,
    pub mb_per_s: f64,
    pub mib_per_s: f64,
    pub total_ios: u64,
    pub total_bytes: u64,
    /// I/Os that transferred fewer bytes than asked.
    pub short_ios: u64,
    /// Per direction, for `randrw` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read: Option<DirectionStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write: Option<DirectionStats>,
    pub cpu: CpuUse,
    pub(crate) dir: PathBuf,
    pub(crate) size_bytes: u64,
    pub(crate) time_based: bool,
    pub filesystem: String,
    pub memory_backed: bool,
    pub cancelled: bool,
    pub warnings: Vec<String>,
}

/// What the report needs besides the workers' statistics.
pub(crate) struct Context<'a> {
    pub(crate) cfg: &'a DiskConfig,
    pub(crate) engine: &'static str,
    pub(crate) direct: bool,
    pub(crate) fs: &'a FsInfo,
    pub(crate) warnings: Vec<String>,
    pub(crate) cancelled: bool,
    pub(crate) cpu: CpuUse,
}

pub(crate) fn build(ctx: Context<'_>, start: Instant, workers: Vec<WorkerStats>) -> DiskReport {
    let mut hist = new_histogram();
    let (mut r_ios, mut w_ios, mut r_bytes, mut w_bytes, mut short) = (0, 0, 0, 0, 0);
    let mut end = start;
    for w in &workers {
        let _ = hist.add(&w.hist);
        r_ios += w.read_ios;
        w_ios += w.write_ios;
        r_bytes += w.read_bytes;
        w_bytes += w.write_bytes;
        short += w.short_ios;
        end = end.max(w.last_done.unwrap_or(start));
    }
    let secs = end.duration_since(start).as_secs_f64();
    let rate = |x: u64| if secs > 0.0 { x as f64 / secs } else { 0.0 };
    let (ios, bytes) = (r_ios + w_ios, r_bytes + w_bytes);
    let dir = |ios, bytes| DirectionStats {
        ios,
        bytes,
        iops: rate(ios),
        bytes_per_second: rate(bytes),
    };
    let mixed = ctx.cfg.rw == RwMode::RandRw;
    let bps = rate(bytes);
    let cpu = ctx.cpu;
    let mut warnings = ctx.warnings;
    if !ctx.cancelled {
        let took = Duration::from_secs_f64(secs);
        let longer = "give it --time 5, or a larger --size";
        warnings.extend(crate::bench::load::short_run_warning(took, longer));
    }
    DiskReport {
        rw: ctx.cfg.rw,
        bs_bytes: ctx.cfg.bs,
        iodepth: ctx.cfg.iodepth,
        jobs: ctx.cfg.jobs,
        duration_s: secs,
        iops: rate(ios),
        bytes_per_second: bps,
        latency_us: LatencyUs::from_ns(&hist),
        engine: ctx.engine.to_string(),
        direct: ctx.direct,
        mb_per_s: bps / 1e6,
        mib_per_s: bps / (1024.0 * 1024.0),
        total_ios: ios,
        total_bytes: bytes,
        short_ios: short,
        read: mixed.then(|| dir(r_ios, r_bytes)),
        write: mixed.then(|| dir(w_ios, w_bytes)),
        cpu,
        dir: ctx.cfg.dir.clone(),
        size_bytes: ctx.cfg.size / ctx.cfg.bs * ctx.cfg.bs,
        time_based: ctx.cfg.time_based,
        filesystem: ctx.fs.name.clone(),
        memory_backed: ctx.fs.memory_backed,
        cancelled: ctx.cancelled,
        warnings,
    }
}

/// The CPU used between two [`rusage_now`](crate::bench::load::rusage_now) readings `wall` apart; the share
/// is of that same span (not of the I/O's, which starts later and ends
/// earlier), so it never exceeds what the machine's CPUs can give.
pub(crate) fn cpu_use(
    before: (Duration, Duration),
    after: (Duration, Duration),
    wall: Duration,
) -> CpuUse {
    let user_s = after.0.saturating_sub(before.0).as_secs_f64();
    let system_s = after.1.saturating_sub(before.1).as_secs_f64();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let percent = if wall.is_zero() {
        0.0
    } else {
        ((user_s + system_s) / wall.as_secs_f64() * 100.0).min(cpus * 100.0)
    };
    CpuUse {
        user_s,
        system_s,
        percent,
    }
}
