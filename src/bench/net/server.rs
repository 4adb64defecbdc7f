//! The server: `hlctl serve`, compatible with `iperf3 -c`. One test at a
//! time; everyone else gets iperf3's busy answer. Every wait has a timeout and
//! nothing a client sends can make it panic. One test is in [`super::session`].

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Mutex, mpsc};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

use socket2::{Domain, Socket, Type};

use crate::bench::exclusive::MeasureLock;
use crate::bench::progress::{Cancel, Progress};

use super::control;
use super::error::NetError;
pub use super::serving::ServerConfig;
use super::serving::{BUSY, DONE, IDLE, Shared, TAKING_TCP_STREAMS, say};
use super::session::{Ctx, refuse, serve_test};
use super::summary::NetReport;
use super::text;

/// One finished (or failed) test.
#[derive(Debug)]
pub struct TestOutcome {
    pub(crate) peer: SocketAddr,
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

    /// Serve on a listening socket that was handed over (systemd socket
    /// activation); `cfg.bind` and `cfg.port` are not used.
    pub(crate) fn from_listener(
        listener: TcpListener,
        cfg: ServerConfig,
    ) -> Result<Server, NetError> {
        let addr = listener
            .local_addr()
            .map_err(|e| NetError::io("the inherited socket", e))?;
        Ok(Server {
            listener,
            addr,
            cfg,
        })
    }

    /// The address the server listens on (with the actual port).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
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
            refused_queued: AtomicU64::new(0),
        };
        let ctx = Ctx {
            addr: self.addr,
            cfg: &self.cfg,
            shared: &shared,
            progress,
            cancel,
        };
        let (stop_reason, busy_refusals) = std::thread::scope(|scope| {
            let mut accepting = Accepting {
                server: self,
                ctx,
                on_test,
                session: None,
                busy_refusals: 0,
            };
            (accepting.serve(scope), accepting.busy_refusals)
        });
        Ok(ServeSummary {
            tests_completed: shared.completed.load(Ordering::Relaxed),
            tests_failed: shared.failed.load(Ordering::Relaxed),
            busy_refusals: busy_refusals + shared.refused_queued.load(Ordering::Relaxed),
            stop_reason,
        })
    }

    /// The next waiting connection, or `None` when none is waiting (or
    /// accepting failed: then after a short back-off).
    fn accept_next(&self, progress: &dyn Progress) -> Option<(TcpStream, SocketAddr)> {
        loop {
            match self.listener.accept() {
                Ok(c) => return Some(c),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return None,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    // Out of descriptors or similar: back off, keep serving.
                    say(progress, format!("accept failed: {e}"));
                    std::thread::sleep(Duration::from_millis(50));
                    return None;
                }
            }
        }
    }

    /// The host's measurement lock for a new test: `Ok(None)` when there is
    /// no lock to take (or it cannot be opened), `Err(HostMeasuring)` when
    /// the host measures to someone else right now.
    fn exclusive_gate(&self) -> Result<Option<MeasureLock>, HostMeasuring> {
        match &self.cfg.exclusive {
            Some(p) => match MeasureLock::try_acquire(p) {
                Ok(Some(g)) => Ok(Some(g)),
                Ok(None) => Err(HostMeasuring),
                Err(_) => Ok(None),
            },
            None => Ok(None),
        }
    }
}

/// The host's measurement lock is held by someone else.
struct HostMeasuring;

/// The accept loop's state: the running session, if any, and how many
/// clients were told busy.
struct Accepting<'scope, 'env> {
    server: &'env Server,
    ctx: Ctx<'env>,
    on_test: &'env (dyn Fn(&TestOutcome) + Sync),
    session: Option<ScopedJoinHandle<'scope, ()>>,
    busy_refusals: u64,
}

impl<'scope, 'env> Accepting<'scope, 'env> {
    /// Serve until cancelled, idle, or (one-off) done.
    fn serve(&mut self, scope: &'scope Scope<'scope, 'env>) -> StopReason {
        let cfg = &self.server.cfg;
        let mut idle_since = Instant::now();
        loop {
            if self.ctx.cancel.is_cancelled() {
                return StopReason::Cancelled;
            }
            if self.reap() {
                idle_since = Instant::now();
                if cfg.one_off {
                    return StopReason::OneOff;
                }
            }
            if self.session.is_none() && cfg.idle_timeout.is_some_and(|t| idle_since.elapsed() >= t)
            {
                return StopReason::IdleTimeout;
            }
            control::wait_readable(&self.server.listener, Duration::from_millis(100));
            if let Some(stop) = self.accept_waiting(scope) {
                return stop;
            }
        }
    }

    /// Answer every connection that is waiting: start a test, hand a data
    /// stream to the running one, or refuse. `Some` when the server stops.
    fn accept_waiting(&mut self, scope: &'scope Scope<'scope, 'env>) -> Option<StopReason> {
        while let Some((conn, peer)) = self.server.accept_next(self.ctx.progress) {
            let _ = conn.set_nonblocking(false);
            if self.reap() && self.server.cfg.one_off {
                return Some(StopReason::OneOff);
            }
            if self.session.is_some() {
                if !hand_over(self.ctx.shared, conn) {
                    self.refused(format!(
                        "refused {peer}: a test is running (sent ACCESS_DENIED)"
                    ));
                }
                continue;
            }
            // The host measures to someone else right now: busy too.
            match self.server.exclusive_gate() {
                Ok(gate) => self.start_session(scope, conn, peer, gate),
                Err(HostMeasuring) => {
                    refuse(conn);
                    self.refused(format!(
                        "refused {peer}: this host is measuring (sent ACCESS_DENIED)"
                    ));
                }
            }
        }
        None
    }

    /// A session that is done (or about to be) frees the server; a client
    /// arriving in that instant is served, not refused. True if one ended.
    fn reap(&mut self) -> bool {
        let shared = self.ctx.shared;
        let done = self
            .session
            .as_ref()
            .is_some_and(|h| h.is_finished() || shared.phase.load(Ordering::SeqCst) == DONE);
        if done && let Some(h) = self.session.take() {
            let _ = h.join();
            shared.phase.store(IDLE, Ordering::SeqCst);
        }
        done
    }

    /// Run a test with `conn` on its own thread.
    fn start_session(
        &mut self,
        scope: &'scope Scope<'scope, 'env>,
        conn: TcpStream,
        peer: SocketAddr,
        gate: Option<MeasureLock>,
    ) {
        self.ctx.shared.phase.store(BUSY, Ordering::SeqCst);
        let (ctx, on_test) = (self.ctx, self.on_test);
        self.session = Some(scope.spawn(move || run_session(conn, peer, ctx, gate, on_test)));
    }

    /// Count a client told busy, and say so.
    fn refused(&mut self, message: String) {
        self.busy_refusals += 1;
        say(self.ctx.progress, message);
    }
}

/// A connection while a test runs: a data stream handed to the session if it
/// waits for its TCP streams, else refused. True if handed over.
fn hand_over(shared: &Shared, conn: TcpStream) -> bool {
    if shared.phase.load(Ordering::SeqCst) != TAKING_TCP_STREAMS {
        refuse(conn);
        return false;
    }
    // Sent with the lock held: once the session has taken the sender away
    // (under the same lock) nothing more reaches its queue, so the session's
    // drain answers every connection that did.
    let guard = shared.streams.lock().unwrap_or_else(|p| p.into_inner());
    let Some(tx) = guard.as_ref() else {
        drop(guard);
        refuse(conn);
        return false;
    };
    match tx.send(conn) {
        Ok(()) => true,
        Err(mpsc::SendError(conn)) => {
            drop(guard);
            refuse(conn);
            false
        }
    }
}

/// One test on its session thread: serve it, free the server, count and
/// report it.
fn run_session(
    conn: TcpStream,
    peer: SocketAddr,
    ctx: Ctx<'_>,
    gate: Option<MeasureLock>,
    on_test: &(dyn Fn(&TestOutcome) + Sync),
) {
    let (shared, progress) = (ctx.shared, ctx.progress);
    let result = serve_test(&conn, peer, &ctx);
    *shared.streams.lock().unwrap_or_else(|p| p.into_inner()) = None;
    drop(gate);
    // Done with the client: the next one is served as soon as
    // the lines and the callback below return. The control connection
    // closes only now, so a client that saw it close (a refused test, a
    // server error) and tries again at once is served, not told busy.
    shared.phase.store(DONE, Ordering::SeqCst);
    drop(conn);
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
}
