//! When a TCP receiver wakes: its SO_RCVLOWAT, raised with the stream's rate.
//!
//! iperf3's receiver is woken for every segment that arrives. Each wake-up
//! costs the sending CPU: on loopback, where the sender's CPU also runs the
//! receiving TCP stack and sends the wake-up to the other core, a third of
//! a single stream's sender samples were `_raw_spin_unlock_irqrestore`
//! (`perf record -a` on a 2-core guest), and raising the mark from one
//! block to 2 MiB raised hlctl→hlctl from ~23 to ~30 Gbit/s. On a real link
//! the wire is the limit and the figure is the same either way.
//!
//! So an unpaced TCP receiver asks the kernel to wake it only once a block
//! (`len`) is queued, and, once it knows the stream's rate, once ~5 ms of
//! the stream is queued, up to [`MOST`] (2 MiB, shared among a test's
//! streams: at 30 Gbit/s a wake-up every 0.6 ms; at 1 Gbit/s every 625 KB;
//! at 100 Mbit/s it stays at the block). What a 1 s interval counts is then
//! off by at most those 5 ms. The kernel still wakes a reader whose window
//! is nearly full or whose memory is short (`tcp_epollin_ready`), and a
//! read that has waited `WORKER_POLL` returns what it has, so a slower
//! stream never stalls on the mark. A paced test (`-b`) keeps the kernel's
//! default: its slow stream is counted as it arrives.
//!
//! Only while the test's threads fit on the cores: a sender and a receiver
//! per stream (both ends' on loopback), at most one per core. With more,
//! there is no idle core for the wake-up to reach, and the marks measured
//! worse: on 2 cores, against iperf3 3.21 in the same run
//! (`benches/compare_net.sh`, 5–7 rounds), `-P 4` went from 0.905× with a
//! mark of 512 KiB per stream to 1.126× with the kernel's, and `--bidir
//! -P 2` from 0.916× to 1.049×; the CPU per Gbit/s of `-P 4` from 1.076×
//! to 0.982× of 3.21's (larger reads into larger buffers per stream are
//! the likely cost; not profiled). A single stream fell from 1.707× to
//! 0.941× without its mark, so it keeps it.

use std::net::TcpStream;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use super::params::{Protocol, TestDirection, TestParams};
use crate::sockopt;

/// The most bytes queued before a receiver wakes.
const MOST: usize = 2 << 20;
/// All of one test's receivers together: what they wait for stays within
/// 2 MiB, so it is read while still in the cache (at `-P 4` 512 KiB each;
/// a 16 MiB budget measured no better at `-P 4` or `--bidir -P 2`). A test
/// of 16 streams or more wakes per block.
const BUDGET: usize = 2 << 20;
/// How much of the stream a wake-up may wait for.
const WAKE_EVERY: Duration = Duration::from_millis(5);
/// How often the rate is looked at.
const LOOK_EVERY: Duration = Duration::from_millis(100);

/// The low-water marks a receiver moves between; `base` 0: the kernel's
/// default (every segment), never changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LowWater {
    /// From the start: one block (capped at half a fixed window, so that a
    /// full window always wakes it).
    pub(crate) base: usize,
    /// The highest it is raised to.
    pub(crate) most: usize,
}

impl LowWater {
    /// The marks for one receiving stream of `params` on this machine.
    pub(crate) fn of(params: &TestParams) -> LowWater {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        LowWater::on_cores(params, cores)
    }

    /// The marks for one receiving stream of `params` on `cores` cores.
    pub(crate) fn on_cores(params: &TestParams, cores: usize) -> LowWater {
        if params.protocol != Protocol::Tcp || params.bandwidth_bps > 0 {
            return LowWater::default();
        }
        let ways = if params.direction == TestDirection::Bidir {
            2
        } else {
            1
        };
        let threads = 2 * ways * params.parallel.max(1) as usize;
        if threads > cores {
            return LowWater::default();
        }
        let half_window = params.window.map_or(usize::MAX, |w| w as usize / 2);
        let block = params.len as usize;
        let base = block.min(half_window);
        let share = BUDGET / params.parallel.max(1) as usize;
        let most = MOST.min(share).min(half_window).max(base);
        LowWater { base, most }
    }

    /// How many bytes a read should ask for: the highest mark (at least `len`).
    pub(crate) fn read_size(&self, len: usize) -> usize {
        self.most.max(len)
    }

    /// The mark for a stream arriving at `bytes_per_s`.
    fn for_rate(&self, bytes_per_s: f64) -> usize {
        let want = (bytes_per_s * WAKE_EVERY.as_secs_f64()) as usize;
        want.clamp(self.base, self.most)
    }
}

/// One receiving socket's mark, moved with the rate it reads at.
pub(crate) struct Waker {
    marks: LowWater,
    now: usize,
    since: Instant,
    bytes: u64,
}

impl Waker {
    /// Set `marks.base` on `s` (nothing when it is 0).
    pub(crate) fn start(s: &TcpStream, marks: LowWater) -> std::io::Result<Waker> {
        let w = Waker {
            marks,
            now: marks.base,
            since: Instant::now(),
            bytes: 0,
        };
        if marks.base > 0 {
            set(s, marks.base)?;
        }
        Ok(w)
    }

    /// `n` more bytes read; every [`LOOK_EVERY`] the mark follows the rate.
    pub(crate) fn read(&mut self, s: &TcpStream, n: usize) -> std::io::Result<()> {
        if self.marks.most <= self.marks.base {
            return Ok(());
        }
        self.bytes += n as u64;
        let took = self.since.elapsed();
        if took < LOOK_EVERY {
            return Ok(());
        }
        let mark = self.marks.for_rate(self.bytes as f64 / took.as_secs_f64());
        (self.since, self.bytes) = (Instant::now(), 0);
        if mark != self.now {
            set(s, mark)?;
            self.now = mark;
        }
        Ok(())
    }
}

fn set(s: &TcpStream, bytes: usize) -> std::io::Result<()> {
    sockopt::set_int(
        s.as_fd(),
        libc::SOL_SOCKET,
        libc::SO_RCVLOWAT,
        i32::try_from(bytes).unwrap_or(i32::MAX),
    )
}

#[cfg(test)]
#[path = "wake_tests.rs"]
mod tests;
