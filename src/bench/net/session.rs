//! One test on the server side: cookie, parameters, streams (TCP cookies or
//! the UDP handshake), the data phase, and the results exchange.

use std::cell::Cell;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::bench::progress::{Cancel, Progress};

use super::control::{self, COOKIE_SIZE, Cookie, MAX_PARAMS_JSON, MAX_RESULTS_JSON, State};
use super::engine::{DataSock, DriveSpec, Engine, StreamSpec};
use super::error::{self as e, NetError};
use super::figures::Side;
use super::params::{Protocol, TestDirection, TestParams};
use super::results::PeerResults;
use super::serving::{BUSY, ServerConfig, Shared, TAKING_TCP_STREAMS, say};
use super::stream::{Role, stream_id};
use super::summary::{self, BuildInput, NetReport};
use super::{tcp, text, udp};

/// Answer ACCESS_DENIED and close gently (FIN rather than RST where possible).
pub(super) fn refuse(conn: TcpStream) {
    let _ = conn.set_write_timeout(Some(Duration::from_millis(500)));
    let _ = (&conn).write_all(&[State::AccessDenied.byte()]);
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
fn server_role(d: TestDirection, i: usize, parallel: usize) -> Role {
    match d {
        TestDirection::Forward => Role::Recv,
        TestDirection::Reverse => Role::Send,
        TestDirection::Bidir if i < parallel => Role::Recv,
        TestDirection::Bidir => Role::Send,
    }
}

/// Run one test with the client on `ctrl`.
/// What a session borrows from the server.
#[derive(Clone, Copy)]
pub(super) struct Ctx<'a> {
    /// The server's listening address (UDP streams use the same port).
    pub(crate) addr: SocketAddr,
    pub(crate) cfg: &'a ServerConfig,
    pub(crate) shared: &'a Shared,
    pub(crate) progress: &'a dyn Progress,
    pub(crate) cancel: &'a Cancel,
}

pub(super) fn serve_test(
    ctrl: &TcpStream,
    peer: SocketAddr,
    ctx: &Ctx<'_>,
) -> Result<NetReport, NetError> {
    let told = Cell::new(false);
    let result = serve_steps(ctrl, peer, ctx, &told);
    match &result {
        Err(NetError::Cancelled) if !told.get() => {
            let _ = control::write_state(ctrl, State::ServerTerminate, Duration::from_secs(1));
        }
        Err(
            err @ (NetError::BadParams { .. }
            | NetError::BadLength { .. }
            | NetError::BadJson { .. }
            | NetError::ServerLimit { .. }
            | NetError::AuthRefused(_)),
        ) => {
            let _ = control::write_server_error(ctrl, err.i_errno(), 0, Duration::from_secs(1));
        }
        _ => {}
    }
    result
}

fn serve_steps(
    ctrl: &TcpStream,
    peer: SocketAddr,
    ctx: &Ctx<'_>,
    told: &Cell<bool>,
) -> Result<NetReport, NetError> {
    let steps = Steps {
        ctrl,
        ctx,
        t: ctx.cfg.setup_timeout,
    };
    let since = crate::host::now_unix_ms();
    let (cookie, params) = steps.parameters(peer)?;
    let specs = match params.protocol {
        Protocol::Tcp => steps.tcp_streams(&cookie, &params)?,
        Protocol::Udp => steps.udp_streams(&params)?,
    };
    let mut engine = steps.run_test(specs, &params, told)?;
    let start = engine.start_info(ctrl, &cookie, since);
    steps.exchange_results(&mut engine, &params, peer, start)
}

/// One test's control connection and the limit for each setup step.
struct Steps<'a> {
    ctrl: &'a TcpStream,
    ctx: &'a Ctx<'a>,
    /// The server's setup timeout.
    t: Duration,
}

impl Steps<'_> {
    /// The deadline of a setup step that starts now.
    fn by(&self) -> Instant {
        Instant::now() + self.t
    }

    /// The client's cookie and its test parameters.
    fn parameters(&self, peer: SocketAddr) -> Result<(Cookie, TestParams), NetError> {
        let ctrl = self.ctrl;
        ctrl.set_nodelay(true)
            .map_err(|e| NetError::io("setting TCP_NODELAY", e))?;
        let mut raw = [0u8; COOKIE_SIZE];
        control::read_exact_by(ctrl, &mut raw, self.by(), "the client's cookie")?;
        let cookie = Cookie::from_bytes(raw);
        control::write_state(ctrl, State::ParamExchange, self.t)?;
        let params = control::read_json(ctrl, MAX_PARAMS_JSON, self.by(), "parameter block")?;
        let params = TestParams::from_json(&params)?;
        self.authorize(&params)?;
        super::limits::check(self.ctx.cfg, &params)?;
        say(
            self.ctx.progress,
            format!(
                "Accepted connection from {peer}: {:?} {:?}, {} stream(s), {} s",
                params.protocol, params.direction, params.parallel, params.time_s
            ),
        );
        Ok((cookie, params))
    }

    /// With authentication on, the client's credentials (iperf3 checks them
    /// right after the parameters, before its limits).
    fn authorize(&self, params: &TestParams) -> Result<(), NetError> {
        if let Some(auth) = &self.ctx.cfg.auth {
            let now = crate::host::now_unix();
            let user = auth.check(params.authtoken.as_deref(), now)?;
            say(
                self.ctx.progress,
                format!("Authentication succeeded for user '{user}'"),
            );
        }
        Ok(())
    }

    /// The TCP data streams, handed over by the accept loop.
    fn tcp_streams(
        &self,
        cookie: &Cookie,
        params: &TestParams,
    ) -> Result<Vec<StreamSpec>, NetError> {
        let Ctx {
            shared,
            progress,
            cancel,
            ..
        } = *self.ctx;
        let parallel = params.parallel as usize;
        let mut specs = Vec::with_capacity(params.total_streams() as usize);
        let (tx, rx) = mpsc::channel();
        *shared.streams.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx);
        shared.phase.store(TAKING_TCP_STREAMS, Ordering::SeqCst);
        let taken = control::write_state(self.ctrl, State::CreateStreams, self.t).and_then(|()| {
            take_tcp_streams(self.ctrl, &rx, cookie, params, self.by(), progress, cancel)
        });
        shared.phase.store(BUSY, Ordering::SeqCst);
        *shared.streams.lock().unwrap_or_else(|p| p.into_inner()) = None;
        refuse_queued(&rx, shared, progress);
        for (i, s) in taken?.into_iter().enumerate() {
            let role = server_role(params.direction, i, parallel);
            specs.push(StreamSpec {
                id: stream_id(i),
                role,
                sock: DataSock::Tcp(s),
            });
        }
        Ok(specs)
    }

    /// The UDP data streams, each from its handshake on the server's port.
    fn udp_streams(&self, params: &TestParams) -> Result<Vec<StreamSpec>, NetError> {
        let (ctrl, addr, t) = (self.ctrl, self.ctx.addr, self.t);
        let total = params.total_streams() as usize;
        let parallel = params.parallel as usize;
        let mut specs = Vec::with_capacity(total);
        let mut listener = match udp::listen(addr) {
            Ok(l) => l,
            Err(err) => {
                let errno = err.raw_os_error().unwrap_or(0);
                let _ = control::write_server_error(ctrl, e::IESTREAMLISTEN, errno, t);
                return Err(NetError::io(format!("binding UDP {addr}"), err));
            }
        };
        control::write_state(ctrl, State::CreateStreams, t)?;
        let deadline = self.by();
        for i in 0..total {
            if self.ctx.cancel.is_cancelled() {
                return Err(NetError::Cancelled);
            }
            let s = udp::accept(&mut listener, addr, params, deadline, stream_id(i))?;
            let role = server_role(params.direction, i, parallel);
            specs.push(StreamSpec {
                id: stream_id(i),
                role,
                sock: DataSock::Udp(s),
            });
        }
        Ok(specs)
    }

    /// Start the test and run it to the client's TEST_END.
    fn run_test(
        &self,
        specs: Vec<StreamSpec>,
        params: &TestParams,
        told: &Cell<bool>,
    ) -> Result<Engine, NetError> {
        let Ctx {
            cfg,
            progress,
            cancel,
            ..
        } = *self.ctx;
        let ctrl = self.ctrl;
        control::write_state(ctrl, State::TestStart, self.t)?;
        control::write_state(ctrl, State::TestRunning, self.t)?;
        let local_sends = specs.iter().any(|s| s.role == Role::Send);
        say(progress, text::header(params.protocol, local_sends));
        let mut engine = Engine::start(specs, params, Side::Server, Some(ctrl))?;
        let spec = DriveSpec {
            side: Side::Server,
            tick: Some(Duration::from_secs(1)),
            lines: text::interval_lines,
            // iperf3's server timer: duration + omit + 40 s grace, or the
            // server's maximum duration.
            safety: Some(super::limits::safety(cfg, params)),
            stall: Some(cfg.stall_timeout),
            max_rate_bps: cfg.max_bitrate_bps,
        };
        if let Err(err) = engine.drive(ctrl, &spec, progress, cancel) {
            if matches!(err, NetError::Cancelled) {
                // Tell the client before its streams close under it.
                let _ = control::write_state(ctrl, State::ServerTerminate, Duration::from_secs(1));
                told.set(true);
            }
            return Err(super::limits::expired(cfg, err));
        }
        Ok(engine)
    }

    /// End the streams, swap results with the client and build the report.
    fn exchange_results(
        &self,
        engine: &mut Engine,
        params: &TestParams,
        peer: SocketAddr,
        start: super::figures::StartInfo,
    ) -> Result<NetReport, NetError> {
        let ctrl = self.ctrl;
        // hlctl clients count until our streams close; iperf3 stops at its deadline.
        engine.end_server(self.ctx.progress, params.hlctl_version.is_none());
        engine.stop_all();
        let cpu = engine.cpu_util();
        let local = engine.local_streams();
        let congestion = engine.congestion();
        control::write_state(ctrl, State::ExchangeResults, self.t)?;
        let theirs =
            control::read_json(ctrl, MAX_RESULTS_JSON, self.by(), "results from the client")?;
        let theirs = PeerResults::from_json(&theirs)?;
        let mine = summary::local_results(&local, params.protocol, cpu, congestion.clone());
        control::write_json(ctrl, &mine.to_json(), self.t, "our results")?;
        control::write_state(ctrl, State::DisplayResults, self.t)?;
        // The client's IPERF_DONE, or its close; either way we are done.
        let mut done = [0u8; 1];
        let _ = control::read_exact_by(
            ctrl,
            &mut done,
            Instant::now() + Duration::from_secs(2),
            "IPERF_DONE",
        );
        summary::build(BuildInput {
            side: Side::Server,
            params,
            peer: peer.to_string(),
            local: &local,
            remote: &theirs,
            cpu,
            intervals: engine.intervals().to_vec(),
            duration_s: engine.duration_s(),
            congestion,
            start,
            samples: engine.samples().to_vec(),
        })
    }
}

/// Connections the accept loop handed over after the last stream was taken
/// (another client's control connection, arriving in that instant): each is
/// told busy, never dropped unanswered.
fn refuse_queued(rx: &mpsc::Receiver<TcpStream>, shared: &Shared, progress: &dyn Progress) {
    while let Ok(s) = rx.try_recv() {
        let who = s.peer_addr().map(|a| a.to_string()).unwrap_or_default();
        refuse(s);
        shared.refused_queued.fetch_add(1, Ordering::Relaxed);
        say(
            progress,
            format!("refused {who}: a test is running (sent ACCESS_DENIED)"),
        );
    }
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
