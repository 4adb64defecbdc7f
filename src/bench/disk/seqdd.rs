//! `--seq-dd`: the dd test from the users' NFS write-ups, done in-process.
//!
//! Write phase = `dd if=/dev/zero of=FILE bs=1M count=N conv=fdatasync`: sequential
//! buffered writes, then one `fdatasync`, whose time **is included** (as GNU dd does).
//! Read phase = `dd if=FILE of=/dev/null bs=1M`, after dropping the file's page cache
//! (otherwise it would measure RAM). The data is pseudo-random rather than zeros, so
//! compressing filesystems (ZFS, btrfs) cannot inflate the figure. MB/s are SI, like dd.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::job::new_histogram;
use super::layout::{BenchFile, drop_cache};
use super::{DiskError, LatencyUs, space};
use crate::bench::buffer::AlignedBuf;
use crate::bench::progress::{Cancel, Progress, ProgressEvent};

#[derive(Clone, Debug)]
pub struct SeqDdConfig {
    pub dir: PathBuf,
    /// Bytes to write and read back.
    pub size: u64,
    /// Bytes per write/read call (dd's `bs`, default 1 MiB).
    pub bs: u64,
}

impl SeqDdConfig {
    pub(crate) fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            size: 1 << 30,
            bs: 1 << 20,
        }
    }
}

/// One direction of the dd test.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DdPhase {
    pub(crate) rw: &'static str,
    pub bytes: u64,
    pub duration_s: f64,
    pub bytes_per_second: f64,
    /// SI megabytes per second, as dd prints.
    pub mb_per_s: f64,
    pub(crate) mib_per_s: f64,
    /// Time of the closing fdatasync (write phase only), included in `duration_s`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fdatasync_s: Option<f64>,
    /// Per write()/read() call.
    pub(crate) latency_us: LatencyUs,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeqDdReport {
    /// Always `seq-dd`.
    pub(crate) mode: &'static str,
    pub(crate) bs_bytes: u64,
    pub(crate) size_bytes: u64,
    pub(crate) engine: &'static str,
    pub(crate) direct: bool,
    pub write: DdPhase,
    pub read: DdPhase,
    pub(crate) dir: PathBuf,
    pub(crate) filesystem: String,
    pub memory_backed: bool,
    pub warnings: Vec<String>,
}

/// Run the dd-style test; the file is removed afterwards (also on error or cancel).
pub fn run_seq_dd(
    cfg: &SeqDdConfig,
    progress: &dyn Progress,
    cancel: Cancel,
) -> Result<SeqDdReport, DiskError> {
    if cfg.bs == 0 || cfg.bs > 64 << 20 {
        let reason = format!("{} is out of range: allowed 1 byte to 64 MiB", cfg.bs);
        return Err(DiskError::InvalidConfig {
            field: "bs",
            reason,
        });
    }
    if cfg.size < cfg.bs {
        let reason = format!("{} is smaller than the block size {}", cfg.size, cfg.bs);
        return Err(DiskError::InvalidConfig {
            field: "size",
            reason,
        });
    }
    let fs = space::probe(&cfg.dir)?;
    space::check_free(&cfg.dir, &fs, cfg.size)?;
    let file = BenchFile::create(&cfg.dir)?;
    let mut buf = AlignedBuf::new(cfg.bs as usize).map_err(|source| DiskError::Layout {
        path: file.path().to_path_buf(),
        source,
    })?;
    buf.fill_random(0xdd ^ cfg.size);
    let write = write_phase(cfg, &file, &buf, progress, &cancel)?;
    drop_cache(&file);
    let read = read_phase(cfg, &file, &mut buf, progress, &cancel)?;
    Ok(SeqDdReport {
        mode: "seq-dd",
        bs_bytes: cfg.bs,
        size_bytes: cfg.size,
        engine: "sync",
        direct: false,
        write,
        read,
        dir: cfg.dir.clone(),
        filesystem: fs.name.clone(),
        memory_backed: fs.memory_backed,
        warnings: fs.warnings(),
    })
}

fn write_phase(
    cfg: &SeqDdConfig,
    file: &BenchFile,
    buf: &AlignedBuf,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<DdPhase, DiskError> {
    let mut hist = new_histogram();
    let mut f = file.file();
    let start = Instant::now();
    let mut done = 0u64;
    while done < cfg.size {
        if cancel.is_cancelled() {
            return Err(DiskError::Cancelled);
        }
        let n = (cfg.size - done).min(cfg.bs) as usize;
        let t0 = Instant::now();
        f.write_all(&buf.as_slice()[..n])
            .map_err(|source| io_err(file, "write", done, source))?;
        hist.saturating_record(t0.elapsed().as_nanos().max(1) as u64);
        done += n as u64;
        tick(progress, "writing", done, cfg.size, 0.0);
    }
    let sync_start = Instant::now();
    nix::unistd::fdatasync(file.file()).map_err(|e| io_err(file, "fdatasync", done, e.into()))?;
    let sync = sync_start.elapsed();
    Ok(phase("write", done, start.elapsed(), Some(sync), &hist))
}

fn read_phase(
    cfg: &SeqDdConfig,
    file: &BenchFile,
    buf: &mut AlignedBuf,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<DdPhase, DiskError> {
    let mut hist = new_histogram();
    // A fresh descriptor reads from offset 0, like a new dd process.
    let mut f =
        std::fs::File::open(file.path()).map_err(|source| io_err(file, "open", 0, source))?;
    let start = Instant::now();
    let mut done = 0u64;
    loop {
        if cancel.is_cancelled() {
            return Err(DiskError::Cancelled);
        }
        let t0 = Instant::now();
        let n = match f.read(buf.as_mut_slice()) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(source) => return Err(io_err(file, "read", done, source)),
        };
        hist.saturating_record(t0.elapsed().as_nanos().max(1) as u64);
        done += n as u64;
        tick(progress, "reading back", done, cfg.size, 0.5);
    }
    Ok(phase("read", done, start.elapsed(), None, &hist))
}

fn tick(progress: &dyn Progress, what: &str, done: u64, size: u64, base: f64) {
    if done % (64 << 20) < (1 << 20) || done == size {
        progress.report(ProgressEvent {
            fraction: base + 0.5 * done as f64 / size as f64,
            message: format!("{what}: {} of {} MiB", done >> 20, size >> 20),
        });
    }
}

fn phase(
    rw: &'static str,
    bytes: u64,
    took: Duration,
    sync: Option<Duration>,
    hist: &hdrhistogram::Histogram<u64>,
) -> DdPhase {
    let secs = took.as_secs_f64();
    let bps = if secs > 0.0 { bytes as f64 / secs } else { 0.0 };
    DdPhase {
        rw,
        bytes,
        duration_s: secs,
        bytes_per_second: bps,
        mb_per_s: bps / 1e6,
        mib_per_s: bps / (1024.0 * 1024.0),
        fdatasync_s: sync.map(|d| d.as_secs_f64()),
        latency_us: LatencyUs::from_ns(hist),
    }
}

fn io_err(file: &BenchFile, op: &'static str, offset: u64, source: std::io::Error) -> DiskError {
    DiskError::Io {
        path: file.path().to_path_buf(),
        op,
        offset,
        source,
    }
}
