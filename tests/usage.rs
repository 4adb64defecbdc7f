//! "Do I need a faster link?" (issue 29, part 2): hlctld samples a link's
//! counters and `hlctl usage` answers from the rows it stored.
//!
//! The link is the lab's veth, shaped with `tc tbf` to 100 Mbit/s on the
//! sending side and named in `[usage] links = ["ta…:110M"]` (a veth's own
//! speed is nominal, so it is sampled only when asked, and judged against
//! the speed given there). hlctld runs in the lab's namespace on a private
//! bus (the real dbus-daemon and polkitd) with a test-only 500 ms interval.
//! Real iperf3 sends 10 s at 70 Mbit/s, then 10 s as fast as the shaper
//! lets it; the answer must match what was sent: peak and 95th percentile
//! within 10 % of the shaped rate, about 20 s above 50 % and 10 s above
//! 80 % of 110 Mbit/s, none above 95 %, and the bytes moved within 10 % of
//! what the counters moved. hlctld is stopped (SIGTERM) and started again
//! in between (the minute it was filling must be stored, not lost), and the
//! veth is deleted and created again (new counters from 0 under a new
//! ifindex) with traffic after it: no spike.

mod common;

use std::process::{Command, Output};
use std::time::Duration;

use common::bus::Rig;
use common::lab::{Lab, PEER_IP, serial};
use serde_json::Value;

const INTERVAL_MS: &str = "500";

/// `tc tbf` at 100 Mbit/s on the sending side.
fn shape(lab: &Lab) {
    lab.here.exec(&[
        "tc", "qdisc", "add", "dev", &lab.a, "root", "tbf", "rate", "100mbit", "burst", "32kbit",
        "latency", "50ms",
    ]);
}

fn tx_bytes(lab: &Lab) -> u64 {
    let out = lab.here.ip(&["-j", "-s", "link", "show", &lab.a]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v[0]["stats64"]["tx"]["bytes"].as_u64().unwrap()
}

/// `iperf3 -c` from the lab's side for `secs`, at `rate` (None: unlimited).
fn send(lab: &Lab, port: u16, secs: u32, rate: Option<&str>) {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", &lab.here.name, "iperf3", "-c", PEER_IP])
        .args(["-p", &port.to_string(), "-t", &secs.to_string()]);
    if let Some(r) = rate {
        c.args(["-b", r]);
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "{}", common::output_text(&out));
}

fn usage(rig: &Rig, args: &[&str]) -> (Output, Value) {
    let mut all = vec!["usage", "--json"];
    all.extend_from_slice(args);
    let out = rig.hlctl(&all);
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out, v)
}

fn within(what: &str, got: f64, want: f64, share: f64) {
    assert!(
        (got - want).abs() <= want * share,
        "{what}: {got} is not within {:.0} % of {want}",
        share * 100.0
    );
}

#[test]
fn usage_matches_what_was_sent_across_a_restart_and_a_reset() {
    let _serial = serial();
    let lab = Lab::new();
    shape(&lab);
    let srv = lab.iperf3_server();
    let rig = Rig::start();
    let state = tempfile::tempdir().unwrap();
    let config = state.path().join("hlctl.toml");
    let textfile = state.path().join("textfile");
    std::fs::create_dir_all(&textfile).unwrap();
    std::fs::write(
        &config,
        format!(
            "[usage]\nlinks = [\"{}:110M\"]\n\n[metrics]\ntextfile_dir = \"{}\"\n",
            lab.a,
            textfile.display()
        ),
    )
    .unwrap();
    let extra = [
        "--config",
        config.to_str().unwrap(),
        "--test-usage-interval-ms",
        INTERVAL_MS,
    ];
    let mut daemon = rig.daemon(&lab.here, state.path(), &extra);
    std::thread::sleep(Duration::from_secs(1));

    let before = tx_bytes(&lab);
    send(&lab, srv.port, 10, Some("70M"));
    send(&lab, srv.port, 10, None);
    std::thread::sleep(Duration::from_secs(1));
    let sent = tx_bytes(&lab) - before;

    // Stopped mid-minute: the minute it was filling is stored.
    assert!(daemon.terminate().success(), "{}", daemon.log());
    assert!(
        daemon.log().contains("current minute stored"),
        "{}",
        daemon.log()
    );
    // The gauges a Grafana panel draws, written when the minute was stored.
    let prom = std::fs::read_to_string(textfile.join("hlctl.prom")).unwrap();
    let peak_line = format!(
        "hlctl_usage_peak_bps{{iface=\"{}\",direction=\"send\",window=\"1d\"}} ",
        lab.a
    );
    let gauge = prom
        .lines()
        .find_map(|l| l.strip_prefix(&peak_line))
        .unwrap_or_else(|| panic!("no {peak_line}in:\n{prom}"));
    within("the peak gauge", gauge.parse().unwrap(), 100e6, 0.10);
    let mut daemon = rig.daemon(&lab.here, state.path(), &extra);
    let (out, v) = usage(&rig, &[]);
    assert!(
        out.status.success(),
        "{}\n{}",
        common::output_text(&out),
        daemon.log()
    );
    let links = v["links"].as_array().unwrap();
    assert_eq!(
        links.len(),
        1,
        "only the link asked for is sampled (not lo): {v}"
    );
    let l = &links[0];
    assert_eq!(l["iface"], lab.a.as_str());
    let tx = &l["span"]["tx"];
    within("peak", tx["peak_bps"].as_f64().unwrap(), 100e6, 0.10);
    within(
        "95th percentile",
        tx["p95_bps"].as_f64().unwrap(),
        100e6,
        0.10,
    );
    let above: Vec<f64> = tx["above_s"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    within("time above 50 %", above[0], 20.0, 0.10);
    // 20 %: beside the suite's VMs three 500 ms samples of the shaped 10 s
    // once fell below 88 Mbit/s (8.5 s above 80 %); still far from the
    // 20 s above 50 % and from none.
    within("time above 80 %", above[1], 10.0, 0.20);
    assert!(above[2] < 1.0, "above 95 % of 110 Mbit/s: {above:?}");
    within("bytes", tx["bytes"].as_f64().unwrap(), sent as f64, 0.10);
    let text = l["verdict"]["text"].as_str().unwrap();
    assert!(
        text.starts_with("peak ") && text.contains("a faster link would not change what you feel"),
        "{text}"
    );

    let out = rig.hlctl(&["usage", "--days", "1"]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    eprintln!("{text}");
    assert!(
        text.starts_with(&format!(
            "{} (110 Mbit/s), the last day:\n  sampled ",
            lab.a
        )),
        "{text}"
    );
    assert!(text.contains("    send: peak "), "{text}");

    // The veth deleted and created again: counters from 0, a new ifindex.
    let peak_before = tx["peak_bps"].as_f64().unwrap();
    lab.here.ip(&["link", "del", &lab.a]);
    lab.here.ip(&[
        "link", "add", &lab.a, "type", "veth", "peer", "name", &lab.b,
    ]);
    lab.here
        .ip(&["link", "set", &lab.b, "netns", &lab.peer.name]);
    lab.here.ip(&[
        "addr",
        "add",
        &format!("{}/24", common::lab::HERE_IP),
        "dev",
        &lab.a,
    ]);
    lab.peer
        .ip(&["addr", "add", &format!("{PEER_IP}/24"), "dev", &lab.b]);
    lab.here.ip(&["link", "set", &lab.a, "up"]);
    lab.peer.ip(&["link", "set", &lab.b, "up"]);
    shape(&lab);
    std::thread::sleep(Duration::from_secs(2));
    send(&lab, srv.port, 4, None);
    assert!(daemon.terminate().success());
    let out = Command::new(env!("CARGO_BIN_EXE_hlctl"))
        .args(["--local", "--state-dir"])
        .arg(state.path().join("state"))
        .args(["usage", &lab.a, "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::output_text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tx = &v["links"][0]["span"]["tx"];
    let peak = tx["peak_bps"].as_f64().unwrap();
    assert!(
        peak <= 110e6,
        "a spike after the reset: {peak} (before it {peak_before})"
    );
    // The HTML page draws the link's usage (one chart, hours with samples).
    let page = state.path().join("page.html");
    let out = Command::new(env!("CARGO_BIN_EXE_hlctl"))
        .args(["--local", "--state-dir"])
        .arg(state.path().join("state"))
        .arg("history")
        .arg("--html")
        .arg(&page)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::output_text(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains(&format!("data-iface=\"{}\" data-hours=\"", lab.a)),
        "{html}"
    );
    assert_eq!(html.matches("<polyline class=\"tx\"").count(), 1, "{html}");
    assert!(
        tx["bytes"].as_u64().unwrap() > sent,
        "the traffic after the reset counts: {tx}"
    );
}

#[test]
fn an_unsampled_link_is_an_error_naming_the_sampled_ones() {
    let state = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hlctl"))
        .args(["--local", "--state-dir"])
        .arg(state.path())
        .args(["usage", "eth9"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("eth9") && err.contains("no usage has been recorded yet"),
        "{err}"
    );
}
