//! `bench net -Z`, `-u --gsro` and `--cntl-ka` (iperf3's zero copy, 3.21's
//! UDP GSO/GRO, 3.19's control keepalive) against Debian's iperf3 3.12 and
//! `hlctl serve`, on loopback: each acted on (sendfile calls counted by
//! strace, GSO/GRO read back from the sockets, the keepalive timer seen by
//! `ss`), and the ends' counts agree.

mod common;

use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use common::net::*;
use hlctl::bench::net::{
    ClientConfig, KeepAlive, NetReport, Protocol, ServerConfig, TestDirection,
};
use serde_json::Value;

const SECS: u32 = 2;

/// One loopback test at a time (2 cores; iperf3 3.12 is single-threaded).
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// The number of `name` calls in an `strace -c -o FILE` summary.
fn strace_calls(summary: &str, name: &str) -> u64 {
    summary
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.last() == Some(&name)).then(|| f[3].parse::<u64>().ok())?
        })
        .next()
        .unwrap_or(0)
}

/// `strace -f -c -e trace=sendfile -o SUMMARY` around `args`.
fn straced(summary: &std::path::Path, args: &[&str]) -> Command {
    let mut c = Command::new("strace");
    c.args(["-f", "-qq", "-c", "-e", "trace=sendfile,write", "-o"])
        .arg(summary)
        .arg(env!("CARGO_BIN_EXE_hlctl"))
        .args(args);
    c
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a scratch directory")
}

fn cfg(port: u16) -> ClientConfig {
    client_cfg(port, SECS)
}

fn start_flag(r: &NetReport, key: &str) -> bool {
    let v = serde_json::to_value(r).expect("report as JSON");
    v["start"][key]
        .as_bool()
        .unwrap_or_else(|| panic!("start.{key}: {}", v["start"]))
}

/// What strace counted: (sendfile calls, write calls).
fn copies(summary: &std::path::Path) -> (u64, u64) {
    let text = std::fs::read_to_string(summary).expect("strace's summary");
    (
        strace_calls(&text, "sendfile"),
        strace_calls(&text, "write"),
    )
}

/// Zero copy shows as sendfile calls by the hundred and few writes (the
/// control connection and the output), where a copying sender writes
/// every block.
fn assert_sent_by_sendfile(summary: &std::path::Path, who: &str) {
    let (sendfile, write) = copies(summary);
    assert!(
        sendfile >= 100 && write < sendfile / 10,
        "{who}: {sendfile} sendfile and {write} write calls"
    );
}

/// `-Z` against iperf3 3.12: hlctl's sender sends with sendfile, and iperf3
/// counts what hlctl sent.
#[test]
fn zerocopy_sends_with_sendfile_to_iperf3_312() {
    let _one = serial();
    let port = free_port();
    let server = iperf3_server(port);
    wait_listening(port, Duration::from_secs(10));
    let dir = tempdir();
    let summary = dir.path().join("strace");
    let state = dir.path().join("state");
    let (p, secs) = (port.to_string(), SECS.to_string());
    let (status, out, err) = Proc::spawn(&mut straced(
        &summary,
        &[
            "--state-dir",
            state.to_str().unwrap(),
            "bench",
            "net",
            "--local",
            "-c",
            "127.0.0.1",
            "-p",
            &p,
            "-t",
            &secs,
            "-Z",
            "-J",
        ],
    ))
    .finish(Duration::from_secs(40));
    assert!(
        status.is_some_and(|s| s.success()),
        "hlctl -Z: {status:?}\n{err}"
    );
    let ours: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("hlctl -J: {e}\n{out}"));
    let (status, out, err) = server.finish(Duration::from_secs(15));
    let (_, received) = iperf3_own_bytes(&iperf3_json(status, &out, &err));
    let sent = ours["end"]["sum_sent"]["bytes"]
        .as_u64()
        .expect("end.sum_sent.bytes");
    assert!(
        within(sent, received, 1.0),
        "hlctl sent {sent}, iperf3 received {received}"
    );
    assert_sent_by_sendfile(&summary, "hlctl bench net -Z");
}

/// `-Z -R` against `hlctl serve`: the client's `zerocopy` makes the server's
/// sender use sendfile (as a 3.21 server does), and both ends agree.
#[test]
fn zerocopy_reverse_makes_hlctl_serve_send_with_sendfile() {
    let _one = serial();
    let port = free_port();
    let dir = tempdir();
    let summary = dir.path().join("strace");
    let state = dir.path().join("state");
    let p = port.to_string();
    let server = Proc::spawn(&mut straced(
        &summary,
        &[
            "--state-dir",
            state.to_str().unwrap(),
            "serve",
            "-1",
            "-B",
            "127.0.0.1",
            "-p",
            &p,
        ],
    ));
    wait_listening(port, Duration::from_secs(10));
    let mut c = cfg(port);
    c.zerocopy = true;
    c.direction = TestDirection::Reverse;
    let report = run_client_retry(&c).expect("hlctl -Z -R against hlctl serve");
    let (status, _, err) = server.finish(Duration::from_secs(15));
    assert!(
        status.is_some_and(|s| s.success()),
        "hlctl serve -1: {status:?}\n{err}"
    );
    assert!(report.main.received_bytes > 0);
    assert!(within(
        report.main.sent_bytes,
        report.main.received_bytes,
        1.0
    ));
    assert_sent_by_sendfile(&summary, "hlctl serve (client's -Z -R)");
}

/// UDP at 500 Mbit/s with `--gsro`, both directions: against iperf3 3.12
/// (which knows neither key: GSO's datagrams must arrive as ordinary ones,
/// each with its own sequence number) and against `hlctl serve`, which
/// turns GSO and GRO on for its own sockets. The client's sockets have both,
/// as the kernel reports them; every datagram sent is received or counted lost.
#[test]
fn gsro_datagrams_are_counted_by_iperf3_312_and_hlctl_serve() {
    for direction in [TestDirection::Forward, TestDirection::Reverse] {
        let _one = serial();
        let port = free_port();
        let server = iperf3_server(port);
        wait_listening(port, Duration::from_secs(10));
        let report = run_client_retry(&gsro(port, direction)).expect("--gsro against iperf3 3.12");
        let (status, out, err) = server.finish(Duration::from_secs(15));
        let theirs = iperf3_json(status, &out, &err);
        assert!(start_flag(&report, "gso") && start_flag(&report, "gro"));
        let sum = &theirs["end"]["sum"];
        let their_packets = sum["packets"].as_u64().expect("iperf3's end.sum.packets");
        let our_packets = num(&report.main, "packets");
        assert_eq!(
            our_packets, their_packets,
            "{direction:?}: datagrams, ours vs iperf3's"
        );
        let udp = &theirs["end"]["streams"][0]["udp"];
        assert_eq!(
            udp["out_of_order"].as_u64(),
            Some(0),
            "{direction:?}: {udp}"
        );
    }
    for direction in [TestDirection::Forward, TestDirection::Reverse] {
        let _one = serial();
        let server = HlServer::start(ServerConfig::new(0));
        let client =
            run_client_retry(&gsro(server.port(), direction)).expect("--gsro against hlctl serve");
        let outcomes = server.wait_outcomes(1, Duration::from_secs(10));
        let theirs = match outcomes.first() {
            Some(Ok(r)) => r.clone(),
            other => panic!("server outcome: {other:?}"),
        };
        for (who, r) in [("client", &client), ("server", &theirs)] {
            assert!(
                start_flag(r, "gso") && start_flag(r, "gro"),
                "{who} {direction:?}"
            );
        }
        let (c, s) = (&client.main, &theirs.main);
        assert_eq!(num(c, "packets"), num(s, "packets"), "{direction:?}");
        assert_eq!(c.received_bytes, s.received_bytes, "{direction:?}");
        assert!(
            c.lost_percent.is_some_and(|l| l < 1.0),
            "{direction:?}: {c:?}"
        );
        server.stop();
    }
}

/// A UDP figure of a direction's totals (by its name in the report's JSON).
fn num(d: &hlctl::bench::net::DirectionSummary, key: &str) -> u64 {
    let v = serde_json::to_value(d).expect("totals as JSON");
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

fn gsro(port: u16, direction: TestDirection) -> ClientConfig {
    let mut c = cfg(port);
    c.protocol = Protocol::Udp;
    c.bandwidth_bps = Some(500_000_000);
    c.gsro = true;
    c.direction = direction;
    c
}

/// The established connections to `port` whose local end is ours (client
/// side) as `ss -tno` lists them: (all, with a keepalive timer).
fn keepalive_timers(port: u16) -> (usize, usize) {
    let out = Command::new("ss")
        .args(["-tnoH", "state", "established", &format!("dport = :{port}")])
        .output()
        .expect("run ss");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let ka = lines
        .iter()
        .filter(|l| l.contains("timer:(keepalive"))
        .count();
    (lines.len(), ka)
}

/// `--cntl-ka=30/5/3` against iperf3 3.12 and `hlctl serve`: mid-test, the
/// control connection (and only it, not the data stream) has a keepalive
/// timer running, and the test completes.
#[test]
fn cntl_ka_puts_a_keepalive_timer_on_the_control_connection_only() {
    for peer in ["iperf3 3.12", "hlctl serve"] {
        let _one = serial();
        let (port, iperf3, hl) = if peer == "hlctl serve" {
            let hl = HlServer::start(ServerConfig::new(0));
            (hl.port(), None, Some(hl))
        } else {
            let port = free_port();
            let p = iperf3_server(port);
            wait_listening(port, Duration::from_secs(10));
            (port, Some(p), None)
        };
        let mut c = cfg(port);
        c.time_s = 3;
        c.cntl_ka = Some(KeepAlive::parse("30/5/3").expect("spec"));
        let run = std::thread::spawn(move || run_client_retry(&c));
        std::thread::sleep(Duration::from_millis(1500));
        let (conns, timers) = keepalive_timers(port);
        let report = run.join().expect("client thread");
        assert!(report.is_ok(), "{peer}: {report:?}");
        assert_eq!(
            (conns, timers),
            (2, 1),
            "{peer}: control + one stream, one keepalive timer"
        );
        if let Some(p) = iperf3 {
            let (status, out, err) = p.finish(Duration::from_secs(15));
            iperf3_json(status, &out, &err);
        }
        drop(hl);
    }
}
