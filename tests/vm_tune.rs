//! The bandwidth-delay cases, which need `netem` (only the VM's Debian kernel
//! has it): two namespaces joined by veth inside a qemu guest, 10 ms of netem
//! delay each way (20 ms RTT), and `iperf3 -s` in the peer namespace.
//!
//! - small TCP buffers (64 KiB maxima) planted on the tuned side: tune raises
//!   them, keeps the change, throughput rises at least 3× both ways, and the
//!   persisted sysctl.d file holds it;
//! - the same small buffers planted on the peer instead: tune keeps nothing
//!   and says the limit lies at the peer and what to change there.
//!
//! The guest has no D-Bus, so the tuner runs in-process (`hlctl tune` without
//! a daemon, i.e. the `--local` path: same journal and checks, no daemon-side
//! deadline). The guest is a private machine: the fixed port 5299 inside it
//! cannot collide with anything on the host.

mod common;

use common::vm::Vm;
use serde_json::Value;

const SCRIPT: &str = r#"
set -e
ip netns add a
ip netns add b
ip link add va type veth peer name vb
ip link set va netns a
ip link set vb netns b
ip -n a addr add 10.0.0.1/24 dev va
ip -n b addr add 10.0.0.2/24 dev vb
for n in a b; do ip -n $n link set lo up; done
ip -n a link set va up
ip -n b link set vb up
ip netns exec a tc qdisc add dev va root netem delay 10ms limit 10000
ip netns exec b tc qdisc add dev vb root netem delay 10ms limit 10000
ip netns exec b iperf3 -s -p 5299 -D
sleep 1
A_RMEM=$(cat /proc/sys/net/ipv4/tcp_rmem)
A_WMEM=$(ip netns exec a cat /proc/sys/net/ipv4/tcp_wmem)
# Case 1: small buffers here.
ip netns exec a sh -c 'echo "4096 16384 65536" > /proc/sys/net/ipv4/tcp_rmem; echo "4096 16384 65536" > /proc/sys/net/ipv4/tcp_wmem'
section here ip netns exec a hlctl --state-dir /tmp/s1 --sysctl-dir /tmp/d1 tune va --peer 10.0.0.2:5299 --yes --runs 3 --time 2 --no-mtu --json
section here-file cat /tmp/d1/90-hlctl.conf
# Case 2: defaults here, small buffers at the peer. Through a 64 KiB
# receive buffer whole runs get stuck at about a fifth of the rate (upload
# ~2 against ~11 Mbit/s, iperf3's own runs too: 2 of 12), about one run in
# seven. A 2-run baseline (--runs 3) lands in the slow mode both times about
# once in 50 tunes, and then a no-op's first run reads as a 5x gain: kept
# early, as the rule for a 3x gain says (CI, 2 Dec). --runs 5 takes a 4-run
# baseline, which shows both modes all but always.
ip netns exec a sh -c "echo '$A_RMEM' > /proc/sys/net/ipv4/tcp_rmem; echo '$A_WMEM' > /proc/sys/net/ipv4/tcp_wmem"
ip netns exec b sh -c 'echo "4096 16384 65536" > /proc/sys/net/ipv4/tcp_rmem; echo "4096 16384 65536" > /proc/sys/net/ipv4/tcp_wmem'
section peer ip netns exec a hlctl --state-dir /tmp/s2 --sysctl-dir /tmp/d2 tune va --peer 10.0.0.2:5299 --yes --runs 5 --time 2 --no-mtu --json
section peer-text ip netns exec a hlctl --state-dir /tmp/s2 history --kind tune --json
"#;

fn median(r: &Value, phase: &str, dir: &str) -> f64 {
    r[phase][dir]["median_bps"]
        .as_f64()
        .unwrap_or_else(|| panic!("{phase}.{dir}: {}", r[phase]))
}

#[test]
fn bandwidth_delay_buffers_here_are_raised_and_at_the_peer_are_named() {
    let out = Vm::builder()
        .binary(env!("CARGO_BIN_EXE_hlctl"))
        .binary("/usr/bin/iperf3")
        .iproute2()
        .module("veth")
        .module("sch_netem")
        .memory_mb(768)
        .script(SCRIPT)
        .timeout(540)
        .run();
    eprintln!("VM boot to power-off: {:.1} s", out.elapsed.as_secs_f64());
    out.assert_success();

    // Case 1: the tuner raises the buffers, keeps them, ≥3× both ways, persisted.
    let r = out.json("here");
    eprintln!(
        "case 1 report:\n{}",
        serde_json::to_string_pretty(&r["steps"]).unwrap()
    );
    let step = r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["candidate"] == "tcp-buffers")
        .expect("a tcp-buffers candidate");
    assert_eq!(step["status"], "kept", "{step}");
    for dir in ["upload", "download"] {
        let (b, a) = (median(&r, "baseline", dir), median(&r, "after", dir));
        assert!(a >= 3.0 * b, "{dir}: {b} → {a} bit/s is not 3×");
    }
    let file = out.section("here-file").text;
    let max = |key: &str| -> u64 {
        file.lines()
            .find_map(|l| l.strip_prefix(&format!("{key} = ")))
            .and_then(|v| v.split_whitespace().nth(2)?.parse().ok())
            .unwrap_or_else(|| panic!("{key} not persisted:\n{file}"))
    };
    assert!(max("net.ipv4.tcp_rmem") >= 16 << 20, "{file}");
    assert!(max("net.ipv4.tcp_wmem") >= 16 << 20, "{file}");

    // Case 2: nothing local to fix; the limit is named at the peer.
    let r = out.json("peer");
    eprintln!(
        "case 2 report:\nbaseline {}\nsteps {}\nlimits {}",
        r["baseline"],
        serde_json::to_string_pretty(&r["steps"]).unwrap(),
        serde_json::to_string_pretty(&r["limits"]).unwrap()
    );
    assert_eq!(
        r["kept"],
        serde_json::json!({}),
        "{}",
        serde_json::to_string_pretty(&r["steps"]).unwrap()
    );
    for s in r["steps"].as_array().unwrap() {
        assert_ne!(s["status"], "kept", "{s}");
    }
    let limits = r["limits"].as_array().unwrap();
    let up = limits.iter().find(|l| l["direction"] == "upload").unwrap();
    assert_eq!(up["limit"]["kind"], "peer_window", "{up}");
    let text = up["text"].as_str().unwrap();
    assert!(
        text.contains("the limit lies at the peer") && text.contains("net.ipv4.tcp_rmem"),
        "{text}"
    );
    let down = limits
        .iter()
        .find(|l| l["direction"] == "download")
        .unwrap();
    assert_eq!(down["limit"]["kind"], "peer_window", "{down}");
    assert!(
        down["text"].as_str().unwrap().contains("net.ipv4.tcp_wmem"),
        "{down}"
    );
}
