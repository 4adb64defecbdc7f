//! Interop on loopback with the real iperf3 (Debian's 3.12), both ways, and
//! hlctl with itself. Each side's byte counts must agree: the figure one
//! program reports must equal what the other counted (the results exchange),
//! and sender and receiver must agree within 1% (UDP: after declared loss).

mod common;

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use common::net::*;
use hlctl::bench::net::{DirectionSummary, NetReport, Protocol, ServerConfig, TestDirection};

const SECS: u32 = 2;

/// One loopback throughput test at a time: on 2 cores two concurrent tests
/// starve iperf3's single thread and its counts lag (see `Case::window`).
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

#[derive(Clone, Copy)]
struct Case {
    udp: bool,
    parallel: u32,
    direction: TestDirection,
    rate: Option<u64>,
    /// `-O`: seconds at the start that do not count.
    omit: u32,
}

const TCP: Case = Case {
    udp: false,
    parallel: 1,
    direction: TestDirection::Forward,
    rate: None,
    omit: 0,
};

/// Multi-stream and `--bidir` cases run with a 1 MiB window on both ends:
/// iperf3 3.12 reads every stream from one thread, and when that thread falls
/// behind (our sender threads outpace it, or the 2-core machine is busy) up
/// to a whole receive buffer per stream (tcp_rmem allows 32 MiB) sits unread
/// when TEST_END arrives: counted by the sender, never by iperf3. Bounding the
/// window keeps the 1% check about counting rather than about machine load;
/// single-stream cases use the default buffers.
const MULTI_WINDOW: u32 = 1024 * 1024;

impl Case {
    fn iperf3_args(&self) -> Vec<String> {
        let mut a = Vec::new();
        if self.udp {
            a.push("-u".to_string());
        }
        if let Some(r) = self.rate {
            a.push("-b".into());
            a.push(r.to_string());
        }
        a.push("-P".into());
        a.push(self.parallel.to_string());
        if self.omit > 0 {
            a.push("-O".into());
            a.push(self.omit.to_string());
        }
        match self.direction {
            TestDirection::Forward => {}
            TestDirection::Reverse => a.push("-R".into()),
            TestDirection::Bidir => a.push("--bidir".into()),
        }
        if let Some(w) = self.window() {
            a.push("-w".into());
            a.push(w.to_string());
        }
        a
    }

    fn window(&self) -> Option<u32> {
        (self.parallel > 1 || self.direction == TestDirection::Bidir).then_some(MULTI_WINDOW)
    }

    fn client_cfg(&self, port: u16) -> hlctl::bench::net::ClientConfig {
        let mut c = client_cfg(port, SECS);
        c.protocol = if self.udp {
            Protocol::Udp
        } else {
            Protocol::Tcp
        };
        c.parallel = self.parallel;
        c.direction = self.direction;
        c.bandwidth_bps = self.rate;
        c.window = self.window();
        c.omit_s = self.omit;
        c
    }
}

/// (client → server, server → client) totals of one of our reports.
fn directions(r: &NetReport) -> (Option<&DirectionSummary>, Option<&DirectionSummary>) {
    match r.direction {
        TestDirection::Forward => (Some(&r.main), None),
        TestDirection::Reverse => (None, Some(&r.main)),
        TestDirection::Bidir => (Some(&r.main), r.reverse.as_ref()),
    }
}

fn check_report_shape(r: &NetReport, case: &Case) {
    assert_eq!(r.streams, case.parallel);
    assert_eq!(
        r.protocol,
        if case.udp {
            Protocol::Udp
        } else {
            Protocol::Tcp
        }
    );
    let total = case.parallel as usize
        * if case.direction == TestDirection::Bidir {
            2
        } else {
            1
        };
    assert_eq!(r.per_stream.len(), total);
    assert!(
        r.duration_s > 1.5 && r.duration_s < 3.0,
        "duration {}",
        r.duration_s
    );
    assert!(r.cpu.local_percent > 0.0, "no local CPU accounted");
    if case.udp {
        assert!(
            r.main.jitter_ms.is_some()
                && r.main.lost_packets.is_some()
                && r.main.lost_percent.is_some()
        );
        assert!(r.main.retransmits.is_none());
    } else {
        assert!(r.main.jitter_ms.is_none());
    }
}

/// Compare our report with iperf3's own counts (`iperf3_is_client` tells
/// which end iperf3 was).
fn check_against_iperf3(r: &NetReport, v: &serde_json::Value, case: &Case, iperf3_is_client: bool) {
    let (own_sent, own_received) = iperf3_own_bytes(v);
    let (c2s, s2c) = directions(r);
    let (iperf3_sends_on, iperf3_receives_on) = if iperf3_is_client {
        (c2s, s2c)
    } else {
        (s2c, c2s)
    };
    if let Some(d) = iperf3_sends_on {
        assert!(
            within(own_sent, d.sent_bytes, 1.0),
            "iperf3 sent {own_sent}, our report says {}",
            d.sent_bytes
        );
    }
    if let Some(d) = iperf3_receives_on {
        assert!(
            within(own_received, d.received_bytes, 1.0),
            "iperf3 received {own_received}, our report says {}",
            d.received_bytes
        );
    }
    for (d, what) in [(c2s, "client→server"), (s2c, "server→client")] {
        if let Some(d) = d {
            assert_direction_consistent(d, case.udp, r.block_len, what);
        }
    }
    if case.udp {
        assert!(
            iperf3_sends_on.is_some() || iperf3_receives_on.is_some(),
            "no direction to compare"
        );
    }
}

/// hlctl client → `iperf3 -s -1`.
fn ours_to_iperf3(case: Case) {
    let _one_at_a_time = serial();
    let port = free_port();
    let server = iperf3_server(port);
    let report = run_client_retry(&case.client_cfg(port)).expect("hlctl client against iperf3 -s");
    let (status, out, err) = server.finish(Duration::from_secs(15));
    let v = iperf3_json(status, &out, &err);
    check_report_shape(&report, &case);
    check_against_iperf3(&report, &v, &case, false);
}

/// `iperf3 -c` → hlctl server: iperf3's JSON, and the server's report.
fn iperf3_against_ours(case: &Case) -> (serde_json::Value, NetReport, HlServer) {
    let server = HlServer::start(ServerConfig::new(0));
    let args = case.iperf3_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (status, out, err) = iperf3_client(server.port(), SECS, &args);
    let v = iperf3_json(status, &out, &err);
    let report = match server.wait_outcomes(1, Duration::from_secs(10)).first() {
        Some(Ok(r)) => r.clone(),
        other => panic!("server outcome: {other:?}"),
    };
    (v, report, server)
}

/// `iperf3 -c` → hlctl server.
fn iperf3_to_ours(case: Case) {
    let _one_at_a_time = serial();
    let (v, report, server) = iperf3_against_ours(&case);
    assert_eq!(report.side, "server");
    check_report_shape(&report, &case);
    check_against_iperf3(&report, &v, &case, true);
    // iperf3's own view of our numbers, via the results exchange, matches too.
    let e = &v["end"];
    if !case.udp && case.direction == TestDirection::Forward {
        let theirs = e["sum_received"]["bytes"].as_u64().expect("sum_received");
        assert_eq!(theirs, report.main.received_bytes);
    }
    server.stop();
}

#[test]
fn hlctl_to_iperf3_tcp() {
    ours_to_iperf3(TCP);
}

#[test]
fn hlctl_to_iperf3_tcp_parallel_4() {
    ours_to_iperf3(Case { parallel: 4, ..TCP });
}

#[test]
fn hlctl_to_iperf3_tcp_reverse() {
    ours_to_iperf3(Case {
        direction: TestDirection::Reverse,
        ..TCP
    });
}

#[test]
fn hlctl_to_iperf3_tcp_bidir() {
    ours_to_iperf3(Case {
        direction: TestDirection::Bidir,
        ..TCP
    });
}

#[test]
fn hlctl_to_iperf3_udp_500m() {
    ours_to_iperf3(Case {
        udp: true,
        rate: Some(500_000_000),
        ..TCP
    });
}

#[test]
fn hlctl_to_iperf3_udp_reverse() {
    ours_to_iperf3(Case {
        udp: true,
        rate: Some(500_000_000),
        direction: TestDirection::Reverse,
        ..TCP
    });
}

#[test]
fn iperf3_to_hlctl_tcp() {
    iperf3_to_ours(TCP);
}

#[test]
fn iperf3_to_hlctl_tcp_parallel_4() {
    iperf3_to_ours(Case { parallel: 4, ..TCP });
}

#[test]
fn iperf3_to_hlctl_tcp_reverse() {
    iperf3_to_ours(Case {
        direction: TestDirection::Reverse,
        ..TCP
    });
}

#[test]
fn iperf3_to_hlctl_tcp_bidir() {
    iperf3_to_ours(Case {
        direction: TestDirection::Bidir,
        ..TCP
    });
}

#[test]
fn iperf3_to_hlctl_udp_500m() {
    iperf3_to_ours(Case {
        udp: true,
        rate: Some(500_000_000),
        ..TCP
    });
}

#[test]
fn iperf3_to_hlctl_udp_reverse() {
    iperf3_to_ours(Case {
        udp: true,
        rate: Some(500_000_000),
        direction: TestDirection::Reverse,
        ..TCP
    });
}

/// UDP with an omit period: the datagrams each side reports are those after
/// it, as many as the bytes counted make (`packets × block = bytes`).
/// iperf3's counts run from the start of the test, and each side takes its
/// own omit count off the peer's (3.21 sends the peer's beside them): counts
/// exchanged from the wrong origin make a 3.12 client print half its
/// datagrams, or more than it sent.
const UDP_OMIT: Case = Case {
    udp: true,
    rate: Some(100_000_000),
    omit: 1,
    ..TCP
};

fn datagrams_of(bytes: u64, len: u32) -> u64 {
    bytes / u64::from(len)
}

#[test]
fn iperf3_to_hlctl_udp_omit_counts_datagrams_after_it_on_both_sides() {
    let _one_at_a_time = serial();
    let (v, report, server) = iperf3_against_ours(&UDP_OMIT);
    let ours = report.main.packets.expect("datagrams");
    assert_eq!(
        ours,
        datagrams_of(report.main.received_bytes, report.block_len)
    );
    // iperf3's view of hlctl's count, through the results exchange.
    let theirs = &v["end"]["sum_received"];
    let (packets, bytes) = (theirs["packets"].as_u64(), theirs["bytes"].as_u64());
    assert_eq!(packets, Some(ours), "iperf3 3.12 read {theirs}");
    assert_eq!(packets, bytes.map(|b| datagrams_of(b, report.block_len)));
    server.stop();
}

#[test]
fn hlctl_to_iperf3_udp_omit_counts_datagrams_after_it_on_both_sides() {
    let _one_at_a_time = serial();
    let port = free_port();
    let server = iperf3_server(port);
    let report = run_client_retry(&UDP_OMIT.client_cfg(port)).expect("hlctl client");
    let (status, out, err) = server.finish(Duration::from_secs(15));
    let v = iperf3_json(status, &out, &err);
    // The server's datagrams, from its results, less this side's own count
    // at the end of the omit period (3.12 sends no `omitted_packets`).
    let m = &report.main;
    let sent = datagrams_of(m.sent_bytes, report.block_len);
    let packets = m.packets.expect("datagrams");
    assert!(
        packets.abs_diff(sent) <= 1,
        "{packets} datagrams reported, {sent} sent: {m:?}"
    );
    let received = v["end"]["sum"]["packets"]
        .as_u64()
        .expect("iperf3's packets");
    assert_eq!(received, packets, "iperf3 3.12 counted {received}");
    // A loss is claimed only when it cannot have been in the omit period.
    match m.lost_packets {
        Some(lost) => assert!(lost <= packets),
        None => assert!(v["end"]["sum"]["lost_packets"].as_u64() > Some(0)),
    }
}

/// hlctl ↔ hlctl: both reports carry identical counts for every direction.
fn ours_to_ours(case: Case) {
    let _one_at_a_time = serial();
    let server = HlServer::start(ServerConfig::new(0));
    let client = run_client_retry(&case.client_cfg(server.port()))
        .expect("hlctl client against hlctl serve");
    let outcomes = server.wait_outcomes(1, Duration::from_secs(10));
    let srv = match outcomes.first() {
        Some(Ok(r)) => r.clone(),
        other => panic!("server outcome: {other:?}"),
    };
    check_report_shape(&client, &case);
    check_report_shape(&srv, &case);
    let (cc, cs) = directions(&client);
    let (sc, ss) = directions(&srv);
    for ((a, b), what) in [((cc, sc), "client→server"), ((cs, ss), "server→client")] {
        if let (Some(a), Some(b)) = (a, b) {
            assert_eq!(
                a.sent_bytes, b.sent_bytes,
                "{what} sent bytes differ between the reports"
            );
            assert_eq!(
                a.received_bytes, b.received_bytes,
                "{what} received bytes differ between the reports"
            );
            assert_direction_consistent(a, case.udp, client.block_len, what);
            if !case.udp {
                // Between two hlctl ends the counts are exact: each side stops
                // writing when it stops counting, and receivers count until
                // the sender's streams close.
                assert_eq!(
                    a.sent_bytes, a.received_bytes,
                    "{what}: hlctl↔hlctl counts differ"
                );
            }
        }
    }
    // Only the sending side has TCP_INFO.
    if !case.udp {
        let sender_is_client = case.direction != TestDirection::Reverse;
        let sender = if sender_is_client { &client } else { &srv };
        assert!(sender.main.rtt_ms.is_some(), "sender has no RTT");
        assert!(sender.main.retransmits.is_some());
    }
    server.stop();
}

#[test]
fn hlctl_to_hlctl_tcp_parallel_2() {
    ours_to_ours(Case { parallel: 2, ..TCP });
}

#[test]
fn hlctl_to_hlctl_tcp_bidir() {
    ours_to_ours(Case {
        direction: TestDirection::Bidir,
        ..TCP
    });
}

#[test]
fn hlctl_to_hlctl_udp_reverse() {
    ours_to_ours(Case {
        udp: true,
        rate: Some(200_000_000),
        direction: TestDirection::Reverse,
        ..TCP
    });
}

/// A state directory of a test's own (measure lock, history).
fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a state directory")
}

/// The CLI end to end: `hlctl serve --one-off` and `hlctl --json bench net`.
#[test]
fn cli_client_and_server() {
    let _one_at_a_time = serial();
    let port = free_port();
    let bin = env!("CARGO_BIN_EXE_hlctl");
    // State of their own (the measure lock, the history), not the host's:
    // one for the server and one for the client, as two hosts would have.
    let (server_state, client_state) = (tempdir(), tempdir());
    let hlctl = |state: &tempfile::TempDir| {
        let mut c = std::process::Command::new(bin);
        c.arg("--state-dir").arg(state.path());
        c
    };
    let serve = Proc::spawn(hlctl(&server_state).args([
        "serve",
        "--one-off",
        "--bind",
        "127.0.0.1",
        "--port",
        &port.to_string(),
    ]));
    let peer = format!("127.0.0.1:{port}");
    let (status, out, err) = until_listening("the server", || {
        let mut c = hlctl(&client_state);
        c.args([
            "--json", "bench", "net", "--peer", &peer, "-t", "1", "-P", "2",
        ]);
        c
    });
    assert!(status.is_some_and(|s| s.success()), "client failed: {err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("client JSON");
    for k in ["start", "intervals", "end"] {
        assert!(doc.get(k).is_some(), "iperf3's key {k} missing from {out}");
    }
    // hlctl's own report, under the one key -J adds to iperf3's layout.
    let v = &doc["hlctl"];
    for k in [
        "protocol",
        "streams",
        "duration_s",
        "sent_bps",
        "received_bps",
        "sent_bytes",
        "received_bytes",
        "retransmits",
        "rtt_ms",
        "jitter_ms",
        "lost_packets",
        "lost_percent",
        "cpu",
        "intervals",
    ] {
        assert!(v.get(k).is_some(), "key {k} missing from {out}");
    }
    assert_eq!(v["streams"], 2);
    assert!(v["sent_bytes"].as_u64().unwrap_or(0) > 0);
    assert!(!v["intervals"].as_array().expect("intervals").is_empty());
    let (status, out, _) = serve.finish(Duration::from_secs(10));
    assert!(
        status.is_some_and(|s| s.success()),
        "serve --one-off did not exit cleanly"
    );
    assert!(out.contains("receiver"), "server printed no summary: {out}");

    // Invalid input: exit code 2 with a message naming the problem.
    let (status, _, err) =
        Proc::spawn(hlctl(&client_state).args(["bench", "net", "--peer", "x", "-b", "1G/3"]))
            .finish(Duration::from_secs(10));
    assert_eq!(status.and_then(|s| s.code()), Some(2));
    assert!(err.contains("burst"), "{err}");
    // Nothing listening: a clear message.
    let (status, _, err) =
        Proc::spawn(hlctl(&client_state).args(["bench", "net", "--peer", &peer, "-t", "1"]))
            .finish(Duration::from_secs(20));
    assert_eq!(status.and_then(|s| s.code()), Some(1));
    assert!(
        err.contains("connection refused") && err.contains("hlctl serve"),
        "{err}"
    );
    // The measurement landed in the client's history, not the host's.
    assert!(client_state.path().join("history.db").exists());
}

/// `hlctl bench net -c 127.0.0.1 -p PORT` (iperf3's own spelling) measures
/// against a real `iperf3 -s -p PORT -1`, and the counts agree.
#[test]
fn cli_iperf3_spelling_to_iperf3() {
    let _one_at_a_time = serial();
    let port = free_port();
    let server = iperf3_server(port);
    let state = tempdir();
    let bin = env!("CARGO_BIN_EXE_hlctl");
    let (port_arg, secs) = (port.to_string(), SECS.to_string());
    let (status, out, err) = until_listening("iperf3 -s", || {
        let mut c = std::process::Command::new(bin);
        c.arg("--state-dir")
            .arg(state.path())
            .args(["bench", "net", "-c", "127.0.0.1", "-p", &port_arg])
            .args(["-t", &secs, "-J"]);
        c
    });
    assert!(status.is_some_and(|s| s.success()), "client failed: {err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("-J prints JSON");
    let report: NetReport = serde_json::from_value(doc["hlctl"].clone())
        .expect("-J holds hlctl's report under `hlctl`");
    let (status, out, err) = server.finish(Duration::from_secs(15));
    let v = iperf3_json(status, &out, &err);
    check_report_shape(&report, &TCP);
    check_against_iperf3(&report, &v, &TCP, false);
}

/// Received bit/s over the test (bytes of the received side over `SECS`).
fn received_gbps(d: &DirectionSummary) -> f64 {
    d.received_bytes as f64 * 8.0 / f64::from(SECS) / 1e9
}

/// `--fq-rate 1G` against iperf3 3.12: our sender's SO_MAX_PACING_RATE
/// gives 1 Gbit/s within 20 % (loopback unpaced runs at tens of Gbit/s).
/// Not -R: 3.12's server reads `fqrate` but sets it only on its listening
/// socket, before the parameters arrive, so its sender is never paced.
#[test]
fn hlctl_to_iperf3_fq_rate_1g() {
    let _one_at_a_time = serial();
    let port = free_port();
    let server = iperf3_server(port);
    let mut cfg = TCP.client_cfg(port);
    cfg.fq_rate_bps = Some(1_000_000_000);
    let report = run_client_retry(&cfg).expect("hlctl --fq-rate against iperf3 -s");
    let (status, out, err) = server.finish(Duration::from_secs(15));
    let v = iperf3_json(status, &out, &err);
    check_against_iperf3(&report, &v, &TCP, false);
    let g = received_gbps(directions(&report).0.expect("client → server figures"));
    assert!(
        (0.8..1.2).contains(&g),
        "--fq-rate 1G measured {g:.3} Gbit/s"
    );
}

/// 3.19's `skip_rx_copy` sent to iperf3 3.12 (which ignores keys it does not
/// know) gives an ordinary test whose counts agree, both directions.
#[test]
fn hlctl_to_iperf3_skip_rx_copy_is_ignored_by_312() {
    for direction in [TestDirection::Forward, TestDirection::Reverse] {
        let _one_at_a_time = serial();
        let port = free_port();
        let server = iperf3_server(port);
        let case = Case { direction, ..TCP };
        let mut cfg = case.client_cfg(port);
        cfg.skip_rx_copy = true;
        let report = run_client_retry(&cfg).expect("hlctl --skip-rx-copy against iperf3 -s");
        let (status, out, err) = server.finish(Duration::from_secs(15));
        let v = iperf3_json(status, &out, &err);
        check_report_shape(&report, &case);
        check_against_iperf3(&report, &v, &case, false);
    }
}

/// hlctl → hlctl serve with `--skip-rx-copy -R --fq-rate 1G`: our server
/// reads `fqrate` and paces its sender (about 1 Gbit/s arrives, against tens
/// unpaced), our client receives with MSG_TRUNC, and both reports agree.
#[test]
fn hlctl_to_hlctl_skip_rx_copy_reverse_fq_rate() {
    let _one_at_a_time = serial();
    let server = HlServer::start(ServerConfig::new(0));
    let case = Case {
        direction: TestDirection::Reverse,
        ..TCP
    };
    let mut cfg = case.client_cfg(server.port());
    cfg.skip_rx_copy = true;
    cfg.fq_rate_bps = Some(1_000_000_000);
    let client = run_client_retry(&cfg).expect("hlctl client against hlctl serve");
    let outcomes = server.wait_outcomes(1, Duration::from_secs(10));
    let srv = match outcomes.first() {
        Some(Ok(r)) => r.clone(),
        other => panic!("server outcome: {other:?}"),
    };
    let (c, s) = (directions(&client).1, directions(&srv).1);
    let (c, s) = (
        c.expect("client's -R figures"),
        s.expect("server's -R figures"),
    );
    assert_eq!(c.received_bytes, s.received_bytes);
    assert_eq!(c.sent_bytes, s.sent_bytes);
    // What the paced sender still held when it stopped counting (about its
    // send buffer: 2.5 MB at 1 Gbit/s) is not received: within 2 %.
    let short = c.sent_bytes.abs_diff(c.received_bytes) as f64 / c.sent_bytes as f64;
    assert!(
        short < 0.02,
        "sent {} received {}",
        c.sent_bytes,
        c.received_bytes
    );
    let g = received_gbps(c);
    assert!(
        (0.8..1.2).contains(&g),
        "-R --fq-rate 1G measured {g:.3} Gbit/s"
    );
    server.stop();
}

/// Flags that do not fit the test (-Z is TCP's, --gsro UDP's, --fq-rate
/// TCP's) and a --cntl-ka iperf3 would refuse are refused, naming the flag
/// (exit 2), before any peer is asked: never a silently different test.
#[test]
fn cli_refuses_mismatched_zerocopy_gsro_fq_rate_and_cntl_ka() {
    let state = tempdir();
    let bin = env!("CARGO_BIN_EXE_hlctl");
    for (flags, name) in [
        (&["-u", "-Z"][..], "-Z"),
        (&["-u", "--zerocopy"][..], "-Z"),
        (&["--gsro"][..], "--gsro"),
        (&["--cntl-ka=x"][..], "--cntl-ka"),
        (&["--cntl-ka=10/5/3"][..], "--cntl-ka"),
        (&["-u", "--fq-rate", "1G"][..], "--fq-rate"),
    ] {
        let out = std::process::Command::new(bin)
            .arg("--state-dir")
            .arg(state.path())
            .args(["bench", "net", "-c", "127.0.0.1", "-p", "9", "-t", "1"])
            .args(flags)
            .output()
            .expect("run hlctl");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(name), "{flags:?} does not name {name}: {err}");
    }
}
