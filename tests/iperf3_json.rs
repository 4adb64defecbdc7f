//! `hlctl bench net -J` writes iperf3 3.12's JSON: the same keys as the
//! real `iperf3 -c … -J` writes for the same test (TCP, -R, -P 4, -u), and a
//! published reader of iperf3's JSON — the PyPI package `iperf3`'s
//! `TestResult`, installed by scripts/setup.sh into a venv — reads from it
//! the figures hlctl's own report (the `hlctl` key) holds. The text keeps
//! iperf3's `sender` line: `… | grep sender` prints one line with the rate.
//! `--json-stream` writes iperf3 3.21's events with the keys of a captured
//! 3.21 stream, each line as the test reaches it.
//! All traffic is on 127.0.0.1.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use common::net::*;
use serde_json::Value;

/// The venv scripts/setup.sh makes, with the PyPI package iperf3 in it.
const VENV_PYTHON: &str = "/var/tmp/hlctl-venv/bin/python";

const SECS: &str = "2";

/// One test at a time: throughput tests share the CPUs.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Which server answers a case.
#[derive(Clone, Copy, Debug)]
enum Server {
    Iperf3,
    Hlctl,
}

/// Start the server on `port`; it serves one test and exits.
fn server(kind: Server, port: u16, state: &tempfile::TempDir) -> Proc {
    match kind {
        Server::Iperf3 => iperf3_server(port),
        Server::Hlctl => Proc::spawn(
            Command::new(env!("CARGO_BIN_EXE_hlctl"))
                .arg("--state-dir")
                .arg(state.path())
                .args(["serve", "--one-off", "--bind", "127.0.0.1"])
                .args(["--port", &port.to_string()]),
        ),
    }
}

/// `hlctl bench net -c 127.0.0.1 -p PORT -t SECS ARGS` once the server listens.
fn hlctl_client(port: u16, args: &[&str], state: &tempfile::TempDir) -> String {
    let port = port.to_string();
    let (status, out, err) = until_listening("the server", || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_hlctl"));
        c.arg("--state-dir")
            .arg(state.path())
            .args(["bench", "net", "-c", "127.0.0.1", "-p", &port, "-t", SECS])
            .args(args);
        c
    });
    assert!(status.is_some_and(|s| s.success()), "hlctl failed: {err}");
    out
}

/// Every key path of a JSON document (`.end.streams[].sender.bytes`).
fn paths(v: &Value, at: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                paths(x, &format!("{at}.{k}"), out);
            }
        }
        Value::Array(a) => {
            for x in a {
                paths(x, &format!("{at}[]"), out);
            }
        }
        _ => {
            out.insert(at.to_string());
        }
    }
}

/// The key paths of iperf3's own `-J` for the same test, against `iperf3 -s`.
fn iperf3_paths(args: &[&str]) -> BTreeSet<String> {
    let port = free_port();
    let srv = iperf3_server(port);
    // With -J iperf3 says "Connection refused" in its JSON, not on stderr.
    let mut tries = 0;
    let (status, out, err) = loop {
        let (status, out, err) = iperf3_client(port, SECS.parse().unwrap(), args);
        tries += 1;
        if !out.contains("Connection refused") || tries == 50 {
            break (status, out, err);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let v = iperf3_json(status, &out, &err);
    srv.finish(Duration::from_secs(15));
    let mut p = BTreeSet::new();
    paths(&v, "", &mut p);
    p
}

/// What `iperf3.TestResult(json_text)` reads, as JSON.
fn test_result(json_text: &str) -> Value {
    assert!(
        std::path::Path::new(VENV_PYTHON).exists(),
        "{VENV_PYTHON} with the PyPI package iperf3 is needed: run scripts/setup.sh"
    );
    let script = r#"
import json, sys, iperf3
r = iperf3.TestResult(sys.stdin.read())
keys = ["error", "protocol", "num_streams", "reverse", "type", "duration",
        "local_host", "local_port", "remote_host", "remote_port", "timesecs",
        "local_cpu_total", "remote_cpu_total",
        "sent_bytes", "sent_bps", "received_bytes", "received_bps", "retransmits",
        "bytes", "bps", "jitter_ms", "packets", "lost_packets", "lost_percent"]
print(json.dumps({k: getattr(r, k) for k in keys if hasattr(r, k)}))
"#;
    let mut child = Command::new(VENV_PYTHON)
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python runs");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(json_text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "TestResult could not read hlctl's JSON: {}\n{json_text}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the script prints JSON")
}

fn close(a: &Value, b: &Value, what: &str) {
    let (x, y) = (a.as_f64(), b.as_f64());
    let (Some(x), Some(y)) = (x, y) else {
        panic!("{what}: {a} vs {b}");
    };
    assert!(
        (x - y).abs() <= 1e-9 * x.abs().max(y.abs()),
        "{what}: TestResult read {x}, hlctl's own report says {y}"
    );
}

/// Keys iperf3 added after 3.12 to `start` (3.21's src/iperf_api.c:
/// `timestamp` and `test_start`), which hlctl writes too.
const NEWER_THAN_312: [&str; 6] = [
    ".start.timestamp.timemillisecs",
    ".start.test_start.bidir",
    ".start.test_start.fqrate",
    ".start.test_start.interval",
    ".start.test_start.gso",
    ".start.test_start.gro",
];

/// Run one case: the key set equals iperf3's, and TestResult reads hlctl's figures.
fn case(server_kind: Server, args: &[&str], streams: u64) {
    let _one = serial();
    let expected = iperf3_paths(args);
    let port = free_port();
    let (srv_state, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let srv = server(server_kind, port, &srv_state);
    let mut all = vec!["-J"];
    all.extend_from_slice(args);
    let out = hlctl_client(port, &all, &state);
    srv.finish(Duration::from_secs(15));
    let v: Value = serde_json::from_str(&out).expect("-J prints JSON");
    let mut got = BTreeSet::new();
    paths(&v, "", &mut got);
    let ours: BTreeSet<String> = got
        .iter()
        .filter(|p| !p.starts_with(".hlctl"))
        .cloned()
        .collect();
    let mut expected = expected;
    expected.extend(NEWER_THAN_312.map(String::from));
    assert_eq!(
        ours, expected,
        "{server_kind:?} {args:?}: the keys differ from iperf3 3.12's -J and 3.21's additions"
    );
    let ts = &v["start"]["timestamp"];
    let (secs, ms) = (ts["timesecs"].as_u64(), ts["timemillisecs"].as_u64());
    assert_eq!(
        ms.map(|m| m / 1000),
        secs,
        "timemillisecs is timesecs' moment: {ts}"
    );
    let test_start = &v["start"]["test_start"];
    assert_eq!(test_start["interval"], 1.0, "-i 1 by default: {test_start}");
    assert_eq!(test_start["bidir"], 0, "{test_start}");
    let own = &v["hlctl"];
    assert_eq!(own["side"], "client", "hlctl's own report is under `hlctl`");
    let r = test_result(&out);
    assert_eq!(r["type"], "client");
    assert_eq!(r["num_streams"], streams);
    assert_eq!(r["reverse"], args.contains(&"-R"));
    assert_eq!(r["remote_port"], port);
    assert!(r["local_port"].as_u64().unwrap_or(0) > 0, "{r}");
    assert_eq!(r["duration"], SECS.parse::<u64>().unwrap());
    close(&r["local_cpu_total"], &own["cpu"]["local_percent"], "cpu");
    if args.contains(&"-u") {
        assert_eq!(r["protocol"], "UDP");
        assert!(r["bps"].as_f64().unwrap() > 0.0, "{r}");
        close(&r["bps"], &own["sent_bps"], "bps");
        close(&r["jitter_ms"], &own["jitter_ms"], "jitter_ms");
        assert_eq!(r["lost_packets"], own["lost_packets"]);
        assert_eq!(r["packets"], own["packets"]);
        assert!(r["packets"].as_u64().unwrap() > 0, "{r}");
    } else {
        assert_eq!(r["protocol"], "TCP");
        assert!(r["received_bps"].as_f64().unwrap() > 0.0, "{r}");
        close(&r["sent_bps"], &own["sent_bps"], "sent_bps");
        close(&r["received_bps"], &own["received_bps"], "received_bps");
        assert_eq!(r["sent_bytes"], own["sent_bytes"]);
        assert_eq!(r["received_bytes"], own["received_bytes"]);
        assert_eq!(r["retransmits"], own["retransmits"]);
        assert!(r["retransmits"].is_u64(), "the sender's retransmits: {r}");
    }
}

#[test]
fn tcp_against_iperf3() {
    case(Server::Iperf3, &[], 1);
}

#[test]
fn reverse_against_hlctl_serve() {
    case(Server::Hlctl, &["-R"], 1);
}

#[test]
fn four_streams_against_hlctl_serve() {
    case(Server::Hlctl, &["-P", "4"], 4);
}

#[test]
fn udp_against_iperf3() {
    case(Server::Iperf3, &["-u", "-b", "50M"], 1);
}

/// The guide's line, `iperf3 -c HOST -t 10 | grep sender`, with hlctl in
/// iperf3's place: one line, with the rate.
#[test]
fn grep_sender_prints_one_line_with_the_rate() {
    let _one = serial();
    let port = free_port();
    let srv = iperf3_server(port);
    let state = tempfile::tempdir().unwrap();
    let line = format!(
        "{} --state-dir {} bench net -c 127.0.0.1 -p {port} -t {SECS} | grep sender",
        env!("CARGO_BIN_EXE_hlctl"),
        state.path().display()
    );
    let (status, out, err) = until_listening("iperf3 -s", || {
        let mut c = Command::new("bash");
        c.args(["-o", "pipefail", "-c", &line]);
        c
    });
    srv.finish(Duration::from_secs(15));
    assert!(status.is_some_and(|s| s.success()), "{line}: {err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    let line = lines[0];
    assert!(
        line.starts_with("[SUM]") && line.ends_with("sender"),
        "{line}"
    );
    assert!(line.contains("bits/sec"), "the rate: {line}");
}

/// One line of iperf3 3.17+'s `--json-stream`, read knowing only its
/// documented layout: a JSON object on one line with exactly `event` (a
/// string: start, interval, end, error, …) and `data`.
fn stream_event(line: &str) -> (String, Value) {
    let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
    let m = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {line}"));
    let keys: BTreeSet<&str> = m.keys().map(String::as_str).collect();
    assert_eq!(keys, BTreeSet::from(["data", "event"]), "{line}");
    let event = m["event"]
        .as_str()
        .unwrap_or_else(|| panic!("event: {line}"));
    (event.to_string(), m["data"].clone())
}

/// Each event's data key paths (`end` → `.streams[].sender.bytes`, …),
/// over every line of that event.
fn event_paths(lines: &[(String, Value)]) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (event, data) in lines {
        paths(data, "", out.entry(event.clone()).or_default());
    }
    out
}

/// iperf3 3.21's own `--json-stream` for `-t 2` (TCP), captured once
/// (tests/fixtures/iperf3-3.21/README.md).
const IPERF3_321_STREAM: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/iperf3-3.21/json-stream-tcp.jsonl"
);

/// `hlctl bench net --json-stream` against the real `iperf3 -s`: line by
/// line start, one interval a second, end, each event's data with exactly
/// the keys of iperf3 3.21's own stream for the same test (the captured
/// fixture: 3.21 has `start.fq_rate` and a TCP sender's `reorder`, which
/// 3.12's `-J` has not), and the interval data as iperf3 writes it.
#[test]
fn json_stream_lines_in_iperf3_321_layout() {
    let _one = serial();
    let fixture = std::fs::read_to_string(IPERF3_321_STREAM).expect("the 3.21 fixture");
    let expected = event_paths(&fixture.lines().map(stream_event).collect::<Vec<_>>());
    assert_eq!(
        expected.keys().collect::<Vec<_>>(),
        ["end", "interval", "start"],
        "the fixture"
    );
    let port = free_port();
    let (srv_state, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let srv = server(Server::Iperf3, port, &srv_state);
    let out = hlctl_client(port, &["--json-stream"], &state);
    srv.finish(Duration::from_secs(15));
    let events: Vec<(String, Value)> = out.lines().map(stream_event).collect();
    let names: Vec<&str> = events.iter().map(|(e, _)| e.as_str()).collect();
    let secs: usize = SECS.parse().unwrap();
    assert_eq!(names.first(), Some(&"start"), "{names:?}");
    assert_eq!(names.last(), Some(&"end"), "{names:?}");
    assert_eq!(
        names[1..names.len() - 1],
        vec!["interval"; secs],
        "{names:?}"
    );
    let got = event_paths(&events);
    for (event, keys) in &expected {
        let ours = got.get(event).cloned().unwrap_or_default();
        assert_eq!(
            &ours, keys,
            "the {event} event's data keys differ from iperf3 3.21's (ours left, 3.21's right)"
        );
    }
    let start = &events[0].1;
    assert!(
        start["connected"].as_array().is_some_and(|c| c.len() == 1),
        "{start}"
    );
    assert_eq!(start["test_start"]["protocol"], "TCP", "{start}");
    assert!(start["timestamp"]["timesecs"].is_u64(), "{start}");
    let mut interval_bytes = 0;
    for (_, data) in &events[1..=secs] {
        let sum = &data["sum"];
        for k in ["start", "end", "seconds", "bits_per_second"] {
            assert!(
                sum[k].is_f64() || sum[k].is_u64(),
                "interval sum.{k}: {data}"
            );
        }
        assert_eq!(sum["sender"], true, "{data}");
        assert_eq!(data["streams"].as_array().map(Vec::len), Some(1), "{data}");
        interval_bytes += sum["bytes"].as_u64().expect("interval bytes");
    }
    let end = &events[secs + 1].1;
    let sent = end["sum_sent"]["bytes"].as_u64().expect("sum_sent.bytes");
    assert!(
        interval_bytes > 0 && interval_bytes <= sent,
        "{interval_bytes} vs {sent}"
    );
}

/// `--json-stream` is live, as iperf3 3.17+'s: `hlctl --local bench net
/// -t 3 -i 1 -J --json-stream` against the real `iperf3 -s`, its stdout read
/// line by line as the lines arrive. The first interval comes at least a
/// second before the process exits (it ends a second into the 3-second
/// test), every line is `{"event","data"}` with a documented event, and
/// there is one interval per second (3, ±1).
#[test]
fn json_stream_lines_come_as_the_test_runs() {
    let _one = serial();
    let (time_s, interval_s) = (3.0, 1.0);
    let port = free_port();
    let srv_state = tempfile::tempdir().unwrap();
    let srv = server(Server::Iperf3, port, &srv_state);
    wait_listening(port, Duration::from_secs(5));
    let state = tempfile::tempdir().unwrap();
    let mut client = common::ChildGuard(
        Command::new(env!("CARGO_BIN_EXE_hlctl"))
            .arg("--state-dir")
            .arg(state.path())
            .args(["--local", "bench", "net", "-c", "127.0.0.1", "-p"])
            .arg(port.to_string())
            .args(["-t", &time_s.to_string(), "-i", &interval_s.to_string()])
            .args(["-J", "--json-stream"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("hlctl starts"),
    );
    let lines = arrivals(client.0.stdout.take().expect("stdout"));
    let exited = Instant::now();
    let status = client.0.wait().expect("hlctl is reaped");
    srv.finish(Duration::from_secs(15));
    assert!(status.success(), "hlctl: {status}; {lines:?}");
    let events: Vec<(Instant, String)> = lines
        .iter()
        .map(|(at, line)| (*at, stream_event(line).0))
        .collect();
    for (_, e) in &events {
        assert!(
            ["start", "interval", "end"].contains(&e.as_str()),
            "an event iperf3 does not write: {e}"
        );
    }
    let names: Vec<&str> = events.iter().map(|(_, e)| e.as_str()).collect();
    assert_eq!(names.first(), Some(&"start"), "{names:?}");
    assert_eq!(names.last(), Some(&"end"), "{names:?}");
    let intervals = names.iter().filter(|e| **e == "interval").count();
    let expected = (time_s / interval_s) as usize;
    assert!(
        intervals.abs_diff(expected) <= 1,
        "{intervals} intervals for -t {time_s} -i {interval_s}: {names:?}"
    );
    let first = events
        .iter()
        .find(|(_, e)| e == "interval")
        .map(|(at, _)| *at)
        .expect("an interval");
    let ahead = exited.duration_since(first);
    assert!(
        ahead >= Duration::from_secs(1),
        "the first interval came {ahead:?} before hlctl exited: the lines are not live"
    );
}

/// Each line of `out` with the moment it arrived, until it closes (the
/// process exited) or 30 s passed.
fn arrivals(out: impl std::io::Read + Send + 'static) -> Vec<(Instant, String)> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut got = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(l) => got.push(l),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return got,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                panic!("hlctl still runs after 30 s; lines so far: {got:?}")
            }
        }
    }
}
