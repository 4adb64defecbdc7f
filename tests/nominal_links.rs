//! Devices whose reported speed is nominal — a veth pair, a bridge with a
//! veth port — measured against a real `iperf3 -s` in a peer namespace:
//! doctor and tune never say "the link is the limit" from that speed (veth
//! moves far more than its "10000 Mb/s"); the JSON limit kind is never
//! `link_rate` and the link speed is judged `nominal`. (The virtio_net NIC is
//! covered in the VM test `vm_slow_link`.)

mod common;

use common::lab::{HERE_IP, Lab};
use serde_json::Value;

/// Every limit note: not `link_rate`, judged against a nominal link speed.
fn assert_nominal_limits(what: &str, r: &Value) {
    let limits = r["limits"]
        .as_array()
        .unwrap_or_else(|| panic!("{what}: no limits in {r}"));
    assert_eq!(limits.len(), 2, "{what}: one per direction: {limits:?}");
    for l in limits {
        eprintln!("{what}: {}", l["text"]);
        assert_ne!(l["limit"]["kind"], "link_rate", "{what}: {l}");
        assert!(l["limit"]["kind"].is_string(), "{what}: {l}");
        assert_eq!(l["link_speed"]["kind"], "nominal", "{what}: {l}");
        assert_eq!(l["link_speed"]["mbps"], 10000, "{what}: {l}");
        assert!(
            !l["text"].as_str().unwrap().contains("is the limit"),
            "{what}: {l}"
        );
    }
}

/// Text output: no "is the limit" anywhere, and the nominal speed is said.
fn assert_text(what: &str, lab: &Lab, args: &[&str]) {
    let out = lab.hlctl(args);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{what} failed:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("is the limit"), "{what}:\n{text}");
    assert!(text.contains("nominal"), "{what}:\n{text}");
}

/// doctor and `tune --dry-run` (whose report classifies the baseline) on `dev`.
fn doctor_and_tune(lab: &Lab, dev: &str, what: &str) {
    let show = lab.hlctl(&["show", dev]);
    let show = String::from_utf8_lossy(&show.stdout);
    assert!(show.contains("speed is nominal"), "{what} show:\n{show}");
    let srv = lab.iperf3_server();
    let peer = lab.peer_arg(&srv);
    let doctor = [
        "doctor", dev, "--peer", &peer, "--stress", "0", "--time", "1",
    ];
    let r = lab.json(&doctor);
    assert_nominal_limits(&format!("{what} doctor"), &r);
    // The speed check says why it did not judge the speed.
    let skipped = r["not_checked"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "link-speed" && c["interface"] == dev)
        .unwrap_or_else(|| panic!("{what}: link-speed not skipped: {r}"));
    assert!(
        skipped["detail"].as_str().unwrap().contains("nominal"),
        "{skipped}"
    );
    assert_text(&format!("{what} doctor text"), lab, &doctor);

    let tune = [
        "tune",
        dev,
        "--peer",
        &peer,
        "--dry-run",
        "--runs",
        "1",
        "--time",
        "1",
    ];
    let r = lab.json(&tune);
    assert_nominal_limits(&format!("{what} tune"), &r);
    assert!(
        r["plan"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["id"] != "link-renegotiate"),
        "{what}: no link candidate on a nominal speed: {}",
        r["plan"]
    );
    assert_text(&format!("{what} tune text"), lab, &tune);
}

#[test]
fn veth_pair_speed_is_nominal_never_the_limit() {
    let _serial = common::lab::serial();
    let lab = Lab::new();
    doctor_and_tune(&lab, &lab.a.clone(), "veth");
}

#[test]
fn bridge_with_a_veth_port_speed_is_nominal_never_the_limit() {
    let _serial = common::lab::serial();
    let lab = Lab::new();
    let br = common::unique("nb");
    let cidr = format!("{HERE_IP}/24");
    lab.here.ip(&["link", "add", &br, "type", "bridge"]);
    lab.here.ip(&["addr", "del", &cidr, "dev", &lab.a]);
    lab.here.ip(&["link", "set", &lab.a, "master", &br]);
    lab.here.ip(&["addr", "add", &cidr, "dev", &br]);
    lab.here.ip(&["link", "set", &br, "up"]);
    // The bridge reports its port's 10000 Mb/s; it carries traffic to the peer.
    let show = lab.json(&["show", &br]);
    let i = &show["interfaces"][0];
    assert_eq!(
        (&i["kind"], &i["link"]["speed_mbps"]),
        (&"bridge".into(), &10000.into()),
        "{i}"
    );
    doctor_and_tune(&lab, &br, "bridge");
}
