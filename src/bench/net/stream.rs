//! What a data-stream worker thread shares with the thread that drives the
//! test: stop flags, counters, pacing, and the send buffer.

use std::io;
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::cpu::CpuAccount;
use super::wake::LowWater;
use crate::bench::buffer::AlignedBuf;

/// What this side does on a stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Role {
    #[default]
    Send,
    Recv,
}

/// The stream id iperf3 gives the `index`-th stream: 1, 3, 4, 5, …
pub(crate) fn stream_id(index: usize) -> u32 {
    if index == 0 { 1 } else { index as u32 + 2 }
}

/// Flags every worker of one test watches.
#[derive(Debug)]
pub(crate) struct RunFlags {
    /// Senders stop after their current write.
    pub(crate) stop_send: AtomicBool,
    /// Receivers stop reading.
    pub(crate) stop_recv: AtomicBool,
    /// Sent bytes count only while this is set (iperf3's TEST_RUNNING).
    pub(crate) counting_send: AtomicBool,
    /// Received bytes count only while this is set.
    pub(crate) counting_recv: AtomicBool,
    /// Server at TEST_END: receivers count what is already queued, then stop.
    pub(crate) final_drain: AtomicBool,
    /// Bytes and blocks written by all senders (for `-n` / `-k`).
    pub(crate) total_sent: AtomicU64,
    pub(crate) blocks_sent: AtomicU64,
    /// 0 = no limit.
    pub(crate) byte_limit: u64,
    pub(crate) block_limit: u64,
}

impl RunFlags {
    pub(crate) fn new(byte_limit: u64, block_limit: u64) -> Self {
        RunFlags {
            stop_send: AtomicBool::new(false),
            stop_recv: AtomicBool::new(false),
            counting_send: AtomicBool::new(true),
            counting_recv: AtomicBool::new(true),
            final_drain: AtomicBool::new(false),
            total_sent: AtomicU64::new(0),
            blocks_sent: AtomicU64::new(0),
            byte_limit,
            block_limit,
        }
    }

    /// True once a `-n`/`-k` limit has been reached.
    pub(crate) fn limit_reached(&self) -> bool {
        (self.byte_limit > 0 && self.total_sent.load(Ordering::Relaxed) >= self.byte_limit)
            || (self.block_limit > 0
                && self.blocks_sent.load(Ordering::Relaxed) >= self.block_limit)
    }
}

/// Counters one worker publishes (single writer, read by the driver).
#[derive(Debug, Default)]
pub(crate) struct StreamCounters {
    /// Bytes counted (sent or received) while counting.
    pub(crate) bytes: AtomicU64,
    /// UDP sender: datagrams sent while counting.
    pub(crate) packets_sent: AtomicU64,
    /// UDP receiver: highest sequence number seen.
    pub(crate) rx_highest: AtomicU64,
    /// UDP receiver: lost datagrams.
    pub(crate) rx_lost: AtomicI64,
    /// UDP receiver: out-of-order datagrams.
    pub(crate) rx_out_of_order: AtomicU64,
    /// UDP receiver: jitter in seconds (f64 bits).
    pub(crate) rx_jitter_bits: AtomicU64,
}

impl StreamCounters {
    pub(crate) fn jitter_s(&self) -> f64 {
        f64::from_bits(self.rx_jitter_bits.load(Ordering::Relaxed))
    }
}

/// How a worker ended.
#[derive(Debug)]
pub(crate) enum WorkerEnd {
    /// Told to stop (or a byte/block limit was reached).
    Stopped,
    /// The peer closed the stream.
    PeerClosed,
    Failed(io::Error),
}

/// Everything a worker needs besides its socket.
#[derive(Clone)]
pub(crate) struct WorkerCtx {
    pub(crate) flags: Arc<RunFlags>,
    pub(crate) counters: Arc<StreamCounters>,
    pub(crate) cpu: Arc<CpuAccount>,
    /// Block (TCP write size / UDP datagram size).
    pub(crate) len: usize,
    /// Target rate of this stream in bit/s; 0 = as fast as possible.
    pub(crate) rate_bps: u64,
    /// TCP receivers: the queued bytes that wake a read ([`super::wake`]).
    pub(crate) recv_lowat: LowWater,
    pub(crate) udp_counters_64bit: bool,
    /// TCP receivers: discard what arrives without copying it (MSG_TRUNC,
    /// iperf3 3.19's `--skip-rx-copy`).
    pub(crate) skip_rx_copy: bool,
    /// TCP senders: send with sendfile(2) from a file (iperf3's `-Z`).
    pub(crate) zerocopy: bool,
    /// UDP senders with GSO on their socket: bytes of one send (3.21's
    /// `gso_bf_size`; whole datagrams of the socket's segment size).
    pub(crate) gso_bf_size: usize,
    /// Server senders: the control connection (a duplicate descriptor). A
    /// byte waiting there means the client has ended the test, so counting
    /// stops at once, as in iperf3 where the sending loop also reads control.
    pub(crate) end_signal: Option<Arc<TcpStream>>,
}

impl WorkerCtx {
    /// Stop counting if the peer has sent anything on the control connection.
    /// Looks every `WATCH_EVERY` blocks (`n` counts blocks) to keep it cheap.
    #[inline]
    pub(crate) fn watch_end(&self, n: u64) {
        if !n.is_multiple_of(WATCH_EVERY) {
            return;
        }
        if let Some(c) = &self.end_signal {
            let mut b = [0u8; 1];
            // SAFETY: a 1-byte buffer valid for the call; MSG_PEEK leaves the byte queued.
            let n = unsafe {
                libc::recv(
                    c.as_raw_fd(),
                    b.as_mut_ptr().cast(),
                    1,
                    libc::MSG_PEEK | libc::MSG_DONTWAIT,
                )
            };
            if n >= 0 {
                // A pending byte (n = 1) or the peer's close (n = 0): stop at
                // once, so that what was counted is exactly what was written.
                self.flags.counting_send.store(false, Ordering::Relaxed);
                self.flags.stop_send.store(true, Ordering::Relaxed);
            }
        }
    }
}

/// How long a receiver may drain its queue after TEST_END.
pub(crate) const FINAL_DRAIN: Duration = Duration::from_millis(200);

/// A receiver's stop rule, shared by TCP and UDP: stop when told to; once the
/// final drain begins, switch the socket to non-blocking and keep reading
/// what is queued for at most [`FINAL_DRAIN`]. `Some(end)` means: return it.
pub(crate) struct RecvStop {
    drain_until: Option<Instant>,
}

impl RecvStop {
    pub(crate) fn new() -> Self {
        Self { drain_until: None }
    }

    /// Check before each read; `set_nonblocking` is called once when the drain starts.
    pub(crate) fn check(
        &mut self,
        flags: &RunFlags,
        set_nonblocking: impl FnOnce() -> io::Result<()>,
    ) -> Option<WorkerEnd> {
        if flags.stop_recv.load(Ordering::Relaxed) {
            return Some(WorkerEnd::Stopped);
        }
        if flags.final_drain.load(Ordering::Relaxed) {
            match self.drain_until {
                None => {
                    if let Err(e) = set_nonblocking() {
                        return Some(WorkerEnd::Failed(e));
                    }
                    self.drain_until = Some(Instant::now() + FINAL_DRAIN);
                }
                Some(t) if Instant::now() >= t => return Some(WorkerEnd::Stopped),
                Some(_) => {}
            }
        }
        None
    }
}

impl RecvStop {
    /// True once the final drain has begun (the socket is then non-blocking).
    pub(crate) fn draining(&self) -> bool {
        self.drain_until.is_some()
    }
}

impl Default for RecvStop {
    fn default() -> Self {
        Self::new()
    }
}

/// Blocks between two looks at the control connection (1 MiB of 128 KiB TCP blocks).
const WATCH_EVERY: u64 = 8;

/// Paces a sender to `rate_bps`: a block may go out once
/// `elapsed ≥ bytes_sent · 8 / rate` (iperf3's rule, checked per block).
pub(crate) struct Pacer {
    start: Instant,
    rate_bps: u64,
    sent: u64,
}

impl Pacer {
    pub(crate) fn new(rate_bps: u64) -> Self {
        if rate_bps > 0 {
            // Sleep with microsecond precision rather than the default 50 µs slack.
            // SAFETY: prctl(PR_SET_TIMERSLACK) only changes this thread's timer slack.
            unsafe {
                libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong);
            }
        }
        Pacer {
            start: Instant::now(),
            rate_bps,
            sent: 0,
        }
    }

    pub(crate) fn sent(&mut self, bytes: usize) {
        self.sent += bytes as u64;
    }

    /// How long to wait before the next block may be sent.
    pub(crate) fn delay(&self) -> Option<Duration> {
        if self.rate_bps == 0 {
            return None;
        }
        let due_ns = self.sent as u128 * 8 * 1_000_000_000 / self.rate_bps as u128;
        let elapsed_ns = self.start.elapsed().as_nanos();
        (due_ns > elapsed_ns)
            .then(|| Duration::from_nanos((due_ns - elapsed_ns).min(u64::MAX as u128) as u64))
    }

    /// Sleep until the next block is due, waking at least every 50 ms to look
    /// at `stop`. Returns false if `stop` was set.
    pub(crate) fn wait(&self, stop: &AtomicBool) -> bool {
        while let Some(d) = self.delay() {
            if stop.load(Ordering::Relaxed) {
                return false;
            }
            std::thread::sleep(d.min(Duration::from_millis(50)));
        }
        !stop.load(Ordering::Relaxed)
    }
}

/// A send buffer filled once with pseudo-random bytes (the payload is never
/// checked), page-aligned like iperf3's mmap'ed stream buffer.
pub(crate) fn send_buffer(len: usize) -> io::Result<AlignedBuf> {
    let mut buf = AlignedBuf::new(len)?;
    buf.fill_random(0x9E37_79B9_7F4A_7C15 ^ (len as u64));
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_iperf3() {
        let ids: Vec<u32> = (0..5).map(stream_id).collect();
        assert_eq!(ids, vec![1, 3, 4, 5, 6]);
    }

    #[test]
    fn pacer_schedule() {
        let mut p = Pacer::new(8); // 1 byte/s
        assert!(p.delay().is_none());
        p.sent(1_000_000); // a million seconds' worth
        let d = p.delay().unwrap();
        assert!(
            d > Duration::from_secs(999_000) && d <= Duration::from_secs(1_000_000),
            "{d:?}"
        );
        let unlimited = Pacer::new(0);
        assert!(unlimited.delay().is_none());
    }

    #[test]
    fn limits() {
        let f = RunFlags::new(100, 0);
        assert!(!f.limit_reached());
        f.total_sent.store(100, Ordering::Relaxed);
        assert!(f.limit_reached());
        let g = RunFlags::new(0, 2);
        g.blocks_sent.store(2, Ordering::Relaxed);
        assert!(g.limit_reached());
    }
}
