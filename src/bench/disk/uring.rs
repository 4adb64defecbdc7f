//! The io_uring engine: one ring per job on its own thread, `iodepth` I/Os kept in flight.
//!
//! Each slot owns one `bs`-sized piece of one buffer (registered with the ring when the
//! kernel allows, as are the file descriptors), in huge pages when it is large, so that
//! a large I/O reaches the device whole ([`AlignedBuf::for_block_io`]). Like fio's defaults
//! (`iodepth_batch_submit=1`, `iodepth_batch_complete_min=1`), every I/O is submitted as
//! soon as its slot is free, and the loop reaps every completion that is there, waiting
//! for one only when there is none, and refills the freed slots — so the queue depth
//! stays at `iodepth` until the job is over. Every submit also asks the kernel to post
//! the completions that are ready (as fio's does): with DEFER_TASKRUN, finished I/Os are
//! otherwise posted only when the loop waits, and their slots stay idle until then.
//! Every in-flight I/O is reaped before the buffer is freed.

use std::os::fd::AsRawFd;
use std::time::Instant;

use io_uring::{IoUring, Probe, opcode, squeue, types};

use super::DiskError;
use super::job::{JobSpec, WorkerStats};
use super::offsets::Io;
use crate::bench::buffer::AlignedBuf;

/// Check that io_uring can be used here (not disabled by sysctl or seccomp, reads and
/// writes supported). The error says why not.
pub(crate) fn probe() -> Result<(), String> {
    let ring = IoUring::new(2).map_err(|e| format!("io_uring_setup: {e}"))?;
    let mut probe = Probe::new();
    ring.submitter()
        .register_probe(&mut probe)
        .map_err(|e| format!("IORING_REGISTER_PROBE: {e}"))?;
    if !(probe.is_supported(opcode::Read::CODE) && probe.is_supported(opcode::Write::CODE)) {
        return Err("the kernel's io_uring lacks READ/WRITE".into());
    }
    Ok(())
}

/// What the ring can use: registered buffers and file, or plain ones.
struct Target {
    base: *mut u8,
    bs: usize,
    fd: i32,
    fixed_bufs: bool,
    fixed_file: bool,
}

impl Target {
    fn entry(&self, slot: usize, io: Io) -> squeue::Entry {
        // SAFETY: pointer arithmetic inside one allocation: slot < iodepth and the buffer holds iodepth × bs bytes.
        let buf = unsafe { self.base.add(slot * self.bs) };
        let len = self.bs as u32;
        let idx = slot as u16;
        macro_rules! build {
            ($fd:expr) => {
                match (io.write, self.fixed_bufs) {
                    (false, true) => opcode::ReadFixed::new($fd, buf, len, idx)
                        .offset(io.offset)
                        .build(),
                    (false, false) => opcode::Read::new($fd, buf, len).offset(io.offset).build(),
                    (true, true) => opcode::WriteFixed::new($fd, buf, len, idx)
                        .offset(io.offset)
                        .build(),
                    (true, false) => opcode::Write::new($fd, buf, len).offset(io.offset).build(),
                }
            };
        }
        let e = if self.fixed_file {
            build!(types::Fixed(0))
        } else {
            build!(types::Fd(self.fd))
        };
        e.user_data(slot as u64)
    }
}

/// `IORING_ENTER_GETEVENTS` (linux/io_uring.h): run deferred completion work.
const ENTER_GETEVENTS: u32 = 1;

/// Submit what is queued and let the kernel post the completions that are ready,
/// without waiting for any (fio's commit: `io_uring_enter(queued, 0, GETEVENTS)`).
fn submit_posting(ring: &mut IoUring) -> std::io::Result<usize> {
    let queued = ring.submission().len() as u32;
    // SAFETY: no argument pointer is passed; `queued` is the number of entries in the
    // submission queue, each pointing into a buffer that outlives its I/O.
    unsafe {
        ring.submitter()
            .enter::<libc::sigset_t>(queued, 0, ENTER_GETEVENTS, None)
    }
}

/// A ring for one thread: completions are run only when this thread asks for them
/// (DEFER_TASKRUN + SINGLE_ISSUER, else COOP_TASKRUN, else plain — older kernels refuse
/// the newer flags with EINVAL), which saves interrupts as fio does.
fn new_ring(entries: u32) -> std::io::Result<IoUring> {
    let attempts: [fn(&mut io_uring::Builder); 3] = [
        |b| {
            b.setup_coop_taskrun()
                .setup_single_issuer()
                .setup_defer_taskrun();
        },
        |b| {
            b.setup_coop_taskrun();
        },
        |_| {},
    ];
    let mut last = None;
    for flags in attempts {
        let mut builder = IoUring::builder();
        builder.setup_cqsize(entries);
        flags(&mut builder);
        match builder.build(entries) {
            Ok(ring) => return Ok(ring),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::from_raw_os_error(libc::EINVAL)))
}

/// Run one job to its end; returns its statistics.
pub(crate) fn run_job(spec: &JobSpec) -> Result<WorkerStats, DiskError> {
    let (mut ring, buf, target) = set_up(spec)?;
    let mut stats = WorkerStats::new();
    let Some(start) = spec.wait_start() else {
        return Ok(stats);
    };
    let deadline = start + spec.runtime;
    let mut queue = Queue::new(start, spec.iodepth as usize);
    queue.refill(&mut ring, &target, spec);
    while queue.in_flight > 0 {
        if let Err(e) = wait_unless_ready(&mut ring) {
            // The kernel may still own buffers we cannot reap: never free them.
            std::mem::forget(buf);
            spec.abort_all();
            return Err(DiskError::Io {
                path: spec.file.path().to_path_buf(),
                op: "io_uring_enter",
                offset: 0,
                source: e,
            });
        }
        let now = Instant::now();
        queue.reap(&mut ring, spec, &mut stats, now);
        if queue.failure.is_none() && !spec.stopping(deadline, now) {
            queue.refill(&mut ring, &target, spec);
        }
    }
    drop(ring);
    drop(buf);
    queue.failure.map_or(Ok(stats), Err)
}

/// The ring, its buffer (random bytes) and what the ring could register, for one job.
fn set_up(spec: &JobSpec) -> Result<(IoUring, AlignedBuf, Target), DiskError> {
    let depth = spec.iodepth as usize;
    let bs = spec.bs as usize;
    let unavailable = |what: &str, e: std::io::Error| DiskError::EngineUnavailable {
        engine: "io_uring",
        reason: format!("{what}: {e}"),
    };
    let ring =
        new_ring(spec.iodepth.next_power_of_two()).map_err(|e| unavailable("io_uring_setup", e))?;
    let mut buf =
        AlignedBuf::for_block_io(depth * bs).map_err(|e| unavailable("buffer allocation", e))?;
    buf.fill_random(spec.offsets as *const _ as u64);
    let iovecs: Vec<libc::iovec> = (0..depth)
        .map(|i| libc::iovec {
            // SAFETY: within the buffer (i < depth).
            iov_base: unsafe { buf.as_ptr().add(i * bs) }.cast(),
            iov_len: bs,
        })
        .collect();
    let fd = spec.file.file().as_raw_fd();
    // SAFETY: the buffer outlives the ring's use of it (`run_job` reaps every I/O, or
    // leaks the buffer on failure).
    let fixed_bufs = depth <= usize::from(u16::MAX)
        && unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
    let fixed_file = ring.submitter().register_files(&[fd]).is_ok();
    let target = Target {
        base: buf.as_ptr(),
        bs,
        fd,
        fixed_bufs,
        fixed_file,
    };
    Ok((ring, buf, target))
}

/// Completions the last submit posted are reaped without a system call; wait
/// (and send anything still queued) only when there are none. An interrupted or
/// busy wait is no error: the loop comes back.
fn wait_unless_ready(ring: &mut IoUring) -> std::io::Result<()> {
    if ring.completion().is_empty()
        && let Err(e) = ring.submit_and_wait(1)
    {
        match e.raw_os_error() {
            Some(libc::EINTR) | Some(libc::EAGAIN) | Some(libc::EBUSY) => {}
            _ => return Err(e),
        }
    }
    Ok(())
}

/// The job's slots: which are free, what each has in flight, and the first failure.
struct Queue {
    issued: Vec<(Instant, Io)>,
    free: Vec<usize>,
    done: Vec<(u64, i32)>,
    in_flight: usize,
    failure: Option<DiskError>,
}

impl Queue {
    fn new(start: Instant, depth: usize) -> Queue {
        Queue {
            issued: vec![
                (
                    start,
                    Io {
                        offset: 0,
                        write: false
                    }
                );
                depth
            ],
            free: (0..depth).rev().collect(),
            done: Vec::with_capacity(depth),
            in_flight: 0,
            failure: None,
        }
    }

    /// Submit the next I/O in every free slot (until the offsets run out).
    fn refill(&mut self, ring: &mut IoUring, target: &Target, spec: &JobSpec) {
        while let Some(slot) = self.free.pop() {
            let Some(io) = spec.offsets.next() else {
                self.free.push(slot);
                break;
            };
            let entry = target.entry(slot, io);
            self.issued[slot] = (Instant::now(), io);
            // SAFETY: the entry points into our buffer, which lives until every I/O is reaped.
            let mut pushed = unsafe { ring.submission().push(&entry) }.is_ok();
            if !pushed && submit_posting(ring).is_ok() {
                // SAFETY: as above.
                pushed = unsafe { ring.submission().push(&entry) }.is_ok();
            }
            if !pushed {
                self.free.push(slot);
                break;
            }
            self.in_flight += 1;
            // Submit at once, like fio's default iodepth_batch_submit=1: on virtio disks this
            // measured ~20 % lower latency than one submit per batch. An error here leaves the
            // entry queued; the next submit sends it.
            let _ = submit_posting(ring);
        }
    }

    /// Record every completion that is there and free its slot.
    fn reap(&mut self, ring: &mut IoUring, spec: &JobSpec, stats: &mut WorkerStats, now: Instant) {
        self.done
            .extend(ring.completion().map(|c| (c.user_data(), c.result())));
        let (mut n, mut bytes) = (0u64, 0u64);
        for (ud, res) in self.done.drain(..) {
            let slot = ud as usize;
            self.in_flight -= 1;
            self.free.push(slot);
            let (t0, io) = self.issued[slot];
            if res < 0 {
                spec.abort_all();
                self.failure.get_or_insert_with(|| io_error(spec, io, -res));
                continue;
            }
            stats.record(io.write, res as u64, spec.bs, now - t0, now);
            n += 1;
            bytes += res as u64;
        }
        spec.live.add(n, bytes);
    }
}

fn io_error(spec: &JobSpec, io: Io, errno: i32) -> DiskError {
    let mut source = std::io::Error::from_raw_os_error(errno);
    if errno == libc::EINVAL {
        source = std::io::Error::other(format!(
            "{source} (the block size {} may not match the device's O_DIRECT alignment; try --buffered)",
            spec.bs
        ));
    }
    DiskError::Io {
        path: spec.file.path().to_path_buf(),
        op: if io.write { "write" } else { "read" },
        offset: io.offset,
        source,
    }
}
