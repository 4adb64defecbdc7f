//! A fio-class disk benchmark: `hlctl bench disk`.
//!
//! What one run does, in order:
//! 1. checks the directory: free space ([`space`]) and whether it is memory-backed;
//! 2. creates one file per job with a unique name (`.hlctl-bench-<pid>-<n>`) and lays it
//!    out like fio ([`layout`]): jobs that read are written in full and fsynced; pure write
//!    jobs are preallocated only (fio's `overwrite=0`); the page cache is then dropped;
//! 3. runs the jobs on dedicated threads, with io_uring ([`uring`]) or, where io_uring is
//!    unavailable, with pread/pwrite threads ([`psync`]) — the report says which;
//! 4. removes its files (also on error and cancel: [`layout::BenchFile`] is a drop guard).
//!
//! Like fio without `--time_based`, a job ends after `size` bytes of I/O or `runtime`,
//! whichever comes first; with [`DiskConfig::time_based`] it loops until `runtime`.
//! Random offsets visit every block once per pass (fio's random map).
//!
//! [`seqdd`] is the separate `--seq-dd` mode (dd `conv=fdatasync` and the read back).

mod error;
mod job;
pub(crate) mod layout;
mod offsets;
mod psync;
mod run;
pub(crate) mod seqdd;
pub(crate) mod space;
pub(crate) mod summary;
mod uring;

use std::path::PathBuf;
use std::time::Duration;

pub use error::{DiskError, ErrorClass};
pub use run::run;
pub use seqdd::{DdPhase, SeqDdConfig, SeqDdReport, run_seq_dd};
pub(crate) use space::FsInfo;
pub use summary::{CpuUse, DirectionStats, DiskReport, LatencyUs};

/// The I/O pattern, named like fio's `--rw`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    RandRead,
    /// Random writes.
    RandWrite,
    /// Random mixed reads and writes ([`DiskConfig::rwmix_read`] percent reads).
    RandRw,
}

impl RwMode {
    pub(crate) fn name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::RandRw => "randrw",
        }
    }
    pub(crate) fn is_random(self) -> bool {
        matches!(self, RwMode::RandRead | RwMode::RandWrite | RwMode::RandRw)
    }
    /// Whether the job reads (then its file is laid out in full first, like fio).
    pub(crate) fn reads(self) -> bool {
        matches!(self, RwMode::Read | RwMode::RandRead | RwMode::RandRw)
    }
}

/// Which I/O engine to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EngineChoice {
    /// io_uring when the kernel allows it, else pread/pwrite threads.
    #[default]
    Auto,
    /// io_uring only; fail when unavailable.
    IoUring,
    /// pread/pwrite threads, `iodepth` of them per job (at most [`MAX_PSYNC_THREADS`]).
    Psync,
}

/// Most pread/pwrite threads one job starts in the psync engine.
pub(crate) const MAX_PSYNC_THREADS: u32 = 64;

/// What to run. [`DiskConfig::new`] gives the CLI's defaults.
#[derive(Clone, Debug)]
pub struct DiskConfig {
    /// Directory to create the test files in (must exist).
    pub(crate) dir: PathBuf,
    pub rw: RwMode,
    /// Block size in bytes (a multiple of 512 with O_DIRECT).
    pub bs: u64,
    /// File size and I/O amount per job, in bytes.
    pub size: u64,
    /// I/Os kept in flight per job.
    pub iodepth: u32,
    /// Independent jobs, each with its own file.
    pub jobs: u32,
    /// Cap on the measured run time.
    pub runtime: Duration,
    /// Keep going until `runtime` even when `size` bytes were done.
    pub time_based: bool,
    /// O_DIRECT (bypass the page cache). `false` = buffered I/O.
    pub direct: bool,
    pub engine: EngineChoice,
    /// Percent of reads in `randrw` (fio's `rwmixread`, default 50).
    pub(crate) rwmix_read: u8,
}

impl DiskConfig {
    /// The defaults of `hlctl bench disk`: randread, 4 KiB, 1 GiB, QD 32, 1 job, 30 s, O_DIRECT.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            rw: RwMode::RandRead,
            bs: 4096,
            size: 1 << 30,
            iodepth: 32,
            jobs: 1,
            runtime: Duration::from_secs(30),
            time_based: false,
            direct: true,
            engine: EngineChoice::Auto,
            rwmix_read: 50,
        }
    }

    /// Check every field; the error names the field (= the CLI flag) and what is allowed.
    pub(crate) fn validate(&self) -> Result<(), DiskError> {
        let bad =
            |field: &'static str, reason: String| Err(DiskError::InvalidConfig { field, reason });
        if self.bs == 0 || self.bs > 64 << 20 {
            return bad(
                "bs",
                format!("{} is out of range: allowed 1 byte to 64 MiB", self.bs),
            );
        }
        if self.direct && !self.bs.is_multiple_of(512) {
            return bad(
                "bs",
                format!(
                    "{} is not a multiple of 512, which O_DIRECT needs (or use --buffered)",
                    self.bs
                ),
            );
        }
        if self.size < self.bs {
            return bad(
                "size",
                format!("{} is smaller than the block size {}", self.size, self.bs),
            );
        }
        if !(1..=4096).contains(&self.iodepth) {
            return bad(
                "iodepth",
                format!("{} is out of range: allowed 1 to 4096", self.iodepth),
            );
        }
        if !(1..=64).contains(&self.jobs) {
            return bad(
                "jobs",
                format!("{} is out of range: allowed 1 to 64", self.jobs),
            );
        }
        if self.runtime.is_zero() || self.runtime > Duration::from_secs(86_400) {
            return bad(
                "runtime",
                "must be more than 0 and at most 86400 seconds".to_string(),
            );
        }
        if self.rwmix_read > 100 {
            return bad(
                "rwmix-read",
                format!("{} is not a percentage (0 to 100)", self.rwmix_read),
            );
        }
        Ok(())
    }
}
