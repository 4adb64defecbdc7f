//! `hlctl serve`'s limits, for a server that runs all year: a client that
//! stalls at any phase (cookie, parameters, streams, results) is dropped
//! within the setup timeout, one that stalls while its test runs (no data
//! either way, no control message) within the stall timeout, and the next
//! client, Debian's iperf3 3.12, is served; a test longer
//! than `--server-max-duration` is refused (iperf3 3.20's error 37) and one
//! that runs past it is ended (160); -P above the cap and a rate above the
//! limit are refused as iperf3 refuses them (6, 27), and a test that runs
//! faster than the limit is ended. The clients are real `iperf3` 3.12 and
//! hlctl's own, or raw control connections for the stalls.

mod common;

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::net::*;
use hlctl::bench::net::{NetError, ServerConfig, run_client, run_client_waiting};
use hlctl::bench::progress::{Cancel, NoProgress};
use serde_json::json;

const SERVER_ERROR: u8 = 0xFE;

fn params(time: u32, parallel: u32) -> serde_json::Value {
    json!({"tcp": true, "omit": 0, "time": time, "num": 0, "blockcount": 0, "parallel": parallel,
           "len": 131072, "client_version": "3.12"})
}

/// The server's SERVER_ERROR on `raw`: its iperf3 error number.
fn server_error(raw: &Raw) -> i32 {
    assert_eq!(raw.byte(), Some(SERVER_ERROR), "expected SERVER_ERROR");
    let n = raw.exact(8).expect("i_errno and errno");
    i32::from_be_bytes([n[0], n[1], n[2], n[3]])
}

/// Debian's iperf3 3.12 is served (it does not wait for a busy server: a
/// session still ending is tried again, for at most 5 s).
fn iperf3_is_served(server: &HlServer) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, out, err) = iperf3_client(server.port(), 1, &[]);
        if out.contains("busy") && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(200));
            continue;
        }
        let v = iperf3_json(status, &out, &err);
        assert!(
            v["end"]["sum_received"]["bytes"].as_u64() > Some(0),
            "{out}"
        );
        break;
    }
    std::thread::sleep(Duration::from_millis(300));
}

fn real_client_succeeds(server: &HlServer) {
    // A session still ending (the dropped client's sockets) answers busy
    // for a moment: waited for as every client waits.
    let mut c = client_cfg(server.port(), 1);
    c.busy_window = Duration::from_secs(10);
    let (r, _) = run_client_waiting(&c, &NoProgress, &Cancel::new(), &mut || {})
        .expect("the next client is served");
    assert!(r.main.received_bytes > 0);
    // The session returns to idle a moment after its outcome is counted.
    std::thread::sleep(Duration::from_millis(300));
}

/// A raw control connection whose cookie the server took (PARAM_EXCHANGE
/// read), tried again while the last session is still ending (≤ 5 s).
fn raw_accepted(server: &HlServer, c: &[u8; 37]) -> Raw {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let raw = Raw::connect(server.addr);
        raw.send(c);
        match raw.byte() {
            Some(9) => return raw,
            b if Instant::now() >= deadline => panic!("never PARAM_EXCHANGE: {b:?}"),
            _ => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// A raw client through CREATE_STREAMS with its one TCP stream connected,
/// the test running (TEST_START, TEST_RUNNING read).
fn raw_running(server: &HlServer, seed: u8, time: u32, reverse: bool) -> (Raw, TcpStream) {
    let c = cookie(seed);
    let raw = raw_accepted(server, &c);
    let mut p = params(time, 1);
    if reverse {
        p["reverse"] = json!(true);
    }
    raw.send_json(&p);
    assert_eq!(raw.byte(), Some(10), "CREATE_STREAMS");
    let s = TcpStream::connect_timeout(&server.addr, Duration::from_secs(5)).expect("data");
    (&s).write_all(&c).expect("stream cookie");
    assert_eq!(raw.byte(), Some(1), "TEST_START");
    assert_eq!(raw.byte(), Some(2), "TEST_RUNNING");
    (raw, s)
}

#[test]
fn a_client_stalled_at_each_phase_is_dropped_within_the_timeout_and_the_next_is_served() {
    let mut cfg = ServerConfig::new(0);
    cfg.setup_timeout = Duration::from_secs(1);
    cfg.stall_timeout = Duration::from_secs(1);
    let server = HlServer::start(cfg);
    let phases = [
        "cookie",
        "parameters",
        "streams",
        "running",
        "running-reverse",
        "results",
    ];
    for (i, phase) in phases.iter().enumerate() {
        let _held = match *phase {
            "cookie" => {
                let raw = Raw::connect(server.addr);
                raw.send(&cookie(10)[..20]);
                (raw, None)
            }
            "parameters" => {
                let raw = raw_accepted(&server, &cookie(11));
                raw.send(&[0, 0, 0, 200]); // a length, then nothing
                (raw, None)
            }
            "streams" => {
                let raw = raw_accepted(&server, &cookie(12));
                raw.send_json(&params(1, 1));
                assert_eq!(raw.byte(), Some(10)); // and no stream ever comes
                (raw, None)
            }
            "running" => {
                // A 30 s test whose client sends nothing at all.
                let (r, s) = raw_running(&server, 14, 30, false);
                (r, Some(s))
            }
            "running-reverse" => {
                // A 30 s -R test whose client never reads what it is sent.
                let (r, s) = raw_running(&server, 15, 30, true);
                (r, Some(s))
            }
            _ => {
                let (r, s) = raw_running(&server, 13, 1, false);
                (&s).write_all(&[7u8; 65536]).expect("data");
                r.send(&[4]); // TEST_END
                assert_eq!(r.byte(), Some(13), "EXCHANGE_RESULTS");
                (r, Some(s)) // and no results ever come
            }
        };
        let t0 = Instant::now();
        // Each phase leaves two outcomes: the dropped client, the next one.
        let outcomes = server.wait_outcomes(2 * i + 1, Duration::from_secs(10));
        let took = t0.elapsed();
        match outcomes.get(2 * i) {
            Some(Err(e)) => assert!(e.contains("timed out"), "{phase}: {e}"),
            other => panic!("{phase}: expected a dropped client, got {other:?}"),
        }
        // Dropped within its 1 s timeout (and scheduling slack; a reverse
        // test first fills the socket buffers), not held.
        assert!(took < Duration::from_secs(4), "{phase}: held for {took:?}");
        iperf3_is_served(&server);
    }
}

#[test]
fn a_test_longer_than_the_maximum_is_refused_and_one_running_past_it_is_ended() {
    let mut cfg = ServerConfig::new(0);
    cfg.max_duration = Some(Duration::from_secs(2));
    let server = HlServer::start(cfg);
    // iperf3 3.12 asking for 5 s: refused at its parameters.
    // (3.12 predates error 37: it names the number, and exits 0 under -J.)
    let (_, out, _) = iperf3_client(server.port(), 5, &[]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("iperf3 -J");
    assert!(
        v["error"].as_str().is_some_and(|e| e.contains("37")),
        "iperf3 names error 37: {out}"
    );
    assert!(
        v["intervals"].as_array().is_some_and(|i| i.is_empty()),
        "{out}"
    );
    // hlctl's client names iperf3 3.20's reason.
    let e = run_client(&client_cfg(server.port(), 3), &NoProgress, &Cancel::new()).unwrap_err();
    assert!(
        e.to_string().contains("exceeds the server's maximum"),
        "{e}"
    );
    // Within the maximum, a client that never says TEST_END: ended at the
    // maximum (and its short grace) with error 160.
    let t0 = Instant::now();
    let (raw, _s) = raw_running(&server, 20, 2, false);
    // The server ends it 2 s + 3 s of grace after it started: the raw
    // client's usual 5 s read timeout would race that, so it waits longer.
    raw.s
        .set_read_timeout(Some(Duration::from_secs(15)))
        .expect("timeout");
    assert_eq!(server_error(&raw), 160, "IESERVERTESTDURATIONEXPIRED");
    let took = t0.elapsed();
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(8),
        "{took:?}"
    );
    // A test within the maximum runs.
    real_client_succeeds(&server);
}

#[test]
fn streams_above_the_cap_and_rates_above_the_limit_are_refused_as_iperf3_refuses_them() {
    let mut cfg = ServerConfig::new(0);
    cfg.max_streams = Some(2);
    cfg.max_bitrate_bps = Some(50_000_000);
    let server = HlServer::start(cfg);
    let (_, out, _) = iperf3_client(server.port(), 1, &["-P", "3"]);
    assert!(
        out.contains("number of parallel streams too large"),
        "iperf3's own words: {out}"
    );
    let (_, out, _) = iperf3_client(server.port(), 1, &["-P", "2", "-b", "30M"]);
    assert!(
        out.contains("total required bandwidth is larger than server limit"),
        "iperf3's own words: {out}"
    );
    // Within both: served.
    let (status, out, err) = iperf3_client(server.port(), 1, &["-P", "2", "-b", "20M"]);
    let v = iperf3_json(status, &out, &err);
    assert!(
        v["end"]["sum_received"]["bytes"].as_u64() > Some(0),
        "{out}"
    );
    // Unlimited TCP runs faster than 50 Mbit/s on loopback: ended as over the limit.
    let mut c = client_cfg(server.port(), 5);
    c.parallel = 1;
    let t0 = Instant::now();
    let e = run_client(&c, &NoProgress, &Cancel::new()).unwrap_err();
    assert!(t0.elapsed() < Duration::from_secs(4), "{:?}", t0.elapsed());
    match &e {
        NetError::ServerError { .. } => {}
        other => panic!("expected the server's error, got {other:?}"),
    }
    assert!(e.to_string().contains("bandwidth"), "{e}");
    let outcomes = server.wait_outcomes(4, Duration::from_secs(10));
    assert!(
        outcomes.last().is_some_and(|o| o
            .as_ref()
            .is_err_and(|e| e.contains("allows at most 50000000"))),
        "{outcomes:?}"
    );
}
