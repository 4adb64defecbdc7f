//! History end to end: `hlctl report` results are written, a baseline is
//! saved, a regression is planted (a 100 Mbit/s shaper and TSO/GSO turned
//! off), and `hlctl compare` flags it and names the setting that changed.

mod common;

use common::lab::Lab;
use serde_json::Value;

#[test]
fn compare_flags_a_planted_regression_and_names_the_changed_setting() {
    let _serial = common::lab::serial();
    let lab = Lab::new();
    let srv = lab.iperf3_server();
    let peer = lab.peer_arg(&srv);
    let out_dir = tempfile::tempdir().unwrap();
    let report = |lab: &Lab| -> Value {
        lab.json(&[
            "report",
            "--peer",
            &peer,
            "--time",
            "1",
            "--out",
            out_dir.path().to_str().unwrap(),
        ])
    };

    // A file written and read in a local directory first (`bench file
    // --dir`): the report's transfers show it beside the report's own TCP.
    let files = tempfile::tempdir().unwrap();
    let file = lab.json(&[
        "bench",
        "file",
        "--dir",
        files.path().to_str().unwrap(),
        "--size",
        "4M",
    ]);
    let good = report(&lab);
    let up_good = good["report"]["network"][0]["upload_bps"].as_f64().unwrap();
    assert!(up_good > 500e6, "{good}");
    for k in ["markdown", "json"] {
        let p = good[k].as_str().unwrap();
        assert!(std::path::Path::new(p).exists(), "{p}");
    }
    let md = std::fs::read_to_string(good["markdown"].as_str().unwrap()).unwrap();
    assert!(md.contains("## Network") && md.contains(&peer), "{md}");
    // This host's row of the matrix: the report's own TCP figures (upload =
    // write) and the bench file's, newest of each, in the JSON and the
    // Markdown.
    let t = good["report"]["transfers"]
        .as_array()
        .unwrap_or_else(|| panic!("{good}"));
    let fig = |subject: &str, protocol: &str, dir: &str| {
        t.iter()
            .find(|x| x["subject"] == subject && x["protocol"] == protocol && x["direction"] == dir)
            .and_then(|x| x["value"].as_f64())
            .unwrap_or_else(|| panic!("no {subject} {protocol} {dir} in {t:?}"))
    };
    let net = &good["report"]["network"][0];
    assert_eq!(
        fig(&peer, "tcp", "write"),
        net["upload_bps"].as_f64().unwrap()
    );
    assert_eq!(
        fig(&peer, "tcp", "read"),
        net["download_bps"].as_f64().unwrap()
    );
    let protocol = file["file"]["protocol"]
        .as_str()
        .unwrap_or_else(|| panic!("{file}"));
    let place = t
        .iter()
        .find(|x| x["protocol"] == protocol)
        .and_then(|x| x["subject"].as_str())
        .unwrap_or_else(|| panic!("no {protocol} in {t:?}"));
    assert!(fig(place, protocol, "read") > 0.0 && fig(place, protocol, "write") > 0.0);
    assert!(md.contains("## Transfers by peer and protocol"), "{md}");
    assert!(md.contains(&format!("| {peer} | TCP | ")), "{md}");
    assert!(
        md.contains(&format!("| {place} | {} | ", protocol.to_uppercase())),
        "{md}"
    );

    let saved = lab.json(&["baseline", "save", "good"]);
    assert!(saved["metrics"].as_u64().unwrap() >= 2, "{saved}");

    // The regression: a slow hop, and offloads someone turned off.
    lab.shape_both("100mbit");
    lab.here
        .exec(&["ethtool", "-K", &lab.a, "tso", "off", "gso", "off"]);
    report(&lab);

    let h = lab.json(&["history", "--kind", "report"]);
    assert_eq!(h["results"].as_array().unwrap().len(), 2);

    let out = lab.hlctl(&["compare", "good", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a regression exits 1: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let up = c["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "net upload" && m["subject"] == peer.as_str())
        .unwrap_or_else(|| panic!("{c}"));
    assert_eq!(up["verdict"], "REGRESSION", "{up}");
    assert!(up["change_percent"].as_f64().unwrap() < -50.0, "{up}");
    let changed: Vec<String> = up["changed_settings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["setting"].as_str().unwrap().to_string())
        .collect();
    assert!(
        changed.contains(&format!("{} feature tx-tcp-segmentation", lab.a)),
        "{changed:?}"
    );
    let text = up["text"].as_str().unwrap();
    assert!(
        text.contains("REGRESSION") && text.contains("tx-tcp-segmentation on → off"),
        "{text}"
    );

    // The text form says the same.
    let out = lab.hlctl(&["compare"]);
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(
        t.contains("Against baseline 'good'") && t.contains("net upload → "),
        "{t}"
    );
}
