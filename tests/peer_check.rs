//! A dead peer costs at most a few seconds: `doctor --peer` and `tune` check
//! the peer first (a TCP connection within 2 s, then iperf3's first answer
//! within 2 s) and stop with the reason and exit code 1 before any long work.
//! Peers: a closed port on 127.0.0.1 (refused) and a listener that accepts
//! and never answers (silent); tune runs on a veth in a namespace of the
//! test's own, and its settings are left as they were.

mod common;

use std::net::TcpListener;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::NetNs;

const LIMIT: Duration = Duration::from_secs(3);

/// A port on 127.0.0.1 where nothing listens.
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Run `cmd`, timed; its output and how long it took.
fn timed(cmd: &mut Command) -> (Output, Duration) {
    let t = Instant::now();
    let out = common::die_with_test(cmd).output().expect("hlctl runs");
    (out, t.elapsed())
}

fn hlctl(state: &tempfile::TempDir) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hlctl"));
    c.arg("--state-dir").arg(state.path());
    c
}

/// Exit code 1, under LIMIT, and `want` in the message naming the peer.
fn assert_stopped(out: &Output, took: Duration, peer: &str, want: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", common::output_text(out));
    assert!(took < LIMIT, "took {took:?}: {err}");
    assert!(err.contains(peer) && err.contains(want), "{err}");
}

#[test]
fn doctor_stops_at_once_on_a_refusing_peer() {
    let state = tempfile::tempdir().unwrap();
    let peer = format!("127.0.0.1:{}", closed_port());
    let (out, took) = timed(hlctl(&state).args(["doctor", "--peer", &peer]));
    assert_stopped(&out, took, &peer, "connection refused");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("hlctl serve"),
        "says what to run there"
    );
}

#[test]
fn doctor_stops_at_once_on_a_silent_peer() {
    let state = tempfile::tempdir().unwrap();
    // The kernel accepts connections to it; nothing ever answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let peer = format!("127.0.0.1:{}", silent.local_addr().unwrap().port());
    let (out, took) = timed(hlctl(&state).args(["doctor", "--peer", &peer]));
    assert_stopped(&out, took, &peer, "no iperf3 answer within 2.0 s");
    drop(silent);
}

/// `hlctl tune va --peer PEER --yes` in `ns`, where `va` is a veth.
fn tune_in(ns: &NetNs, peer: &str) -> (Output, Duration) {
    let (state, sysctl) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut c = Command::new("ip");
    c.args(["netns", "exec", &ns.name, env!("CARGO_BIN_EXE_hlctl")])
        .arg("--state-dir")
        .arg(state.path())
        .arg("--sysctl-dir")
        .arg(sysctl.path())
        .args(["tune", "va", "--peer", peer, "--yes", "--time", "2"]);
    let r = timed(&mut c);
    let left: Vec<_> = std::fs::read_dir(sysctl.path()).unwrap().collect();
    assert!(left.is_empty(), "tune wrote sysctl files: {left:?}");
    r
}

fn link_line(ns: &NetNs) -> String {
    String::from_utf8_lossy(&ns.ip(&["-d", "link", "show", "va"]).stdout).into_owned()
}

#[test]
fn tune_stops_at_once_on_a_dead_peer_and_changes_nothing() {
    common::require_root("tune needs root and a namespace");
    let ns = NetNs::new();
    ns.veth("va", "vb");
    let before = link_line(&ns);
    // Refused: a closed port inside the namespace.
    let peer = "127.0.0.1:5299".to_string();
    let (out, took) = tune_in(&ns, &peer);
    assert_stopped(&out, took, &peer, "connection refused");
    // Silent: a listener inside the namespace that never answers.
    let silent = ns.run_in(|| TcpListener::bind("127.0.0.1:0").unwrap());
    let peer = format!("127.0.0.1:{}", silent.local_addr().unwrap().port());
    let (out, took) = tune_in(&ns, &peer);
    assert_stopped(&out, took, &peer, "no iperf3 answer within 2.0 s");
    assert_eq!(link_line(&ns), before, "the veth's settings did not change");
}

/// `hlctl check` with a silent peer: the peer is named within seconds (not
/// after three timed-out attempts each way), its reason said once, and the
/// check exits 1 ("not measured").
#[test]
fn check_names_a_silent_peer_at_once_and_once() {
    let state = tempfile::tempdir().unwrap();
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let peer = format!("127.0.0.1:{}", silent.local_addr().unwrap().port());
    let (out, took) =
        timed(hlctl(&state).args(["check", "--peer", &peer, "--no-cpu", "--time", "1"]));
    drop(silent);
    let text = common::output_text(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(took < LIMIT, "took {took:?}: {text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("not measured:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        line.matches("no iperf3 answer within 2.0 s").count(),
        1,
        "{line}"
    );
}
