//! The data phase of one test, shared by client and server: worker threads per
//! stream, interval sampling (bytes, TCP_INFO, UDP accounting), the omit
//! period, stopping, and each stream's final figures.

use std::io::Read;
use std::net::{Shutdown, TcpStream, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::bench::progress::{Cancel, Progress, ProgressEvent};

use super::control::{self, State, is_reset, is_timeout};
use super::cpu::{CpuAccount, CpuUtil, ThreadCpu};
use super::error::NetError;
use super::params::{Direction, Protocol, TestParams};
use super::report::{IntervalReport, RttMs};
use super::stream::{Role, RunFlags, StreamCounters, WorkerCtx, WorkerEnd};
use super::{tcp, tcp_info, text, udp};

/// Which end of the test this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Client,
    Server,
}

impl Side {
    /// The local role of streams carrying data from client to server.
    pub fn role_client_to_server(self) -> Role {
        match self {
            Side::Client => Role::Send,
            Side::Server => Role::Recv,
        }
    }

    /// The local role of the test's main direction (forward for bidir).
    pub fn primary_role(self, d: Direction) -> Role {
        let c2s = self.role_client_to_server();
        match d {
            Direction::Forward | Direction::Bidir => c2s,
            Direction::Reverse => flip(c2s),
        }
    }
}

pub fn flip(r: Role) -> Role {
    match r {
        Role::Send => Role::Recv,
        Role::Recv => Role::Send,
    }
}

/// A connected data socket.
pub enum DataSock {
    Tcp(TcpStream),
    Udp(UdpSocket),
}

/// A stream handed to the engine.
pub struct StreamSpec {
    pub id: u32,
    pub role: Role,
    pub sock: DataSock,
}

/// One stream's figures over one interval.
#[derive(Clone, Debug)]
pub struct StreamInterval {
    pub id: u32,
    pub role: Role,
    pub bytes: u64,
    pub bps: f64,
    pub retransmits: Option<u64>,
    pub snd_cwnd: Option<u64>,
    /// UDP: datagrams in this interval (sent, or highest-seq advance when receiving).
    pub packets: Option<u64>,
    /// UDP receiver: lost in this interval.
    pub lost: Option<i64>,
    pub jitter_ms: Option<f64>,
}

/// All streams over one interval.
#[derive(Clone, Debug)]
pub struct IntervalSample {
    pub start_s: f64,
    pub end_s: f64,
    pub omitted: bool,
    pub streams: Vec<StreamInterval>,
}

/// RTT samples of a sending TCP stream (µs).
#[derive(Clone, Copy, Debug, Default)]
struct RttAcc {
    min: u32,
    max: u32,
    sum: u64,
    n: u64,
}

impl RttAcc {
    fn add(&mut self, v: u32) {
        if self.n == 0 || v < self.min {
            self.min = v;
        }
        self.max = self.max.max(v);
        self.sum += v as u64;
        self.n += 1;
    }
    fn ms(&self) -> Option<RttMs> {
        (self.n > 0).then(|| RttMs {
            min: self.min as f64 / 1000.0,
            mean: self.sum as f64 / self.n as f64 / 1000.0,
            max: self.max as f64 / 1000.0,
        })
    }
}

/// Counter values at a point in time (for intervals and the omit baseline).
#[derive(Clone, Copy, Debug, Default)]
struct Snap {
    bytes: u64,
    retrans: u32,
    packets_sent: u64,
    highest: u64,
    lost: i64,
    ooo: u64,
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

impl Tracked {
    fn snap(&self, tcp_sender: bool) -> (Snap, Option<tcp_info::TcpInfo>) {
        let c = &*self.counters;
        let info = match (&*self.sock, tcp_sender) {
            (DataSock::Tcp(s), true) => tcp_info::read(s).ok(),
            _ => None,
        };
        let snap = Snap {
            bytes: c.bytes.load(Ordering::Relaxed),
            retrans: info.map(|i| i.total_retrans).unwrap_or(self.last.retrans),
            packets_sent: c.packets_sent.load(Ordering::Relaxed),
            highest: c.rx_highest.load(Ordering::Relaxed),
            lost: c.rx_lost.load(Ordering::Relaxed),
            ooo: c.rx_out_of_order.load(Ordering::Relaxed),
        };
        (snap, info)
    }
}

/// Bytes a sending TCP stream wrote that the peer has not acknowledged.
fn unacked(t: &Tracked) -> u64 {
    match (&*t.sock, t.role) {
        (DataSock::Tcp(s), Role::Send) => tcp::unacked(s),
        _ => 0,
    }
}

/// A stream's final figures on this side (omit excluded).
#[derive(Clone, Debug)]
pub struct LocalStream {
    pub id: u32,
    pub role: Role,
    pub bytes: u64,
    pub duration_s: f64,
    pub retransmits: Option<u64>,
    pub rtt: Option<RttMs>,
    pub max_snd_cwnd: Option<u64>,
    /// UDP: datagrams sent, or the highest sequence number received.
    pub packets: Option<u64>,
    pub lost: Option<i64>,
    pub out_of_order: Option<u64>,
    pub jitter_s: Option<f64>,
}

/// How the driver waits for the end of the test.
pub struct DriveSpec {
    pub side: Side,
    pub tick: Option<Duration>,
    /// Server: drop the test if TEST_END has not come by then.
    pub safety: Option<Duration>,
    /// Server: drop the test if nothing arrives on the receiving streams for this long.
    pub stall: Option<Duration>,
}

/// The running data phase of a test.
pub struct Engine {
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
    tick: Duration,
    show: bool,
    ended: Option<Instant>,
    ended_recv: Option<Instant>,
}

const SAMPLE_EVERY: Duration = Duration::from_secs(1);

/// How often the RTT of sending TCP streams is sampled (between interval ticks too).
const RTT_POLL: Duration = Duration::from_millis(100);

impl Engine {
    /// Start one worker thread per stream; timing starts now.
    /// `end_signal` (server): the control connection, watched by senders.
    pub fn start(
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
                udp_counters_64bit: params.udp_counters_64bit,
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
            tick: SAMPLE_EVERY,
            show: true,
            ended: None,
            ended_recv: None,
        }
    }

    fn tcp_sender(&self, role: Role) -> bool {
        self.params.protocol == Protocol::Tcp && role == Role::Send
    }

    /// Add an RTT / cwnd sample of every sending TCP stream (not while omitting).
    fn poll_rtt(&mut self) {
        if self.omitting || self.params.protocol != Protocol::Tcp {
            return;
        }
        for t in self.streams.iter_mut().filter(|t| t.role == Role::Send) {
            if let DataSock::Tcp(s) = &*t.sock
                && let Ok(info) = tcp_info::read(s)
            {
                t.rtt.add(info.rtt_us);
                t.max_cwnd = t.max_cwnd.max(info.snd_cwnd_bytes);
            }
        }
    }

    /// Take one interval sample from `last_tick` to now and report it.
    fn sample(&mut self, progress: &dyn Progress) {
        self.sample_until(progress, Instant::now());
    }

    /// Take one interval sample from `last_tick` to `now` and report it.
    fn sample_until(&mut self, progress: &dyn Progress, now: Instant) {
        let dt = now.duration_since(self.last_tick).as_secs_f64();
        if dt <= 0.0 {
            return;
        }
        let omitted = self.omitting;
        let mut out = Vec::with_capacity(self.streams.len());
        let protocol = self.params.protocol;
        for i in 0..self.streams.len() {
            let tcp_sender = self.tcp_sender(self.streams[i].role);
            let t = &mut self.streams[i];
            let (snap, info) = t.snap(tcp_sender);
            let bytes = snap.bytes.saturating_sub(t.last.bytes);
            if let Some(info) = info
                && !omitted
            {
                t.rtt.add(info.rtt_us);
                t.max_cwnd = t.max_cwnd.max(info.snd_cwnd_bytes);
            }
            let udp = protocol == Protocol::Udp;
            out.push(StreamInterval {
                id: t.id,
                role: t.role,
                bytes,
                bps: bytes as f64 * 8.0 / dt,
                retransmits: info.map(|_| snap.retrans.saturating_sub(t.last.retrans) as u64),
                snd_cwnd: info.map(|i| i.snd_cwnd_bytes),
                packets: udp.then(|| match t.role {
                    Role::Send => snap.packets_sent.saturating_sub(t.last.packets_sent),
                    Role::Recv => snap.highest.saturating_sub(t.last.highest),
                }),
                lost: (udp && t.role == Role::Recv).then_some(snap.lost - t.last.lost),
                jitter_ms: (udp && t.role == Role::Recv).then(|| t.counters.jitter_s() * 1000.0),
            });
            t.last = snap;
        }
        let sample = IntervalSample {
            start_s: self
                .last_tick
                .duration_since(self.period_start)
                .as_secs_f64(),
            end_s: now.duration_since(self.period_start).as_secs_f64(),
            omitted,
            streams: out,
        };
        self.last_tick = now;
        if !omitted {
            self.intervals.push(self.interval_report(&sample));
        }
        if self.show {
            let total = (self.params.omit_s + self.params.time_s) as f64;
            let fraction = if total > 0.0 {
                self.started.elapsed().as_secs_f64() / total
            } else {
                0.0
            };
            progress.report(ProgressEvent {
                fraction: fraction.clamp(0.0, 1.0),
                message: text::interval_lines(&sample, self.side, self.params.direction),
            });
        }
    }

    /// Sum the main direction's streams of a sample into the report's interval.
    fn interval_report(&self, s: &IntervalSample) -> IntervalReport {
        let primary = self.side.primary_role(self.params.direction);
        let dt = s.end_s - s.start_s;
        let sum = |role: Role| -> (u64, Option<u64>) {
            let mut bytes = 0;
            let mut retr: Option<u64> = None;
            for st in s.streams.iter().filter(|st| st.role == role) {
                bytes += st.bytes;
                if let Some(r) = st.retransmits {
                    retr = Some(retr.unwrap_or(0) + r);
                }
            }
            (bytes, retr)
        };
        let (bytes, retransmits) = sum(primary);
        let reverse_bps = (self.params.direction == Direction::Bidir)
            .then(|| sum(flip(primary)).0 as f64 * 8.0 / dt);
        IntervalReport {
            start_s: s.start_s,
            end_s: s.end_s,
            bps: bytes as f64 * 8.0 / dt,
            retransmits,
            bytes,
            reverse_bps,
        }
    }

    /// The omit period is over: what was counted so far does not count.
    fn end_omit(&mut self, progress: &dyn Progress) {
        self.sample(progress);
        self.omitting = false;
        for t in &mut self.streams {
            t.base = t.last;
            t.rtt = RttAcc::default();
            t.max_cwnd = 0;
        }
        self.period_start = self.last_tick;
    }

    /// A stream that ended on its own while the test runs (client side check).
    fn early_failure(&mut self) -> Option<NetError> {
        for t in &mut self.streams {
            let stopped = match t.role {
                Role::Send => {
                    self.flags.stop_send.load(Ordering::Relaxed) || self.flags.limit_reached()
                }
                Role::Recv => self.flags.stop_recv.load(Ordering::Relaxed),
            };
            if stopped || !t.handle.as_ref().is_some_and(|h| h.is_finished()) {
                continue;
            }
            let end = t.handle.take().map(|h| h.join());
            let source = match end {
                Some(Ok(WorkerEnd::Failed(e))) => e,
                Some(Ok(WorkerEnd::PeerClosed)) => std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "the peer closed the stream before the end of the test",
                ),
                Some(Ok(WorkerEnd::Stopped)) | None => continue,
                Some(Err(_)) => std::io::Error::other("the stream's thread panicked"),
            };
            return Some(NetError::Stream {
                stream: t.id,
                source,
            });
        }
        None
    }

    /// Run until the end of the test: the client's timer (omit + time), or the
    /// server's TEST_END. Reports intervals on the way; watches the control
    /// connection for the peer's messages.
    pub fn drive(
        &mut self,
        ctrl: &TcpStream,
        spec: &DriveSpec,
        progress: &dyn Progress,
        cancel: &Cancel,
    ) -> Result<(), NetError> {
        self.show = spec.tick.is_some();
        self.tick = spec.tick.unwrap_or(SAMPLE_EVERY);
        let omit = Duration::from_secs(self.params.omit_s as u64);
        let run_for = omit + Duration::from_secs(self.params.time_s as u64);
        let deadline = (spec.side == Side::Client).then_some(self.started + run_for);
        let safety = spec.safety.map(|s| self.started + s);
        let mut last_rx = (self.received_total(), Instant::now());
        let omit_end = self.started + omit;
        let schedule = |e: &Engine| -> Instant {
            let t = e.last_tick + e.tick;
            if e.omitting { t.min(omit_end) } else { t }
        };
        let mut next_tick = schedule(self);
        let mut last_rtt_poll = Instant::now();
        loop {
            if cancel.is_cancelled() {
                return Err(NetError::Cancelled);
            }
            let now = Instant::now();
            if self.omitting && now >= omit_end {
                self.end_omit(progress);
                next_tick = schedule(self);
                continue;
            }
            if deadline.is_some_and(|d| now >= d) {
                return Ok(());
            }
            if now >= next_tick {
                match deadline {
                    // A tick in the last tenth of an interval: leave it to `end_test`.
                    Some(d) if next_tick + self.tick / 10 >= d => next_tick = d + self.tick,
                    _ => {
                        self.sample(progress);
                        next_tick = schedule(self);
                    }
                }
            }
            if now.duration_since(last_rtt_poll) >= RTT_POLL {
                self.poll_rtt();
                last_rtt_poll = now;
            }
            if spec.side == Side::Client {
                if let Some(e) = self.early_failure() {
                    return Err(e);
                }
            } else {
                if safety.is_some_and(|s| now >= s) {
                    return Err(NetError::Timeout {
                        what: "the client's TEST_END".into(),
                        after: now.duration_since(self.started),
                    });
                }
                if let Some(stall) = spec.stall {
                    let rx = self.received_total();
                    if rx != last_rx.0 {
                        last_rx = (rx, now);
                    } else if self.has_role(Role::Recv) && now.duration_since(last_rx.1) >= stall {
                        return Err(NetError::Timeout {
                            what: "data from the client".into(),
                            after: stall,
                        });
                    }
                }
            }
            let mut wake = next_tick.min(now + RTT_POLL);
            if let Some(d) = deadline {
                wake = wake.min(d);
            }
            if self.omitting {
                wake = wake.min(omit_end);
            }
            let wait = wake.saturating_duration_since(now);
            if !control::wait_readable(ctrl, wait) {
                continue;
            }
            ctrl.set_read_timeout(Some(Duration::from_millis(100)))
                .map_err(|e| NetError::io("waiting on the control connection", e))?;
            let mut b = [0u8; 1];
            match (&*ctrl).read(&mut b) {
                Ok(0) => {
                    return Err(NetError::ControlClosed {
                        during: "the test".into(),
                    });
                }
                Ok(_) => match spec.side {
                    Side::Client => {
                        control::check_peer_failure(
                            ctrl,
                            b[0],
                            Instant::now() + Duration::from_secs(5),
                        )?;
                        return Err(NetError::Protocol {
                            expected: "no control message while the test runs".into(),
                            received: control::describe_byte(b[0]),
                        });
                    }
                    Side::Server => {
                        return match State::from_byte(b[0]) {
                            Some(State::TestEnd) => Ok(()),
                            Some(State::ClientTerminate) => Err(NetError::ClientTerminated),
                            _ => Err(NetError::Protocol {
                                expected: State::TestEnd.describe(),
                                received: control::describe_byte(b[0]),
                            }),
                        };
                    }
                },
                Err(e) if is_timeout(&e) || e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if is_reset(&e) => {
                    return Err(NetError::ControlClosed {
                        during: "the test".into(),
                    });
                }
                Err(e) => return Err(NetError::io("waiting on the control connection", e)),
            }
        }
    }

    fn has_role(&self, r: Role) -> bool {
        self.streams.iter().any(|t| t.role == r)
    }

    fn received_total(&self) -> u64 {
        self.streams
            .iter()
            .filter(|t| t.role == Role::Recv)
            .map(|t| t.counters.bytes.load(Ordering::Relaxed))
            .sum()
    }

    /// Client, at its deadline: senders stop (a write under way still
    /// counts), and we wait (at most 250 ms) until what they wrote has reached
    /// the server, so that its count can match ours. Receivers keep counting
    /// until [`Engine::finish_receiving`]. Emits the last interval.
    pub fn end_client(&mut self, progress: &dyn Progress) {
        let end = self.stop_senders();
        let limit = Instant::now() + Duration::from_millis(250);
        while self.streams.iter().map(unacked).sum::<u64>() > 0 && Instant::now() < limit {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.close_intervals(progress, end);
    }

    /// Client, once the server has answered TEST_END (it has stopped sending
    /// and closed its streams): count what is still queued, then stop.
    pub fn finish_receiving(&mut self) {
        self.flags.final_drain.store(true, Ordering::SeqCst);
        self.ended_recv = Some(Instant::now());
        self.join_receivers();
        self.refresh_last();
    }

    /// Server, at TEST_END: senders stop; receivers count what is already
    /// queued, then stop. With `subtract_unacked` (clients that stop counting
    /// at their deadline, like iperf3), bytes our senders wrote that the client
    /// has not acknowledged are not counted as sent. Emits the last interval.
    pub fn end_server(&mut self, progress: &dyn Progress, subtract_unacked: bool) {
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
        } else if let Some(last) = self.intervals.last_mut() {
            // A sliver after the last tick: fold it into the last interval.
            last.end_s = end.duration_since(self.period_start).as_secs_f64();
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
    pub fn stop_all(&mut self) {
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
    pub fn cpu_util(&mut self) -> CpuUtil {
        if let Some(t) = self.ctl_cpu.take() {
            t.finish(&self.cpu);
        }
        self.cpu.utilisation(self.started)
    }

    /// Congestion control algorithm of the first TCP stream.
    pub fn congestion(&self) -> Option<String> {
        self.streams.iter().find_map(|t| match &*t.sock {
            DataSock::Tcp(s) => tcp::congestion(s),
            DataSock::Udp(_) => None,
        })
    }

    /// Per-interval sums of the main direction (omitted intervals excluded).
    pub fn intervals(&self) -> &[IntervalReport] {
        &self.intervals
    }

    /// Seconds counted (after omit) up to the end of the test.
    pub fn duration_s(&self) -> f64 {
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

    /// Each stream's final figures (after `end_test`).
    pub fn local_streams(&self) -> Vec<LocalStream> {
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
                    out_of_order: (udp && recv).then_some(end.ooo.saturating_sub(b.ooo)),
                    jitter_s: (udp && recv).then(|| t.counters.jitter_s()),
                }
            })
            .collect()
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.stop_all();
    }
}
