//! The client: `hlctl bench net` against `iperf3 -s` or `hlctl serve`.

use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use socket2::SockRef;

use crate::bench::progress::{Cancel, Progress};

use super::control::{self, Cookie, MAX_RESULTS_JSON, State};
use super::engine::{DataSock, DriveSpec, Engine, StreamSpec};
use super::error::NetError;
use super::figures::{Side, StartInfo};
use super::keepalive::KeepAlive;
use super::params::{self as p, Protocol, TestDirection, TestParams};
use super::results::PeerResults;
use super::stream::{Role, stream_id};
use super::summary::{self, BuildInput, NetReport};
use super::{tcp, udp};

/// The window `check` has by default (its `busy_window_s`), and every other
/// client of a peer unless told otherwise ([`ClientConfig::busy_window`]).
pub const DEFAULT_BUSY_WINDOW: Duration = Duration::from_secs(600);

/// What to test (the flags of `hlctl bench net`).
#[derive(Clone, Debug, PartialEq)]
pub struct ClientConfig {
    /// Server host name or address.
    pub(crate) host: String,
    /// Server port (iperf3's default is 5201).
    pub(crate) port: u16,
    pub protocol: Protocol,
    /// `-t`: seconds to measure (after the omit period).
    pub time_s: u32,
    /// `-P`: parallel streams (per direction with `--bidir`).
    pub parallel: u32,
    pub direction: TestDirection,
    /// `-b`: per-stream target in bit/s; `None` = unlimited for TCP, 1 Mibit/s for UDP.
    pub bandwidth_bps: Option<u64>,
    /// `-l`: block size; `None` = 128 KiB for TCP, the control connection's MSS for UDP.
    pub(crate) len: Option<u32>,
    /// `-w`: socket buffer size on both ends.
    pub window: Option<u32>,
    /// `-O`: seconds at the start not counted.
    pub omit_s: u32,
    /// `-i`: interval between progress reports; `None` = no interval reports.
    pub interval: Option<Duration>,
    /// How long to wait for the control connection and each data stream.
    pub connect_timeout: Duration,
    /// How long to wait for each answer of the server.
    pub reply_timeout: Duration,
    /// iperf3's user authentication: `--username`, `IPERF3_PASSWORD`,
    /// `--rsa-public-key-path`, `--use-pkcs1-padding`.
    pub auth: Option<super::auth::ClientAuth>,
    /// How long a busy server is tried again ([`super::run_client_waiting`];
    /// zero: a busy server fails at once).
    pub busy_window: Duration,
    /// `--skip-rx-copy`: both ends' TCP receivers discard without copying.
    pub skip_rx_copy: bool,
    /// `--fq-rate`: each TCP stream's pacing rate in bit/s.
    pub fq_rate_bps: Option<u64>,
    /// `-Z`: TCP senders (this side's; the server's with -R or --bidir)
    /// send with sendfile(2).
    pub zerocopy: bool,
    /// `--gsro`: UDP with GSO on send and GRO on receive, both ends.
    pub gsro: bool,
    /// `--cntl-ka`: keepalive on the control connection.
    pub cntl_ka: Option<KeepAlive>,
}

impl ClientConfig {
    /// iperf3's defaults: TCP, 10 s, one stream, reports every second.
    pub fn new(host: impl Into<String>, port: u16) -> ClientConfig {
        ClientConfig {
            host: host.into(),
            port,
            protocol: Protocol::Tcp,
            time_s: 10,
            parallel: 1,
            direction: TestDirection::Forward,
            bandwidth_bps: None,
            len: None,
            window: None,
            omit_s: 0,
            interval: Some(Duration::from_secs(1)),
            connect_timeout: PEER_CHECK,
            reply_timeout: Duration::from_secs(30),
            busy_window: DEFAULT_BUSY_WINDOW,
            auth: None,
            skip_rx_copy: false,
            fq_rate_bps: None,
            zerocopy: false,
            gsro: false,
            cntl_ka: None,
        }
    }

    /// Check every setting against iperf3's limits.
    pub(crate) fn validate(&self) -> Result<(), NetError> {
        let bad = |m: String| Err(NetError::InvalidConfig(m));
        if self.host.is_empty() {
            return bad("the peer host is empty".into());
        }
        if self.port == 0 {
            return bad("port 0 is not a valid server port".into());
        }
        if !(1..=p::MAX_TIME_S).contains(&self.time_s) {
            return bad(format!(
                "test time {} s is outside 1 to {} s",
                self.time_s,
                p::MAX_TIME_S
            ));
        }
        if !(1..=p::MAX_STREAMS).contains(&self.parallel) {
            return bad(format!(
                "{} parallel streams is outside 1 to {}",
                self.parallel,
                p::MAX_STREAMS
            ));
        }
        if self.omit_s > p::MAX_OMIT_S {
            return bad(format!(
                "omit {} s is above the maximum of {} s",
                self.omit_s,
                p::MAX_OMIT_S
            ));
        }
        if let Some(l) = self.len {
            let (lo, hi) = match self.protocol {
                Protocol::Tcp => (1, p::MAX_TCP_LEN),
                Protocol::Udp => (p::MIN_UDP_LEN, p::MAX_UDP_LEN),
            };
            if !(lo..=hi).contains(&l) {
                return bad(format!(
                    "block length {l} is outside {lo}..={hi} bytes for {:?}",
                    self.protocol
                ));
            }
        }
        if let Some(w) = self.window
            && !(1..=p::MAX_WINDOW).contains(&w)
        {
            return bad(format!("window {w} is outside 1..={} bytes", p::MAX_WINDOW));
        }
        if self.zerocopy && self.protocol == Protocol::Udp {
            return bad("-Z (zero copy) is for TCP: iperf3's sendfile path sends TCP streams only; leave out -Z or -u".into());
        }
        if self.gsro && self.protocol == Protocol::Tcp {
            return bad("--gsro is for UDP (-u): TCP has its own segmentation offloads; add -u or leave out --gsro".into());
        }
        if let Some(i) = self.interval
            && !(Duration::from_millis(100)..=Duration::from_secs(60)).contains(&i)
        {
            return bad(format!(
                "interval {:.2} s is outside 0.1..=60 s",
                i.as_secs_f64()
            ));
        }
        Ok(())
    }

    /// "host:port", with brackets around an IPv6 address.
    pub(crate) fn peer_label(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    fn params(&self, ctrl: &TcpStream) -> TestParams {
        let len = self.len.unwrap_or(match self.protocol {
            Protocol::Tcp => p::DEFAULT_TCP_LEN,
            // iperf3 uses the control connection's MSS for UDP datagrams.
            Protocol::Udp => match SockRef::from(ctrl).tcp_mss() {
                Ok(m) if m >= p::MIN_UDP_LEN => m.min(p::MAX_UDP_LEN),
                _ => p::DEFAULT_UDP_LEN,
            },
        });
        TestParams {
            protocol: self.protocol,
            omit_s: self.omit_s,
            time_s: self.time_s,
            num_bytes: 0,
            block_count: 0,
            parallel: self.parallel,
            direction: self.direction,
            window: self.window,
            len,
            bandwidth_bps: self.bandwidth_bps.unwrap_or(match self.protocol {
                Protocol::Tcp => 0,
                Protocol::Udp => p::DEFAULT_UDP_RATE,
            }),
            mss: None,
            nodelay: false,
            udp_counters_64bit: false,
            congestion: None,
            client_version: Some("3.12".into()),
            hlctl_version: Some(env!("CARGO_PKG_VERSION").into()),
            skip_rx_copy: self.skip_rx_copy,
            fq_rate_bps: self.fq_rate_bps.unwrap_or(0),
            mptcp: false,
            zerocopy: self.zerocopy,
            gsro: match self.protocol {
                Protocol::Udp if self.gsro => p::Gsro::on(len),
                _ => p::Gsro::OFF,
            },
            authtoken: None,
        }
    }
}

/// How long a refused connection is tried again. iperf3's server closes
/// its listening socket when a test ends (and, with `-N`, `-M` or `-w`,
/// while one starts) and opens it again for the next: a client that comes
/// right after another test (bench file's, doctor's and tune's runs follow
/// each other) can meet that gap, a few milliseconds, longer on a busy
/// host. A server that is not there stays refused, said within this.
pub(crate) const REFUSED_GRACE: Duration = Duration::from_secs(1);

pub(crate) fn connect_control(cfg: &ClientConfig) -> Result<TcpStream, NetError> {
    let peer = cfg.peer_label();
    let addrs: Vec<SocketAddr> =
        crate::resolve::socket_addrs(&cfg.host, cfg.port).map_err(|e| NetError::Resolve {
            host: cfg.host.clone(),
            source: e,
        })?;
    let start = Instant::now();
    let last = loop {
        let mut last = None;
        for a in &addrs {
            match TcpStream::connect_timeout(a, cfg.connect_timeout) {
                Ok(s) => return Ok(s),
                Err(e) => last = Some(e),
            }
        }
        let refused = last
            .as_ref()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::ConnectionRefused);
        if !refused || start.elapsed() >= REFUSED_GRACE {
            break last;
        }
        std::thread::sleep(Duration::from_millis(25));
    };
    Err(match last {
        Some(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            NetError::ConnectionRefused { peer }
        }
        Some(e) if control::is_timeout(&e) => NetError::Timeout {
            what: format!("a connection to {peer}"),
            after: cfg.connect_timeout,
        },
        Some(e) => NetError::Connect { peer, source: e },
        None => NetError::Resolve {
            host: cfg.host.clone(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no addresses"),
        },
    })
}

/// How long a peer has to accept the connection, and then to answer.
pub const PEER_CHECK: Duration = Duration::from_secs(2);

/// The server's first answer on a control connection where our cookie has
/// been sent: PARAM_EXCHANGE within [`PEER_CHECK`], else why not.
pub(crate) fn first_answer(ctrl: &TcpStream, peer: &str) -> Result<(), NetError> {
    let not_iperf3 = |detail: String| NetError::NotIperf3 {
        peer: peer.to_string(),
        detail,
    };
    match control::expect_state(ctrl, State::ParamExchange, Instant::now() + PEER_CHECK) {
        Err(NetError::Timeout { .. }) => Err(NetError::NoAnswer {
            peer: peer.to_string(),
            after: PEER_CHECK,
        }),
        Err(NetError::Protocol { received, .. }) => Err(not_iperf3(format!(
            "it answered {received} where iperf3 answers PARAM_EXCHANGE"
        ))),
        Err(NetError::ControlClosed { .. }) => Err(not_iperf3(
            "it closed the connection without an iperf3 answer".into(),
        )),
        other => other,
    }
}

/// Run one test as the client. Interval reports go to `progress` (each
/// message is one or more interval lines in iperf3's format); `cancel` stops
/// the test (the server is told with CLIENT_TERMINATE).
pub fn run_client(
    cfg: &ClientConfig,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<NetReport, NetError> {
    run_client_then(cfg, progress, cancel, &mut || {})
}

/// [`run_client`], calling `accepted` once the server has taken this test
/// (it answered PARAM_EXCHANGE, so it serves no one else until the test
/// ends) and before the test's parameters are sent: the moment to look at
/// the idle path to a peer that is ours alone. `accepted` must be brief: the
/// server is waiting for the parameters.
pub fn run_client_then(
    cfg: &ClientConfig,
    progress: &dyn Progress,
    cancel: &Cancel,
    accepted: &mut dyn FnMut(),
) -> Result<NetReport, NetError> {
    cfg.validate()?;
    let ctrl = connect_control(cfg)?;
    if let Some(ka) = &cfg.cntl_ka {
        ka.apply(&ctrl)?;
    }
    let result = run_on(&ctrl, cfg, progress, cancel, accepted);
    if matches!(result, Err(NetError::Cancelled)) {
        let _ = control::write_state(&ctrl, State::ClientTerminate, Duration::from_secs(1));
    }
    result
}

fn run_on(
    ctrl: &TcpStream,
    cfg: &ClientConfig,
    progress: &dyn Progress,
    cancel: &Cancel,
    accepted: &mut dyn FnMut(),
) -> Result<NetReport, NetError> {
    let steps = Steps {
        ctrl,
        cfg,
        cancel,
        t: cfg.reply_timeout,
    };
    let since = crate::host::now_unix_ms();
    let (server, cookie, params) = steps.negotiate(accepted)?;
    let specs = steps.connect_streams(server, &cookie, &params)?;
    let (mut engine, start) = steps.run_test(specs, &params, &cookie, since, progress)?;
    steps.exchange_results(&mut engine, &params, start)
}

/// The role of the `i`-th stream the client connects.
fn client_role(d: TestDirection, i: usize, parallel: usize) -> Role {
    match d {
        TestDirection::Forward => Role::Send,
        TestDirection::Reverse => Role::Recv,
        TestDirection::Bidir if i < parallel => Role::Send,
        TestDirection::Bidir => Role::Recv,
    }
}

/// One test's control connection, what to test, and the limit for each answer.
struct Steps<'a> {
    ctrl: &'a TcpStream,
    cfg: &'a ClientConfig,
    cancel: &'a Cancel,
    /// The client's reply timeout.
    t: Duration,
}

impl Steps<'_> {
    /// The deadline of an answer asked for now.
    fn by(&self) -> Instant {
        Instant::now() + self.t
    }

    fn check(&self) -> Result<(), NetError> {
        if self.cancel.is_cancelled() {
            Err(NetError::Cancelled)
        } else {
            Ok(())
        }
    }

    /// Cookie and parameters, up to the server's CREATE_STREAMS: the
    /// server's address, the cookie and the test's parameters.
    fn negotiate(
        &self,
        accepted: &mut dyn FnMut(),
    ) -> Result<(SocketAddr, Cookie, TestParams), NetError> {
        let (ctrl, t) = (self.ctrl, self.t);
        ctrl.set_nodelay(true)
            .map_err(|e| NetError::io("setting TCP_NODELAY", e))?;
        let server = ctrl
            .peer_addr()
            .map_err(|e| NetError::io("reading the peer address", e))?;
        let cookie = Cookie::generate().map_err(|e| NetError::io("reading /dev/urandom", e))?;
        control::write_all(ctrl, cookie.bytes(), t, "the cookie")?;
        first_answer(ctrl, &self.cfg.peer_label())?;
        self.check()?;
        accepted();
        let mut params = self.cfg.params(ctrl);
        if let Some(auth) = &self.cfg.auth {
            params.authtoken = Some(auth.token(crate::host::now_unix())?);
        }
        control::write_json(ctrl, &params.to_json(), t, "the test parameters")?;
        control::expect_state(ctrl, State::CreateStreams, self.by())
            .map_err(|e| super::auth::explain_refusal(e, self.cfg.auth.as_ref()))?;
        self.check()?;
        Ok((server, cookie, params))
    }

    /// Connect every data stream to `server`.
    fn connect_streams(
        &self,
        server: SocketAddr,
        cookie: &Cookie,
        params: &TestParams,
    ) -> Result<Vec<StreamSpec>, NetError> {
        let timeout = self.cfg.connect_timeout;
        let total = params.total_streams() as usize;
        let mut specs = Vec::with_capacity(total);
        for i in 0..total {
            let id = stream_id(i);
            let role = client_role(params.direction, i, params.parallel as usize);
            let sock = match params.protocol {
                Protocol::Tcp => DataSock::Tcp(tcp::connect(server, params, cookie, timeout, id)?),
                Protocol::Udp => DataSock::Udp(udp::connect(server, params, timeout, id)?),
            };
            specs.push(StreamSpec { id, role, sock });
            self.check()?;
        }
        Ok(specs)
    }

    /// How the test started (iperf3's `start`): the engine's sockets and
    /// buffers, and what this client was asked for. `since_ms`: when the
    /// control connection was made.
    fn start_info(&self, engine: &Engine, cookie: &Cookie, since_ms: u64) -> StartInfo {
        let cfg = self.cfg;
        StartInfo {
            host: cfg.host.clone(),
            port: cfg.port,
            interval_s: cfg.interval.map_or(0.0, |i| i.as_secs_f64()),
            ..engine.start_info(self.ctrl, cookie, since_ms)
        }
    }

    /// Run the test to the end of its time and tell the server (TEST_END);
    /// the start is announced to `progress` as the data starts to flow.
    fn run_test(
        &self,
        specs: Vec<StreamSpec>,
        params: &TestParams,
        cookie: &Cookie,
        since_ms: u64,
        progress: &dyn Progress,
    ) -> Result<(Engine, StartInfo), NetError> {
        let ctrl = self.ctrl;
        control::expect_state(ctrl, State::TestStart, self.by())?;
        control::expect_state(ctrl, State::TestRunning, self.by())?;
        let mut engine = Engine::start(specs, params, Side::Client, None)?;
        let start = self.start_info(&engine, cookie, since_ms);
        engine.announce(&start, progress);
        let spec = DriveSpec {
            side: Side::Client,
            tick: self.cfg.interval,
            lines: super::text::interval_lines,
            safety: None,
            stall: None,
            max_rate_bps: None,
        };
        engine.drive(ctrl, &spec, progress, self.cancel)?;
        engine.end_client(progress);
        control::write_state(ctrl, State::TestEnd, self.t)?;
        Ok((engine, start))
    }

    /// Stop counting once the server has, swap results and build the report.
    fn exchange_results(
        &self,
        engine: &mut Engine,
        params: &TestParams,
        start: StartInfo,
    ) -> Result<NetReport, NetError> {
        let (ctrl, t) = (self.ctrl, self.t);
        // Receivers go on counting until the server has stopped sending (it
        // answers TEST_END after closing its streams), so both count the same bytes.
        control::expect_state(ctrl, State::ExchangeResults, self.by())?;
        engine.finish_receiving();
        engine.stop_all();
        let cpu = engine.cpu_util();
        let local = engine.local_streams();
        let congestion = engine.congestion();
        let mine = summary::local_results(&local, params.protocol, cpu, congestion.clone());
        control::write_json(ctrl, &mine.to_json(), t, "our results")?;
        let theirs =
            control::read_json(ctrl, MAX_RESULTS_JSON, self.by(), "results from the server")?;
        let theirs = PeerResults::from_json(&theirs)?;
        control::expect_state(ctrl, State::DisplayResults, self.by())?;
        control::write_state(ctrl, State::IperfDone, t)?;
        summary::build(BuildInput {
            side: Side::Client,
            params,
            peer: self.cfg.peer_label(),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What iperf3 3.21 sent for `iperf3 -c 127.0.0.1 -t 2 FLAGS`
    /// (tests/fixtures/iperf3-3.21), without its `client_version`.
    fn fixture_321(name: &str) -> serde_json::Value {
        let path = format!(
            "{}/tests/fixtures/iperf3-3.21/params-{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("client_version");
        v
    }

    #[test]
    fn the_block_sent_is_321s_for_the_same_flags() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let ctrl = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let udp = |len: u32, gsro: bool| {
            let mut c = ClientConfig::new("127.0.0.1", 5201);
            c.protocol = Protocol::Udp;
            c.bandwidth_bps = Some(100_000_000);
            c.len = Some(len);
            c.gsro = gsro;
            c
        };
        let mut zerocopy = ClientConfig::new("127.0.0.1", 5201);
        zerocopy.zerocopy = true;
        let mut keepalive = ClientConfig::new("127.0.0.1", 5201);
        keepalive.cntl_ka = Some(KeepAlive::default());
        keepalive.parallel = 4;
        keepalive.fq_rate_bps = Some(2_000_000_000);
        for (name, mut cfg) in [
            ("tcp", ClientConfig::new("127.0.0.1", 5201)),
            ("zerocopy", zerocopy),
            ("cntl-ka-fq-rate", keepalive),
            ("udp", udp(32768, false)),
            ("udp-gsro", udp(32768, true)),
            ("udp-gsro-l1400", udp(1400, true)),
        ] {
            cfg.time_s = 2;
            let mut ours = cfg.params(&ctrl).to_json();
            let m = ours.as_object_mut().unwrap();
            assert_eq!(m.remove("client_version"), Some("3.12".into()));
            assert!(m.remove("hlctl_version").is_some());
            assert_eq!(ours, fixture_321(name), "{name}");
        }
    }

    #[test]
    fn validation_names_the_problem() {
        let mut c = ClientConfig::new("h", 5201);
        assert!(c.validate().is_ok());
        c.parallel = 0;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("parallel"), "{e}");
        let mut c = ClientConfig::new("h", 5201);
        c.protocol = Protocol::Udp;
        c.len = Some(70000);
        assert!(
            c.validate()
                .unwrap_err()
                .to_string()
                .contains("block length")
        );
        assert_eq!(ClientConfig::new("::1", 5201).peer_label(), "[::1]:5201");
    }

    #[test]
    fn refused_connection_says_so() {
        // Find a port nothing listens on.
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let mut c = ClientConfig::new("127.0.0.1", port);
        c.time_s = 1;
        let t = Instant::now();
        let e = run_client(&c, &crate::bench::progress::NoProgress, &Cancel::new()).unwrap_err();
        assert!(matches!(e, NetError::ConnectionRefused { .. }), "{e}");
        assert!(e.to_string().contains("hlctl serve"));
        // Said within the grace, not at once and not after the timeout.
        let took = t.elapsed();
        assert!(
            took >= REFUSED_GRACE && took < REFUSED_GRACE * 2,
            "{took:?}"
        );
    }

    /// A listener that comes back within the grace (iperf3 re-opening its
    /// listening socket between tests) is connected to.
    #[test]
    fn a_listener_back_within_the_grace_is_connected() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        drop(l);
        let back = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            let l = std::net::TcpListener::bind(addr).unwrap();
            l.accept().map(|_| ())
        });
        let c = ClientConfig::new("127.0.0.1", addr.port());
        assert!(connect_control(&c).is_ok());
        back.join().unwrap().unwrap();
    }
}
