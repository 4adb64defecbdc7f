//! Hosts never measure on top of each other: while the peer's `hlctl serve`
//! runs someone else's test, `hlctl check` is told busy, backs off at
//! random, retries, records the retries, and only reports the figure of a
//! test the peer ran alone; when the peer stays busy for the whole window,
//! nothing is reported for it, not even an idle round-trip time (that is
//! taken only once the peer has taken our test).

mod common;

use common::output_text as text;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::lab::{ChildGuard, HLCTL, Lab, PEER_IP};

#[test]
fn a_busy_peer_is_retried_within_the_window_and_never_measured_while_busy() {
    let _serial = common::lab::serial();
    let lab = Lab::new();
    let port = "5201";
    let peer_state = lab.dir.path().join("peer-state");
    let _serve = ChildGuard(
        Command::new("ip")
            .args(["netns", "exec", &lab.peer.name, HLCTL, "--state-dir"])
            .arg(&peer_state)
            .args(["serve", "-p", port])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    assert!(common::fleet::port_answers(&lab.here, PEER_IP, 5201));
    let peer = format!("{PEER_IP}:{port}");
    // Someone else's 6-second test keeps the peer busy.
    let busy_for = |secs: &'static str| {
        let ns = lab.here.name.clone();
        std::thread::spawn(move || {
            Command::new("ip")
                .args([
                    "netns", "exec", &ns, "iperf3", "-c", PEER_IP, "-p", "5201", "-t", secs,
                ])
                .output()
                .unwrap()
        })
    };
    let other = busy_for("6");
    std::thread::sleep(Duration::from_millis(700));
    let t0 = Instant::now();
    let o = lab.hlctl(&[
        "check",
        "--peer",
        &peer,
        "--no-cpu",
        "--time",
        "1",
        "--busy-window",
        "60",
        "--json",
    ]);
    let took = t0.elapsed();
    let other = other.join().unwrap();
    assert!(other.status.success(), "{}", text(&other));
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let dirs = v["check"]["peers"][0]["directions"].as_array().unwrap();
    let up = &dirs[0];
    assert!(up["busy_retries"].as_u64().unwrap() >= 1, "{up}");
    assert!(up["bps"].as_f64().unwrap() > 0.0, "{up}");
    // The figure came after the other test: the run waited for it.
    assert!(
        took > Duration::from_secs(4),
        "{took:?}: measured while the peer was busy?"
    );
    // The idle round-trip time is taken once the peer has taken our test.
    let rtt = &v["check"]["peers"][0]["rtt_seconds"];
    assert!(rtt.as_f64().is_some_and(|s| s > 0.0), "{rtt}");
    println!(
        "busy peer: {} retries, then {:.0} Mbit/s after {:.1} s (idle rtt {:.3} ms)",
        up["busy_retries"],
        up["bps"].as_f64().unwrap() / 1e6,
        took.as_secs_f64(),
        rtt.as_f64().unwrap() * 1e3
    );

    // Busy for longer than the window: no figure, the check fails and says so.
    let other = busy_for("8");
    std::thread::sleep(Duration::from_millis(700));
    let o = lab.hlctl(&[
        "check",
        "--peer",
        &peer,
        "--no-cpu",
        "--time",
        "1",
        "--busy-window",
        "3",
        "--json",
    ]);
    other.join().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let up = &v["check"]["peers"][0]["directions"][0];
    assert!(up["bps"].is_null(), "{up}");
    assert!(
        up["error"]
            .as_str()
            .unwrap()
            .contains("busy for the whole 3 s window"),
        "{up}"
    );
    assert!(v["check"]["network"][0]["upload_bps"].is_null(), "{v}");
    // The peer was never ours: no "idle" round-trip time was taken while it
    // served someone else.
    let peer0 = &v["check"]["peers"][0];
    assert!(peer0["directions"][1]["bps"].is_null(), "{peer0}");
    assert!(peer0["rtt_seconds"].is_null(), "{peer0}");
    // Nothing stored for that direction: the history has no upload figure from it.
    let h = lab.json(&["history", "--kind", "check", "--limit", "1"]);
    let metrics = h["results"][0]["metrics"].as_array().unwrap();
    assert!(
        !metrics.iter().any(|m| m["name"] == "net upload"),
        "{metrics:?}"
    );
}
