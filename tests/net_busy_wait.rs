//! The client side of a busy server: `bench net` (and through the same
//! piece doctor and tune) wait for a peer that answers ACCESS_DENIED with
//! check's bounded random back-off, say that they wait, and succeed once the
//! other test is over; a peer busy past the window fails naming it. The busy
//! servers are real: `iperf3 -s` (Debian's) and `hlctl serve` on loopback,
//! kept busy by a real `iperf3 -c` of someone else.

mod common;

use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::HLCTL;
use common::net::*;
use hlctl::bench::net::{NetError, run_client_waiting};
use hlctl::bench::progress::{Cancel, ProgressEvent};

/// A server that listens (≤ 5 s), kept as a guarded child.
fn listening(port: u16, cmd: &mut Command) -> Proc {
    let p = Proc::spawn(cmd);
    wait_listening(port, Duration::from_secs(5));
    p
}

fn iperf3_s(port: u16) -> Proc {
    listening(
        port,
        Command::new("iperf3").args(["-s", "-B", "127.0.0.1", "-p", &port.to_string()]),
    )
}

fn hlctl_serve(port: u16) -> Proc {
    listening(
        port,
        Command::new(HLCTL).args(["serve", "--bind", "127.0.0.1", "--port", &port.to_string()]),
    )
}

/// Someone else's `iperf3 -c` test of `secs` seconds, running once this
/// returns (its first interval line is out).
fn someone_else(port: u16, secs: u32) -> Proc {
    let p = Proc::spawn(Command::new("iperf3").args([
        "-c",
        "127.0.0.1",
        "-p",
        &port.to_string(),
        "-t",
        &secs.to_string(),
    ]));
    std::thread::sleep(Duration::from_millis(800));
    p
}

#[test]
fn a_second_client_waits_for_a_busy_iperf3_then_measures() {
    let port = free_port();
    let _server = iperf3_s(port);
    let other = someone_else(port, 3);
    let said = Mutex::new(Vec::<String>::new());
    let progress = |e: ProgressEvent| said.lock().unwrap().push(e.message);
    let mut cfg = client_cfg(port, 1);
    cfg.busy_window = Duration::from_secs(30);
    let t0 = Instant::now();
    let (report, retries) = run_client_waiting(&cfg, &progress, &Cancel::new(), &mut || {})
        .expect("the second client measures once the first test is over");
    let waited = t0.elapsed();
    let (status, out, _) = other.finish(Duration::from_secs(20));
    assert!(status.is_some_and(|s| s.success()), "the other test: {out}");
    assert!(report.main.received_bytes > 0, "{report:?}");
    assert!(retries >= 1, "the server was busy: at least one retry");
    // It waited for the other test (≈ 2 s of its 3 were left), not a minute.
    assert!(
        waited >= Duration::from_millis(1500) && waited < Duration::from_secs(25),
        "{waited:?}"
    );
    let said = said.lock().unwrap();
    let waits: Vec<_> = said
        .iter()
        .filter(|m| m.contains("127.0.0.1") && m.contains("busy running another test; waiting"))
        .collect();
    assert_eq!(waits.len() as u32, retries, "each wait is said: {said:?}");
}

#[test]
fn a_peer_busy_past_the_window_fails_naming_the_window() {
    let port = free_port();
    let _server = iperf3_s(port);
    let _other = someone_else(port, 10);
    let mut cfg = client_cfg(port, 1);
    cfg.busy_window = Duration::from_secs(2);
    let t0 = Instant::now();
    let e = run_client_waiting(&cfg, &|_: ProgressEvent| {}, &Cancel::new(), &mut || {})
        .expect_err("busy for longer than the window");
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    assert!(
        matches!(e, NetError::BusyTooLong { window_s: 2, .. }),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("127.0.0.1") && msg.contains("busy for the whole 2 s window"),
        "{msg}"
    );
    // A window of 0 fails at once, as before.
    cfg.busy_window = Duration::ZERO;
    let e = run_client_waiting(&cfg, &|_: ProgressEvent| {}, &Cancel::new(), &mut || {});
    assert!(matches!(e, Err(NetError::ServerBusy)), "{e:?}");
}

#[test]
fn bench_net_against_a_busy_hlctl_serve_says_it_waits_then_succeeds_or_fails_at_the_bound() {
    let port = free_port();
    let _server = hlctl_serve(port);
    let peer = format!("127.0.0.1:{port}");
    let other = someone_else(port, 3);
    let (status, out, err) = Proc::spawn(Command::new(HLCTL).args([
        "--local",
        "bench",
        "net",
        "-c",
        &peer,
        "-t",
        "1",
        "--busy-window",
        "30",
    ]))
    .finish(Duration::from_secs(40));
    assert!(status.is_some_and(|s| s.success()), "{out}\n{err}");
    assert!(
        out.contains("busy running another test; waiting"),
        "the wait is said: {out}"
    );
    assert!(out.contains("receiver"), "a result after the wait: {out}");
    let _ = other.finish(Duration::from_secs(20));

    let _other = someone_else(port, 10);
    let (status, out, err) = Proc::spawn(Command::new(HLCTL).args([
        "--local",
        "bench",
        "net",
        "-c",
        &peer,
        "-t",
        "1",
        "--busy-window",
        "1",
    ]))
    .finish(Duration::from_secs(20));
    assert_eq!(status.and_then(|s| s.code()), Some(1), "{out}\n{err}");
    assert!(
        err.contains("busy for the whole 1 s window"),
        "a clear error: {err}"
    );
}
