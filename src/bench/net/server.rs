//! The server: `hlctl serve`, compatible with `iperf3 -c`. One test at a
//! time; everyone else gets iperf3's busy answer. Every wait has a timeout and
//! nothing a client sends can make it panic.

use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use socket2::{Domain, Socket, Type};

use crate::bench::progress::{Cancel, Progress, ProgressEvent};

use super::control::{self, COOKIE_SIZE, Cookie, MAX_PARAMS_JSON, MAX_RESULTS_JSON, State};
use super::engine::{DataSock, DriveSpec, Engine, Side, StreamSpec};
use super::error::{self as e, NetError};
use super::params::{Direction, Protocol, TestParams};
use super::report::{self, BuildInput, NetReport};
use super::results::PeerResults;
use super::stream::{Role, stream_id};
use super::{tcp, text, udp};

/// Where and how to serve.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerConfig {
    /// Address to bind; `None` = all addresses (IPv6 and IPv4).
    pub bind: Option<IpAddr>,
    /// TCP port (and UDP port for UDP tests); 0 = pick a free one.
    pub port: u16,
    /// Serve one test, then return.
    pub one_off: bool,
    /// Return after this long without a test.
    pub idle_timeout: Option<Duration>,
    /// Limit for each step of a client's setup (cookie, parameters, streams, results).
    pub setup_timeout: Duration,
    /// Drop a test whose receiving streams get nothing for this long (iperf3's `--rcv-timeout`).
    pub stall_timeout: Duration,
}

impl ServerConfig {
    pub fn new(port: u16) -> ServerConfig {
        ServerConfig {
            bind: None,
            port,
            one_off: false,
            idle_timeout: None,
            setup_timeout: Duration::from_secs(10),
            stall_timeout: Duration::from_secs(120),
        }
    }
}

/// One finished (or failed) test.
#[derive(Debug)]
pub struct TestOutcome {
    pub peer: SocketAddr,
    pub result: Result<NetReport, NetError>,
}

/// Why `run` returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    OneOff,
    IdleTimeout,
    Cancelled,
}

/// What a server did before it stopped.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ServeSummary {
    pub tests_completed: u64,
    pub tests_failed: u64,
    /// Connections answered with ACCESS_DENIED while a test ran.
    pub busy_refusals: u64,
    pub stop_reason: StopReason,
}

/// A bound server; `run` serves until cancelled, idle, or (one-off) done.
pub struct Server {
    listener: TcpListener,
    addr: SocketAddr,
    cfg: ServerConfig,
}

const IDLE: u8 = 0;
const BUSY: u8 = 1;
const TAKING_TCP_STREAMS: u8 = 2;
/// The session is done with its client and only returning.
const DONE: u8 = 3;

struct Shared {
    phase: AtomicU8,
    streams: Mutex<Option<mpsc::Sender<TcpStream>>>,
    completed: AtomicU64,
    failed: AtomicU64,
}

fn bind_tcp(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    s.set_reuse_address(true)?;
    if addr.is_ipv6() && addr.ip().is_unspecified() {
        s.set_only_v6(false)?;
    }
    s.bind(&addr.into())?;
    s.listen(128)?;
    Ok(s.into())
}

impl Server {
    /// Bind the listening socket. With port 0 a port is chosen that is free
    /// for both TCP and UDP.
    pub fn bind(cfg: ServerConfig) -> Result<Server, NetError> {
        let ips: Vec<IpAddr> = match cfg.bind {
            Some(ip) => vec![ip],
            None => vec![
                IpAddr::V6(Ipv6Addr::UNSPECIFIED),
                IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            ],
        };
        let mut last = None;
        for ip in ips {
            let want = SocketAddr::new(ip, cfg.port);
            for _ in 0..20 {
                match bind_tcp(want) {
                    Ok(l) => {
                        let addr = l.local_addr().map_err(|e| NetError::Bind {
                            addr: want,
                            source: e,
                        })?;
                        if cfg.port == 0 && UdpSocket::bind(addr).is_err() {
                            continue; // UDP twin taken: try another port
                        }
                        return Ok(Server {
                            listener: l,
                            addr,
                            cfg,
                        });
                    }
                    Err(e) => {
                        last = Some(NetError::Bind {
                            addr: want,
                            source: e,
                        });
                        break;
                    }
                }
            }
        }
        Err(last.unwrap_or_else(|| NetError::InvalidConfig("no address to bind".into())))
    }

    /// The address the server listens on (with the actual port).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serve; progress messages are human-readable log lines (connections,
    /// iperf3-style interval lines, summaries).
    pub fn run(&self, progress: &dyn Progress, cancel: &Cancel) -> Result<ServeSummary, NetError> {
        self.run_with(progress, cancel, &|_| {})
    }

    /// Like `run`, and calls `on_test` after every test.
    pub fn run_with(
        &self,
        progress: &dyn Progress,
        cancel: &Cancel,
        on_test: &(dyn Fn(&TestOutcome) + Sync),
    ) -> Result<ServeSummary, NetError> {
        self.listener
            .set_nonblocking(true)
            .map_err(|e| NetError::io("setting up the listener", e))?;
        let shared = Shared {
            phase: AtomicU8::new(IDLE),
            streams: Mutex::new(None),
            completed: AtomicU64::new(0),
            failed: AtomicU64::new(0),
        };
        let mut busy_refusals = 0u64;
        let stop_reason = std::thread::scope(|scope| {
            let mut session: Option<std::thread::ScopedJoinHandle<'_, ()>> = None;
            let mut idle_since = Instant::now();
            loop {
                if cancel.is_cancelled() {
                    return StopReason::Cancelled;
                }
                // A session that is done (or about to be) frees the server; a
                // client arriving in that instant is served, not refused.
                let reap = |session: &mut Option<std::thread::ScopedJoinHandle<'_, ()>>| -> bool {
                    let done = session.as_ref().is_some_and(|h| {
                        h.is_finished() || shared.phase.load(Ordering::SeqCst) == DONE
                    });
                    if done && let Some(h) = session.take() {
                        let _ = h.join();
                        shared.phase.store(IDLE, Ordering::SeqCst);
                    }
                    done
                };
                if reap(&mut session) {
                    idle_since = Instant::now();
                    if self.cfg.one_off {
                        return StopReason::OneOff;
                    }
                }
                if session.is_none()
                    && self
                        .cfg
                        .idle_timeout
                        .is_some_and(|t| idle_since.elapsed() >= t)
                {
                    return StopReason::IdleTimeout;
                }
                control::wait_readable(&self.listener, Duration::from_millis(100));
                loop {
                    let (conn, peer) = match self.listener.accept() {
                        Ok(c) => c,
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(e) => {
                            // Out of descriptors or similar: back off, keep serving.
                            say(progress, format!("accept failed: {e}"));
                            std::thread::sleep(Duration::from_millis(50));
                            break;
                        }
                    };
                    let _ = conn.set_nonblocking(false);
                    if reap(&mut session) && self.cfg.one_off {
                        return StopReason::OneOff;
                    }
                    if session.is_none() {
                        shared.phase.store(BUSY, Ordering::SeqCst);
                        let (shared, cfg, addr) = (&shared, &self.cfg, self.addr);
                        session = Some(scope.spawn(move || {
                            let result =
                                serve_test(conn, peer, addr, cfg, shared, progress, cancel);
                            *shared.streams.lock().unwrap_or_else(|p| p.into_inner()) = None;
                            // Done with the client: the next one is served as soon as
                            // the lines and the callback below return.
                            shared.phase.store(DONE, Ordering::SeqCst);
                            match &result {
                                Ok(r) => {
                                    shared.completed.fetch_add(1, Ordering::Relaxed);
                                    say(progress, text::summary(r));
                                }
                                Err(err) => {
                                    shared.failed.fetch_add(1, Ordering::Relaxed);
                                    say(progress, format!("test from {peer} failed: {err}"));
                                }
                            }
                            on_test(&TestOutcome { peer, result });
                        }));
                        continue;
                    }
                    if shared.phase.load(Ordering::SeqCst) == TAKING_TCP_STREAMS {
                        let tx = shared
                            .streams
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .clone();
                        if let Some(tx) = tx {
                            match tx.send(conn) {
                                Ok(()) => continue,
                                Err(mpsc::SendError(conn)) => refuse(conn),
                            }
                        } else {
                            refuse(conn);
                        }
                    } else {
                        refuse(conn);
                    }
                    busy_refusals += 1;
                    say(
                        progress,
                        format!("refused {peer}: a test is running (sent ACCESS_DENIED)"),
                    );
                }
            }
        });
        Ok(ServeSummary {
            tests_completed: shared.completed.load(Ordering::Relaxed),
            tests_failed: shared.failed.load(Ordering::Relaxed),
            busy_refusals,
            stop_reason,
        })
    }
}

fn say(progress: &dyn Progress, message: String) {
    progress.report(ProgressEvent {
        fraction: 0.0,
        message,
    });
}

/// Answer ACCESS_DENIED and close gently (FIN rather than RST where possible).
fn refuse(conn: TcpStream) {
    let _ = conn.set_write_timeout(Some(Duration::from_millis(500)));
    let _ = (&conn).write_all_byte(State::AccessDenied.byte());
    let _ = conn.shutdown(std::net::Shutdown::Write);
    let _ = conn.set_nonblocking(true);
    let mut sink = [0u8; 512];
    for _ in 0..16 {
        match (&conn).read(&mut sink) {
            Ok(n) if n > 0 => {}
            _ => break,
        }
    }
}

trait WriteByte {
    fn write_all_byte(self, b: u8) -> std::io::Result<()>;
}

impl WriteByte for &TcpStream {
    fn write_all_byte(mut self, b: u8) -> std::io::Result<()> {
        std::io::Write::write_all(&mut self, &[b])
    }
}

/// True if the peer has closed (or reset) the control connection.
fn peer_gone(ctrl: &TcpStream) -> bool {
    if ctrl.set_nonblocking(true).is_err() {
        return true;
    }
    let mut b = [0u8; 1];
    let gone = match ctrl.peek(&mut b) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !control::is_timeout(&e),
    };
    let _ = ctrl.set_nonblocking(false);
    gone
}

/// The role of the `i`-th stream the server accepts.
fn server_role(d: Direction, i: usize, parallel: usize) -> Role {
    match d {
        Direction::Forward => Role::Recv,
        Direction::Reverse => Role::Send,
        Direction::Bidir if i < parallel => Role::Recv,
        Direction::Bidir => Role::Send,
    }
}

/// Run one test with the client on `ctrl`.
fn serve_test(
    ctrl: TcpStream,
    peer: SocketAddr,
    addr: SocketAddr,
    cfg: &ServerConfig,
    shared: &Shared,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<NetReport, NetError> {
    let result = serve_steps(&ctrl, peer, addr, cfg, shared, progress, cancel);
    match &result {
        Err(NetError::Cancelled) => {
            let _ = control::write_state(&ctrl, State::ServerTerminate, Duration::from_secs(1));
        }
        Err(
            err @ (NetError::BadParams { .. }
            | NetError::BadLength { .. }
            | NetError::BadJson { .. }),
        ) => {
            let _ = control::write_server_error(&ctrl, err.i_errno(), 0, Duration::from_secs(1));
        }
        _ => {}
    }
    result
}

fn serve_steps(
    ctrl: &TcpStream,
    peer: SocketAddr,
    addr: SocketAddr,
    cfg: &ServerConfig,
    shared: &Shared,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<NetReport, NetError> {
    let t = cfg.setup_timeout;
    let by = || Instant::now() + t;
    ctrl.set_nodelay(true)
        .map_err(|e| NetError::io("setting TCP_NODELAY", e))?;
    let mut raw = [0u8; COOKIE_SIZE];
    control::read_exact_by(ctrl, &mut raw, by(), "the client's cookie")?;
    let cookie = Cookie::from_bytes(raw);
    control::write_state(ctrl, State::ParamExchange, t)?;
    let params = control::read_json(ctrl, MAX_PARAMS_JSON, by(), "parameter block")?;
    let params = TestParams::from_json(&params)?;
    say(
        progress,
        format!(
            "Accepted connection from {peer}: {:?} {:?}, {} stream(s), {} s",
            params.protocol, params.direction, params.parallel, params.time_s
        ),
    );
    let total = params.total_streams() as usize;
    let parallel = params.parallel as usize;
    let mut specs = Vec::with_capacity(total);
    match params.protocol {
        Protocol::Tcp => {
            let (tx, rx) = mpsc::channel();
            *shared.streams.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx);
            shared.phase.store(TAKING_TCP_STREAMS, Ordering::SeqCst);
            let taken = control::write_state(ctrl, State::CreateStreams, t).and_then(|()| {
                take_tcp_streams(ctrl, &rx, &cookie, &params, by(), progress, cancel)
            });
            shared.phase.store(BUSY, Ordering::SeqCst);
            *shared.streams.lock().unwrap_or_else(|p| p.into_inner()) = None;
            for (i, s) in taken?.into_iter().enumerate() {
                let role = server_role(params.direction, i, parallel);
                specs.push(StreamSpec {
                    id: stream_id(i),
                    role,
                    sock: DataSock::Tcp(s),
                });
            }
        }
        Protocol::Udp => {
            let mut listener = match udp::listen(addr) {
                Ok(l) => l,
                Err(err) => {
                    let errno = err.raw_os_error().unwrap_or(0);
                    let _ = control::write_server_error(ctrl, e::IESTREAMLISTEN, errno, t);
                    return Err(NetError::io(format!("binding UDP {addr}"), err));
                }
            };
            control::write_state(ctrl, State::CreateStreams, t)?;
            let deadline = by();
            for i in 0..total {
                if cancel.is_cancelled() {
                    return Err(NetError::Cancelled);
                }
                let s = udp::accept(&mut listener, addr, &params, deadline, stream_id(i))?;
                let role = server_role(params.direction, i, parallel);
                specs.push(StreamSpec {
                    id: stream_id(i),
                    role,
                    sock: DataSock::Udp(s),
                });
            }
        }
    }
    control::write_state(ctrl, State::TestStart, t)?;
    control::write_state(ctrl, State::TestRunning, t)?;
    let local_sends = specs.iter().any(|s| s.role == Role::Send);
    say(progress, text::header(params.protocol, local_sends));
    let mut engine = Engine::start(specs, &params, Side::Server, Some(ctrl))?;
    let run_for = Duration::from_secs((params.time_s + params.omit_s) as u64);
    let spec = DriveSpec {
        side: Side::Server,
        tick: Some(Duration::from_secs(1)),
        // iperf3's server timer: duration + omit + 40 s grace.
        safety: Some(if params.time_s > 0 {
            run_for + Duration::from_secs(40)
        } else {
            Duration::from_secs(3600)
        }),
        stall: Some(cfg.stall_timeout),
    };
    engine.drive(ctrl, &spec, progress, cancel)?;
    // hlctl clients count until our streams close; iperf3 stops at its deadline.
    engine.end_server(progress, params.hlctl_version.is_none());
    engine.stop_all();
    let cpu = engine.cpu_util();
    let local = engine.local_streams();
    let congestion = engine.congestion();
    control::write_state(ctrl, State::ExchangeResults, t)?;
    let theirs = control::read_json(ctrl, MAX_RESULTS_JSON, by(), "results from the client")?;
    let theirs = PeerResults::from_json(&theirs)?;
    let mine = report::local_results(&local, params.protocol, cpu, congestion.clone());
    control::write_json(ctrl, &mine.to_json(), t, "our results")?;
    control::write_state(ctrl, State::DisplayResults, t)?;
    // The client's IPERF_DONE, or its close; either way we are done.
    let mut done = [0u8; 1];
    let _ = control::read_exact_by(
        ctrl,
        &mut done,
        Instant::now() + Duration::from_secs(2),
        "IPERF_DONE",
    );
    report::build(BuildInput {
        side: Side::Server,
        params: &params,
        peer: peer.to_string(),
        local: &local,
        remote: &theirs,
        cpu,
        intervals: engine.intervals().to_vec(),
        duration_s: engine.duration_s(),
        congestion,
    })
}

/// Take the client's TCP data streams from the accept loop, checking cookies.
fn take_tcp_streams(
    ctrl: &TcpStream,
    rx: &mpsc::Receiver<TcpStream>,
    cookie: &Cookie,
    params: &TestParams,
    deadline: Instant,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Vec<TcpStream>, NetError> {
    let total = params.total_streams() as usize;
    let started = Instant::now();
    let mut streams = Vec::with_capacity(total);
    while streams.len() < total {
        if cancel.is_cancelled() {
            return Err(NetError::Cancelled);
        }
        if Instant::now() >= deadline {
            return Err(NetError::Timeout {
                what: format!(
                    "the client's data streams ({} of {total} connected)",
                    streams.len()
                ),
                after: started.elapsed(),
            });
        }
        let s = match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(s) => s,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if peer_gone(ctrl) {
                    return Err(NetError::ControlClosed {
                        during: "stream setup".into(),
                    });
                }
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(NetError::ControlClosed {
                    during: "stream setup".into(),
                });
            }
        };
        let mut raw = [0u8; COOKIE_SIZE];
        let who = s.peer_addr().map(|a| a.to_string()).unwrap_or_default();
        let read = control::read_exact_by(
            &s,
            &mut raw,
            (Instant::now() + Duration::from_secs(2)).min(deadline),
            "a data stream's cookie",
        );
        match read {
            Ok(()) if Cookie::from_bytes(raw).matches(cookie) => {
                tcp::configure_accepted(&s, params).map_err(|e| NetError::Stream {
                    stream: stream_id(streams.len()),
                    source: e,
                })?;
                streams.push(s);
            }
            Ok(()) => {
                refuse(s);
                say(
                    progress,
                    format!("refused a data stream from {who}: wrong cookie (sent ACCESS_DENIED)"),
                );
            }
            Err(err) => say(progress, format!("dropped a data stream from {who}: {err}")),
        }
    }
    Ok(streams)
}
