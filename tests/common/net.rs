//! Helpers for the network benchmark tests: free ports, child processes that
//! are always killed (by pid) and reaped, an in-process `hlctl` server on a
//! thread, and byte-count comparisons. Every wait here has a timeout.

use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use hlctl::bench::net::{
    ClientConfig, DirectionSummary, NetError, NetReport, ServeSummary, Server, ServerConfig,
    run_client,
};
use hlctl::bench::progress::{Cancel, NoProgress, Progress};
use serde_json::Value;

use super::ChildGuard;

/// A loopback port free for both TCP and UDP right now.
pub fn free_port() -> u16 {
    for _ in 0..100 {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("bind an ephemeral port");
        if UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no port free for both TCP and UDP");
}

/// Wait (at most `limit`) until a socket of this network namespace listens
/// on TCP `port`, read from `/proc/net/tcp` and `tcp6`: no probe
/// connection, which an iperf3 server would take for a client (a test to
/// `iperf3 -s -1`, a busy answer to the next one for a moment).
pub fn wait_listening(port: u16, limit: Duration) {
    let listening = || {
        ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|f| {
            std::fs::read_to_string(f).is_ok_and(|t| {
                t.lines().skip(1).any(|l| {
                    let cols: Vec<&str> = l.split_whitespace().collect();
                    cols.len() > 3
                        && cols[3] == "0A"
                        && cols[1]
                            .rsplit(':')
                            .next()
                            .and_then(|p| u16::from_str_radix(p, 16).ok())
                            == Some(port)
                })
            })
        })
    };
    let deadline = Instant::now() + limit;
    while !listening() {
        assert!(
            Instant::now() < deadline,
            "nothing listened on TCP port {port} within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A child process with captured output; killed by its pid and reaped on drop
/// (by its [`ChildGuard`]).
pub struct Proc {
    child: ChildGuard,
    stdout: Option<mpsc::Receiver<Vec<u8>>>,
    stderr: Option<mpsc::Receiver<Vec<u8>>>,
}

fn reader(mut r: impl Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    rx
}

impl Proc {
    pub fn spawn(cmd: &mut Command) -> Proc {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
        let stdout = child.stdout.take().map(reader);
        let stderr = child.stderr.take().map(reader);
        Proc {
            child: ChildGuard(child),
            stdout,
            stderr,
        }
    }

    /// Wait for exit at most `timeout` (then kill); returns status and output.
    pub fn finish(mut self, timeout: Duration) -> (Option<ExitStatus>, String, String) {
        let deadline = Instant::now() + timeout;
        let mut status = None;
        while Instant::now() < deadline {
            match self.child.0.try_wait() {
                Ok(Some(s)) => {
                    status = Some(s);
                    break;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(_) => break,
            }
        }
        if status.is_none() {
            self.child.kill9();
        }
        let grab = |rx: Option<mpsc::Receiver<Vec<u8>>>| {
            rx.and_then(|rx| rx.recv_timeout(Duration::from_secs(5)).ok())
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default()
        };
        let out = grab(self.stdout.take());
        let err = grab(self.stderr.take());
        (status, out, err)
    }
}

/// Run the client command `make()` builds (bounded by 30 s a run) until it
/// no longer reports "connection refused" (the server is listening; ≤ 50
/// tries, 100 ms apart); `what` names the server in the failure.
pub fn until_listening(
    what: &str,
    mut make: impl FnMut() -> Command,
) -> (Option<ExitStatus>, String, String) {
    for _ in 0..50 {
        let (status, out, err) = Proc::spawn(&mut make()).finish(Duration::from_secs(30));
        if !err.contains("connection refused") {
            return (status, out, err);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("{what} never came up");
}

/// `iperf3 -s -1 -p PORT -B 127.0.0.1 --json`.
pub fn iperf3_server(port: u16) -> Proc {
    Proc::spawn(Command::new("iperf3").args([
        "-s",
        "-1",
        "-B",
        "127.0.0.1",
        "--json",
        "-p",
        &port.to_string(),
    ]))
}

/// The JSON an iperf3 process printed, failing the test on an error.
pub fn iperf3_json(status: Option<ExitStatus>, out: &str, err: &str) -> Value {
    let v: Value = serde_json::from_str(out).unwrap_or_else(|e| {
        panic!("iperf3 printed no JSON ({e}); status {status:?}\nstdout: {out}\nstderr: {err}")
    });
    assert!(
        v.get("error").is_none(),
        "iperf3 reported an error: {}",
        v["error"]
    );
    assert!(
        status.is_some_and(|s| s.success()),
        "iperf3 failed: {status:?}\n{err}"
    );
    v
}

/// Run `iperf3 -c 127.0.0.1 -p PORT --json ARGS`, bounded.
pub fn iperf3_client(port: u16, secs: u32, args: &[&str]) -> (Option<ExitStatus>, String, String) {
    let p = Proc::spawn(
        Command::new("iperf3")
            .args([
                "-c",
                "127.0.0.1",
                "--json",
                "-p",
                &port.to_string(),
                "-t",
                &secs.to_string(),
            ])
            .args(args),
    );
    p.finish(Duration::from_secs(secs as u64 + 30))
}

/// Bytes iperf3 counted itself, from its `end.streams`: (sent, received).
pub fn iperf3_own_bytes(v: &Value) -> (u64, u64) {
    let (mut sent, mut received) = (0, 0);
    let streams = v["end"]["streams"].as_array().expect("end.streams");
    for s in streams {
        if let Some(u) = s.get("udp") {
            // 3.12 leaves a UDP receiver's per-stream bytes at 0; use the sums
            // (sum_sent is the sender's count, sum_received the receiver's).
            if u["sender"].as_bool() == Some(true) {
                sent = v["end"]["sum_sent"]["bytes"].as_u64().unwrap_or(0);
            } else {
                received = v["end"]["sum_received"]["bytes"].as_u64().unwrap_or(0);
            }
        } else if s["sender"]["sender"].as_bool() == Some(true) {
            sent += s["sender"]["bytes"].as_u64().unwrap_or(0);
        } else {
            received += s["receiver"]["bytes"].as_u64().unwrap_or(0);
        }
    }
    (sent, received)
}

/// A client configuration for loopback tests.
pub fn client_cfg(port: u16, time_s: u32) -> ClientConfig {
    let mut c = ClientConfig::new("127.0.0.1", port);
    c.time_s = time_s;
    c.interval = None;
    c.connect_timeout = Duration::from_secs(5);
    c.reply_timeout = Duration::from_secs(15);
    c
}

/// Run our client, retrying while the server is not listening yet (≤ 5 s).
pub fn run_client_retry(cfg: &ClientConfig) -> Result<NetReport, NetError> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match run_client(cfg, &NoProgress, &Cancel::new()) {
            Err(NetError::ConnectionRefused { .. }) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

/// Our server on a thread; cancelled and joined (bounded) on drop.
pub struct HlServer {
    pub addr: SocketAddr,
    cancel: Cancel,
    done: mpsc::Receiver<Result<ServeSummary, String>>,
    pub outcomes: Arc<Mutex<Vec<Result<NetReport, String>>>>,
    pub lines: Arc<Mutex<Vec<String>>>,
}

struct Lines(Arc<Mutex<Vec<String>>>);

impl Progress for Lines {
    fn report(&self, e: hlctl::bench::progress::ProgressEvent) {
        if let Ok(mut v) = self.0.lock() {
            v.push(e.message);
        }
    }
}

impl HlServer {
    /// Bind 127.0.0.1 on a free port and serve.
    pub fn start(mut cfg: ServerConfig) -> HlServer {
        cfg.bind = Some("127.0.0.1".parse().expect("ip"));
        let server = Server::bind(cfg).expect("bind the hlctl server");
        let addr = server.local_addr();
        let cancel = Cancel::new();
        let outcomes = Arc::new(Mutex::new(Vec::new()));
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (tx, done) = mpsc::channel();
        let (c, o, l) = (cancel.clone(), outcomes.clone(), lines.clone());
        std::thread::spawn(move || {
            let on_test = |t: &hlctl::bench::net::TestOutcome| {
                let r = match &t.result {
                    Ok(r) => Ok(r.clone()),
                    Err(e) => Err(e.to_string()),
                };
                if let Ok(mut v) = o.lock() {
                    v.push(r);
                }
            };
            let r = server
                .run_with(&Lines(l), &c, &on_test)
                .map_err(|e| e.to_string());
            let _ = tx.send(r);
        });
        HlServer {
            addr,
            cancel,
            done,
            outcomes,
            lines,
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Wait until `n` tests have finished (≤ `timeout`); returns them all.
    /// Every line the server said so far, one per line.
    pub fn said(&self) -> String {
        self.lines.lock().map(|l| l.join("\n")).unwrap_or_default()
    }

    pub fn wait_outcomes(&self, n: usize, timeout: Duration) -> Vec<Result<NetReport, String>> {
        let deadline = Instant::now() + timeout;
        loop {
            let v = self.outcomes.lock().map(|v| v.clone()).unwrap_or_default();
            if v.len() >= n || Instant::now() >= deadline {
                return v;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Wait (≤ `timeout`) for the server to return on its own.
    pub fn wait_done(&self, timeout: Duration) -> Option<Result<ServeSummary, String>> {
        self.done.recv_timeout(timeout).ok()
    }

    /// Cancel and wait (≤ 10 s) for the summary.
    pub fn stop(self) -> ServeSummary {
        self.cancel.cancel();
        match self.done.recv_timeout(Duration::from_secs(10)) {
            Ok(Ok(s)) => s,
            other => panic!("server did not stop cleanly: {other:?}"),
        }
    }
}

impl Drop for HlServer {
    fn drop(&mut self) {
        self.cancel.cancel();
        let _ = self.done.recv_timeout(Duration::from_secs(10));
    }
}

/// |a − b| ≤ pct % of max(a, b).
pub fn within(a: u64, b: u64, pct: f64) -> bool {
    let m = a.max(b) as f64;
    m == 0.0 || (a as f64 - b as f64).abs() <= m * pct / 100.0
}

/// Assert that one direction's sender and receiver counts agree: within 1%
/// for TCP; for UDP once the lost datagrams are accounted for.
pub fn assert_direction_consistent(d: &DirectionSummary, udp: bool, len: u32, what: &str) {
    assert!(d.sent_bytes > 0, "{what}: nothing sent: {d:?}");
    if udp {
        let lost = d.lost_packets.unwrap_or(0) * len as u64;
        let accounted = d.received_bytes + lost;
        assert!(
            within(d.sent_bytes, accounted, 1.0),
            "{what}: sent {} vs received {} + lost {} datagrams",
            d.sent_bytes,
            d.received_bytes,
            d.lost_packets.unwrap_or(0)
        );
    } else {
        assert!(
            within(d.sent_bytes, d.received_bytes, 1.0),
            "{what}: sent {} vs received {} differ by more than 1%",
            d.sent_bytes,
            d.received_bytes
        );
    }
}

/// A raw control connection for protocol-level tests.
pub struct Raw {
    pub s: TcpStream,
}

impl Raw {
    pub fn connect(addr: SocketAddr) -> Raw {
        let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        s.set_write_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        Raw { s }
    }

    pub fn send(&self, b: &[u8]) {
        std::io::Write::write_all(&mut &self.s, b).expect("send");
    }

    /// One byte, or None on EOF, reset or timeout.
    pub fn byte(&self) -> Option<u8> {
        let mut b = [0u8; 1];
        match (&self.s).read(&mut b) {
            Ok(1) => Some(b[0]),
            _ => None,
        }
    }

    pub fn exact(&self, n: usize) -> Option<Vec<u8>> {
        let mut v = vec![0u8; n];
        (&self.s).read_exact(&mut v).ok().map(|_| v)
    }

    /// A length-prefixed JSON block.
    pub fn json(&self) -> Option<Value> {
        let len = self.exact(4)?;
        let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
        serde_json::from_slice(&self.exact(len)?).ok()
    }

    pub fn send_json(&self, v: &Value) {
        let body = serde_json::to_vec(v).expect("json");
        let mut msg = (body.len() as u32).to_be_bytes().to_vec();
        msg.extend_from_slice(&body);
        self.send(&msg);
    }

    /// True if the server closes the connection within `timeout` (data before
    /// the close is skipped).
    pub fn closed_within(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut buf = [0u8; 4096];
        while Instant::now() < deadline {
            let _ = self.s.set_read_timeout(Some(Duration::from_millis(100)));
            match (&self.s).read(&mut buf) {
                Ok(0) => return true,
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => return true,
            }
        }
        false
    }
}

/// A cookie in iperf3's format (36 base32 characters + NUL).
pub fn cookie(seed: u8) -> [u8; 37] {
    let alphabet = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut c = [0u8; 37];
    for (i, b) in c.iter_mut().take(36).enumerate() {
        *b = alphabet[(i * 7 + seed as usize) % 32];
    }
    c
}
