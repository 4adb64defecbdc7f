//! The fallback engine: pread/pwrite on plain threads, one I/O in flight per thread.
//!
//! A job gets `min(iodepth, MAX_PSYNC_THREADS)` such threads sharing its offset
//! generator, so the device still sees roughly `iodepth` I/Os in flight.

use std::hash::{BuildHasher, RandomState};
use std::os::unix::fs::FileExt;
use std::time::Instant;

use super::DiskError;
use super::job::{JobSpec, WorkerStats};
use crate::bench::buffer::AlignedBuf;

/// Run one thread of a job until the job is over; returns its statistics.
pub(crate) fn run_thread(spec: &JobSpec) -> Result<WorkerStats, DiskError> {
    let bs = spec.bs as usize;
    let mut buf = AlignedBuf::for_block_io(bs).map_err(|e| DiskError::EngineUnavailable {
        engine: "psync",
        reason: format!("buffer allocation: {e}"),
    })?;
    buf.fill_random(BuildHasher::hash_one(&RandomState::new(), 0u8));
    let file = spec.file.file();
    let mut stats = WorkerStats::new();
    let Some(start) = spec.wait_start() else {
        return Ok(stats);
    };
    let deadline = start + spec.runtime;
    let mut now = start;
    while !spec.stopping(deadline, now) {
        let Some(io) = spec.offsets.next() else { break };
        let t0 = Instant::now();
        let res = if io.write {
            file.write_at(buf.as_slice(), io.offset)
        } else {
            file.read_at(buf.as_mut_slice(), io.offset)
        };
        now = Instant::now();
        match res {
            Ok(n) => {
                stats.record(io.write, n as u64, spec.bs, now - t0, now);
                spec.live.add(1, n as u64);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(source) => {
                spec.abort_all();
                return Err(DiskError::Io {
                    path: spec.file.path().to_path_buf(),
                    op: if io.write { "pwrite" } else { "pread" },
                    offset: io.offset,
                    source,
                });
            }
        }
    }
    Ok(stats)
}
