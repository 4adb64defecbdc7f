//! The data phase of one test, shared by client and server: a worker thread
//! per stream, stopping and draining, and each stream's final figures.
//! Interval sampling is in [`sample`], the control-connection loop in [`drive`].

mod drive;
mod events;
mod sample;

use std::net::{Shutdown, TcpStream, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::bench::progress::Progress;

use super::control::Cookie;
use super::cpu::{CpuAccount, CpuUtil, ThreadCpu};
use super::error::NetError;
use super::figures::{
    Connected, IntervalReport, IntervalSample, IntervalText, LocalStream, Side, StartInfo, flip,
};
use super::params::{Protocol, TestParams};
use super::stream::{Role, RunFlags, StreamCounters, WorkerCtx, WorkerEnd};
use super::wake::LowWater;
use super::{tcp, udp};

pub(crate) use drive::DriveSpec;
use sample::{RttAcc, Snap};

/// A connected data socket.
pub(crate) enum DataSock {
    Tcp(TcpStream),
    Udp(UdpSocket),
}

/// A stream handed to the engine.
pub(crate) struct StreamSpec {
    pub(crate) id: u32,
    pub(crate) role: Role,
    pub(crate) sock: DataSock,
}

struct Tracked {
    id: u32,
    role: Role,
    sock: Arc<DataSock>,
    counters: Arc<StreamCounters>,
    handle: Option<JoinHandle<WorkerEnd>>,
    last: Snap,
    base: Snap,
    rtt: RttAcc,
    max_cwnd: u64,
    /// Server sender: bytes written but unacknowledged at TEST_END.
    unsent: u64,
}

/// Bytes a sending TCP stream wrote that the peer has not acknowledged.
fn unacked(t: &Tracked) -> u64 {
    match (&*t.sock, t.role) {
        (DataSock::Tcp(s), Role::Send) => tcp::unacked(s),
        _ => 0,
    }
}

/// The running data phase of a test.
pub(crate) struct Engine {
    params: TestParams,
    side: Side,
    flags: Arc<RunFlags>,
    streams: Vec<Tracked>,
    cpu: Arc<CpuAccount>,
    ctl_cpu: Option<ThreadCpu>,
    started: Instant,
    period_start: Instant,
    last_tick: Instant,
    omitting: bool,
    intervals: Vec<IntervalReport>,
    /// Every interval, each stream's figures (omitted ones included).
    samples: Vec<IntervalSample>,
    tick: Duration,
    /// How a sample reads as progress text; `None`: no interval progress.
    lines: Option<IntervalText>,
    /// How the test started, once [`Engine::announce`] told a sink that
    /// takes events: each interval is then told as an event too.
    announced: Option<StartInfo>,
    ended: Option<Instant>,
    ended_recv: Option<Instant>,
}

pub(super) const SAMPLE_EVERY: Duration = Duration::from_secs(1);

/// How often the drive loop looks at cancellation and failed streams between
/// interval ticks. TCP_INFO is read only at the ticks, as iperf3 does: the
/// read waits for the socket lock the sending thread holds (reading it ten
/// times a second put the client's main thread to sleep ~240 times a second,
/// now ~45).
pub(super) const WATCH_EVERY: Duration = Duration::from_millis(100);

impl Engine {
    /// Start one worker thread per stream; timing starts now.
    /// `end_signal` (server): the control connection, watched by senders.
    pub(crate) fn start(
        specs: Vec<StreamSpec>,
        params: &TestParams,
        side: Side,
        end_signal: Option<&TcpStream>,
    ) -> Result<Engine, NetError> {
        let end_signal = match end_signal {
            Some(c) => {
                Some(Arc::new(c.try_clone().map_err(|e| {
                    NetError::io("duplicating the control socket", e)
                })?))
            }
            None => None,
        };
        let ctl_cpu = ThreadCpu::start();
        let flags = Arc::new(RunFlags::new(params.num_bytes, params.block_count));
        let cpu = Arc::new(CpuAccount::default());
        let mut streams = Vec::with_capacity(specs.len());
        for spec in specs {
            let counters = Arc::new(StreamCounters::default());
            let sock = Arc::new(spec.sock);
            let ctx = WorkerCtx {
                flags: flags.clone(),
                counters: counters.clone(),
                cpu: cpu.clone(),
                len: params.len as usize,
                rate_bps: params.bandwidth_bps,
                recv_lowat: LowWater::of(params),
                udp_counters_64bit: params.udp_counters_64bit,
                skip_rx_copy: params.skip_rx_copy,
                zerocopy: params.zerocopy,
                gso_bf_size: params.gsro.gso_bf_size as usize,
                end_signal: (spec.role == Role::Send)
                    .then(|| end_signal.clone())
                    .flatten(),
            };
            let (wsock, role) = (sock.clone(), spec.role);
            let handle = std::thread::Builder::new()
                .name(format!("hlctl-net-{}", spec.id))
                .spawn(move || {
                    let t = ThreadCpu::start();
                    let end = match (&*wsock, role) {
                        (DataSock::Tcp(s), Role::Send) => tcp::send_loop(s, &ctx),
                        (DataSock::Tcp(s), Role::Recv) => tcp::recv_loop(s, &ctx),
                        (DataSock::Udp(s), Role::Send) => udp::send_loop(s, &ctx),
                        (DataSock::Udp(s), Role::Recv) => udp::recv_loop(s, &ctx),
                    };
                    t.finish(&ctx.cpu);
                    end
                });
            let handle = match handle {
                Ok(h) => h,
                Err(e) => {
                    let mut partial = Engine::assemble(params, side, flags, streams, cpu, ctl_cpu);
                    partial.stop_all();
                    return Err(NetError::io("starting a stream thread", e));
                }
            };
            streams.push(Tracked {
                id: spec.id,
                role: spec.role,
                sock,
                counters,
                handle: Some(handle),
                last: Snap::default(),
                base: Snap::default(),
                rtt: RttAcc::default(),
                max_cwnd: 0,
                unsent: 0,
            });
        }
        Ok(Engine::assemble(params, side, flags, streams, cpu, ctl_cpu))
    }

    fn assemble(
        params: &TestParams,
        side: Side,
        flags: Arc<RunFlags>,
        streams: Vec<Tracked>,
        cpu: Arc<CpuAccount>,
        ctl_cpu: ThreadCpu,
    ) -> Engine {
        let now = Instant::now();
        Engine {
            params: params.clone(),
            side,
            flags,
            streams,
            cpu,
            ctl_cpu: Some(ctl_cpu),
            started: now,
            period_start: now,
            last_tick: now,
            omitting: params.omit_s > 0,
            intervals: Vec::new(),
            samples: Vec::new(),
            tick: SAMPLE_EVERY,
            lines: None,
            announced: None,
            ended: None,
            ended_recv: None,
        }
    }

    fn tcp_sender(&self, role: Role) -> bool {
        self.params.protocol == Protocol::Tcp && role == Role::Send
    }

    fn has_role(&self, r: Role) -> bool {
        self.streams.iter().any(|t| t.role == r)
    }

    /// Bytes every stream has sent or received so far.
    fn moved_total(&self) -> u64 {
        self.streams
            .iter()
            .map(|t| t.counters.bytes.load(Ordering::Relaxed))
            .sum()
    }

    /// Client, at its deadline: senders stop (a write under way still
    /// counts), and we wait (at most 250 ms) until what they wrote has reached
    /// the server, so that its count can match ours. Receivers keep counting
    /// until [`Engine::finish_receiving`]. Emits the last interval.
    pub(crate) fn end_client(&mut self, progress: &dyn Progress) {
        let end = self.stop_senders();
        let limit = Instant::now() + Duration::from_millis(250);
        while self.streams.iter().map(unacked).sum::<u64>() > 0 && Instant::now() < limit {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.close_intervals(progress, end);
    }

    /// Client, once the server has answered TEST_END (it has stopped sending
    /// and closed its streams): count what is still queued, then stop.
    pub(crate) fn finish_receiving(&mut self) {
        self.flags.final_drain.store(true, Ordering::SeqCst);
        self.ended_recv = Some(Instant::now());
        self.join_receivers();
        self.refresh_last();
    }

    /// Server, at TEST_END: senders stop; receivers count what is already
    /// queued, then stop. With `subtract_unacked` (clients that stop counting
    /// at their deadline, like iperf3), bytes our senders wrote that the client
    /// has not acknowledged are not counted as sent. Emits the last interval.
    pub(crate) fn end_server(&mut self, progress: &dyn Progress, subtract_unacked: bool) {
        let end = self.stop_senders();
        self.ended_recv = Some(end);
        self.flags.final_drain.store(true, Ordering::SeqCst);
        self.join_receivers();
        if subtract_unacked {
            for t in &mut self.streams {
                t.unsent = unacked(t);
            }
        }
        self.close_intervals(progress, end);
    }

    /// Stop counting and sending; join the senders. Returns the end time.
    fn stop_senders(&mut self) -> Instant {
        self.flags.counting_send.store(false, Ordering::SeqCst);
        self.flags.stop_send.store(true, Ordering::SeqCst);
        let end = Instant::now();
        self.ended = Some(end);
        for t in &mut self.streams {
            if t.role == Role::Send
                && let Some(h) = t.handle.take()
            {
                let _ = h.join();
            }
        }
        end
    }

    fn join_receivers(&mut self) {
        for t in &mut self.streams {
            if t.role == Role::Recv
                && let Some(h) = t.handle.take()
            {
                let _ = h.join();
            }
        }
        self.flags.counting_recv.store(false, Ordering::SeqCst);
    }

    /// The last (partial) interval, then the final counter values.
    fn close_intervals(&mut self, progress: &dyn Progress, end: Instant) {
        let since = end.duration_since(self.last_tick);
        if since >= self.tick / 10 && since >= Duration::from_millis(5) || self.intervals.is_empty()
        {
            self.sample_until(progress, end);
        } else {
            // A sliver after the last tick: fold it into the last interval.
            let end_s = end.duration_since(self.period_start).as_secs_f64();
            if let Some(last) = self.intervals.last_mut() {
                last.end_s = end_s;
            }
            if let Some(last) = self.samples.last_mut() {
                last.end_s = end_s;
            }
        }
        self.refresh_last();
    }

    fn refresh_last(&mut self) {
        let tcp = self.params.protocol == Protocol::Tcp;
        for t in &mut self.streams {
            t.last = t.snap(tcp && t.role == Role::Send).0;
        }
    }

    /// Stop every worker (receivers included), unblock and join them.
    pub(crate) fn stop_all(&mut self) {
        self.flags.counting_send.store(false, Ordering::SeqCst);
        self.flags.counting_recv.store(false, Ordering::SeqCst);
        self.flags.stop_send.store(true, Ordering::SeqCst);
        self.flags.stop_recv.store(true, Ordering::SeqCst);
        for t in &self.streams {
            if let DataSock::Tcp(s) = &*t.sock {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
        for t in &mut self.streams {
            if let Some(h) = t.handle.take() {
                let _ = h.join();
            }
        }
    }

    /// CPU use of this test's threads since it started (call after `stop_all`).
    pub(crate) fn cpu_util(&mut self) -> CpuUtil {
        if let Some(t) = self.ctl_cpu.take() {
            t.finish(&self.cpu);
        }
        self.cpu.utilisation(self.started)
    }

    /// Congestion control algorithm of the first TCP stream.
    pub(crate) fn congestion(&self) -> Option<String> {
        self.streams.iter().find_map(|t| match &*t.sock {
            DataSock::Tcp(s) => tcp::congestion(s),
            DataSock::Udp(_) => None,
        })
    }

    /// Per-interval sums of the main direction (omitted intervals excluded).
    pub(crate) fn intervals(&self) -> &[IntervalReport] {
        &self.intervals
    }

    /// Every interval sample, each stream's figures (omitted ones included).
    pub(crate) fn samples(&self) -> &[IntervalSample] {
        &self.samples
    }

    /// Each data stream's socket: descriptor and both addresses.
    pub(crate) fn connected(&self) -> Vec<Connected> {
        use std::os::fd::AsRawFd;
        self.streams
            .iter()
            .filter_map(|t| {
                let (fd, local, remote) = match &*t.sock {
                    DataSock::Tcp(s) => (s.as_raw_fd(), s.local_addr(), s.peer_addr()),
                    DataSock::Udp(s) => (s.as_raw_fd(), s.local_addr(), s.peer_addr()),
                };
                let (local, remote) = (local.ok()?, remote.ok()?);
                Some(Connected {
                    id: t.id,
                    socket: fd,
                    local_host: plain_ip(local.ip()),
                    local_port: local.port(),
                    remote_host: plain_ip(remote.ip()),
                    remote_port: remote.port(),
                })
            })
            .collect()
    }

    /// How this test was set up (iperf3's `start`), less what only the
    /// client knows (the host it was asked to reach).
    /// `since_ms`: when the control connection was made (Unix ms).
    pub(crate) fn start_info(&self, ctrl: &TcpStream, cookie: &Cookie, since_ms: u64) -> StartInfo {
        let p = &self.params;
        let (sndbuf_actual, rcvbuf_actual) = self.buffers();
        let mss = socket2::SockRef::from(ctrl).tcp_mss().ok();
        StartInfo {
            connected: self.connected(),
            timesecs: since_ms / 1000,
            timemillisecs: since_ms,
            // The server's tick (iperf3's server default); a client sets its -i.
            interval_s: 1.0,
            cookie: cookie.text(),
            tcp_mss_default: mss.filter(|_| p.protocol == Protocol::Tcp),
            sock_bufsize: p.window.unwrap_or(0),
            fq_rate_bps: p.fq_rate_bps,
            sndbuf_actual,
            rcvbuf_actual,
            gso: self.any_udp(|s| super::gsro::segment_size(s).is_some()),
            gro: self.any_udp(super::gsro::gro_on),
            time_s: p.time_s,
            omit_s: p.omit_s,
            ..StartInfo::default()
        }
    }

    /// Whether `on` holds for a UDP stream's socket (GSO and GRO as the
    /// kernel took them: a kernel without them leaves them off).
    fn any_udp(&self, on: impl Fn(&UdpSocket) -> bool) -> bool {
        self.streams.iter().any(|t| match &*t.sock {
            DataSock::Udp(s) => on(s),
            DataSock::Tcp(_) => false,
        })
    }

    /// SO_SNDBUF and SO_RCVBUF of the last data stream (iperf3 shows those).
    fn buffers(&self) -> (u32, u32) {
        let Some(t) = self.streams.last() else {
            return (0, 0);
        };
        let sock = match &*t.sock {
            DataSock::Tcp(s) => socket2::SockRef::from(s),
            DataSock::Udp(s) => socket2::SockRef::from(s),
        };
        let size = |r: std::io::Result<usize>| r.map(|v| v as u32).unwrap_or(0);
        (size(sock.send_buffer_size()), size(sock.recv_buffer_size()))
    }

    /// Seconds counted (after omit) up to the end of the test.
    pub(crate) fn duration_s(&self) -> f64 {
        let end = self.ended.unwrap_or_else(Instant::now);
        end.saturating_duration_since(self.period_start)
            .as_secs_f64()
    }

    /// Seconds the receiving streams counted (they may go on past the deadline
    /// until the sender has stopped).
    fn recv_duration_s(&self) -> f64 {
        match self.ended_recv {
            Some(end) => end
                .saturating_duration_since(self.period_start)
                .as_secs_f64(),
            None => self.duration_s(),
        }
    }

    /// Each stream's final figures (after `end_client`/`finish_receiving` or `end_server`).
    pub(crate) fn local_streams(&self) -> Vec<LocalStream> {
        let (send_s, recv_s) = (self.duration_s(), self.recv_duration_s());
        let udp = self.params.protocol == Protocol::Udp;
        self.streams
            .iter()
            .map(|t| {
                let tcp_sender = self.tcp_sender(t.role);
                let end = t.last;
                let (b, recv) = (t.base, t.role == Role::Recv);
                LocalStream {
                    id: t.id,
                    role: t.role,
                    bytes: end.bytes.saturating_sub(b.bytes).saturating_sub(t.unsent),
                    duration_s: if recv { recv_s } else { send_s },
                    retransmits: tcp_sender.then(|| end.retrans.saturating_sub(b.retrans) as u64),
                    rtt: if tcp_sender { t.rtt.ms() } else { None },
                    max_snd_cwnd: (tcp_sender && t.max_cwnd > 0).then_some(t.max_cwnd),
                    packets: udp.then(|| {
                        if recv {
                            end.highest.saturating_sub(b.highest)
                        } else {
                            end.packets_sent.saturating_sub(b.packets_sent)
                        }
                    }),
                    lost: (udp && recv).then_some(end.lost - b.lost),
                    omitted_packets: udp.then_some(if recv { b.highest } else { b.packets_sent }),
                    omitted_lost: (udp && recv).then_some(b.lost),
                    out_of_order: (udp && recv).then_some(end.ooo.saturating_sub(b.ooo)),
                    jitter_s: (udp && recv).then(|| t.counters.jitter_s()),
                }
            })
            .collect()
    }
}

/// An address as iperf3 writes it: IPv4-mapped IPv6 as plain IPv4.
fn plain_ip(ip: std::net::IpAddr) -> String {
    match ip {
        std::net::IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => v6.to_string(),
        },
        v4 => v4.to_string(),
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.stop_all();
    }
}
