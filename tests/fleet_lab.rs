//! The home lab, assembled by Prometheus: three hosts (`nas`, `pve1`,
//! `pve2`) in network namespaces on a bridge, each with its own hlctl state,
//! hlctl.toml (peers = the other two) and `hlctl serve`; `tc tbf rate
//! 200mbit` on nas's port. `hlctl check` runs in all three at once (they
//! must not measure on top of each other: busy peers are retried), a real
//! node_exporter per host exposes each textfile, a real Prometheus scrapes
//! the three, and its HTTP API gives the transfer matrix. Then every panel
//! of the shipped Grafana dashboard is queried, and a regression is planted
//! on nas and found by the check the timer runs.

mod common;

use common::output_text as text;

use std::collections::BTreeMap;

use common::fleet::{Fleet, HOSTS, SERVE_PORT};
use serde_json::Value;

fn config(i: usize, h: &common::fleet::Host) -> String {
    let disk = h.dir.join("disk");
    std::fs::create_dir_all(&disk).unwrap();
    format!(
        "[check]\npeers = [{}]\ndirs = [\"{}\"]\ncpu = true\ntime_s = 2\nbench_time_s = 1\ndisk_size_mib = 16\nbusy_window_s = 180\nbaseline = \"good\"\n\n[metrics]\ntextfile_dir = \"{}\"\ndebounce_s = 0\n",
        Fleet::peers_of(i),
        disk.display(),
        h.textfile_dir().display()
    )
}

fn shape(f: &Fleet, add: bool) {
    let nas = f.host("nas");
    let verb = if add { "add" } else { "del" };
    for (ns, dev) in [(&nas.ns, &nas.dev), (&f.switch, &nas.port)] {
        let mut v = vec!["tc", "qdisc", verb, "dev", dev.as_str(), "root"];
        if add {
            v.extend_from_slice(&[
                "tbf", "rate", "200mbit", "burst", "64kbit", "latency", "50ms",
            ]);
        }
        ns.exec(&v);
    }
}

/// The host whose address is in a peer label `10.71.0.N:5201`.
fn host_of_peer(peer: &str) -> &'static str {
    let ip = peer.rsplit_once(':').unwrap().0;
    let n: usize = ip.rsplit('.').next().unwrap().parse().unwrap();
    HOSTS[n - 1]
}

#[test]
fn three_hosts_matrix_in_prometheus_dashboard_panels_and_a_planted_regression() {
    let _serial = common::lab::serial();
    let mut f = Fleet::new(config);
    f.serve_all();
    f.node_exporters();
    f.prometheus(None);
    shape(&f, true);

    // All three at once: they meet busy peers and back off.
    let t0 = std::time::Instant::now();
    let children: Vec<_> = f
        .hosts
        .iter()
        .map(|h| {
            h.command(&[common::lab::HLCTL, "check", "--json"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut retries = 0;
    for (h, c) in f.hosts.iter().zip(children) {
        let o = c.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}: {}", h.name, text(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let peers = v["check"]["peers"].as_array().unwrap();
        assert_eq!(peers.len(), 2, "{v}");
        for p in peers {
            for d in p["directions"].as_array().unwrap() {
                assert!(d["bps"].as_f64().unwrap() > 0.0, "{}: {d}", h.name);
                retries += d["busy_retries"].as_u64().unwrap();
            }
        }
        assert!(v["metrics_file"].as_str().unwrap().ends_with("hlctl.prom"));
    }
    println!(
        "3 concurrent checks: {:.0} s, {retries} busy retries",
        t0.elapsed().as_secs_f64()
    );

    // The matrix, from Prometheus: 6 directed pairs (upload = host → peer).
    let q = "hlctl_net_throughput_bps{direction=\"upload\"}";
    let r = f.query_until(q, 30, |r| r.len() == 6);
    assert_eq!(r.len(), 6, "{r:?}");
    let mut matrix = BTreeMap::new();
    for s in &r {
        let from = s["metric"]["host"].as_str().unwrap().to_string();
        let to = host_of_peer(s["metric"]["peer"].as_str().unwrap());
        let bps: f64 = s["value"][1].as_str().unwrap().parse().unwrap();
        matrix.insert((from, to.to_string()), bps);
    }
    println!("transfer matrix from Prometheus ({q}), Mbit/s:");
    for ((from, to), bps) in &matrix {
        println!("  {from:>5} → {to:<5} {:>8.0}", bps / 1e6);
    }
    assert_eq!(matrix.len(), 6);
    for ((from, to), bps) in &matrix {
        if from == "nas" || to == "nas" {
            assert!(
                (120e6..=215e6).contains(bps),
                "{from} → {to}: {bps} is not about 200 Mbit/s"
            );
        } else {
            assert!(
                *bps > 600e6,
                "{from} → {to}: {bps} should be far above 200 Mbit/s"
            );
        }
    }

    // The regression: nas unshaped, a reference check, a baseline, then
    // offloads turned off; the check run exactly as hlctl-check.service does.
    shape(&f, false);
    let nas = f.host("nas");
    // The network only from here: 1-second disk and CPU runs on a shared
    // machine move by more than the 10% threshold by themselves.
    let cfg = std::fs::read_to_string(nas.config())
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("dirs") && !l.starts_with("cpu"))
        .collect::<Vec<_>>()
        .join("\n")
        .replace("[check]", "[check]\ncpu = false");
    std::fs::write(nas.config(), cfg).unwrap();
    let o = nas.hlctl(&["check"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = nas.hlctl(&["baseline", "save", "good"]);
    assert!(o.status.success(), "{}", text(&o));
    nas.ns.exec(&[
        "ethtool", "-K", &nas.dev, "tso", "off", "gso", "off", "sg", "off",
    ]);
    let unit = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/systemd/hlctl-check.service"
    ))
    .unwrap();
    let exec = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .unwrap()
        .replacen("/usr/bin/hlctl", common::lab::HLCTL, 1);
    let argv: Vec<&str> = exec.split_whitespace().collect();
    // A noisy machine may hide the drop once; the check is run at most 3 times.
    let mut last = None;
    for attempt in 1..=3 {
        let o = nas.command(&argv).output().unwrap();
        if o.status.code() == Some(1) {
            last = Some(o);
            break;
        }
        println!("attempt {attempt}: no regression seen ({})", text(&o));
        last = Some(o);
    }
    let o = last.unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    let stderr = String::from_utf8_lossy(&o.stderr);
    // No journald here: the warning goes to stderr, naming the metric.
    let line = stderr
        .lines()
        .find(|l| l.contains("regression: net upload → "))
        .unwrap_or_else(|| panic!("{t}"));
    println!("{line}");
    assert!(
        line.contains("REGRESSION") && line.contains("tx-tcp-segmentation on → off"),
        "{line}"
    );
    let q = "hlctl_check_regression{host=\"nas\",metric=\"net upload\"} == 1";
    let r = f.query_until(q, 20, |r| !r.is_empty());
    assert!(!r.is_empty(), "{q}: nothing");
    println!("{q} → {}", r[0]["metric"]);

    // Every panel of the shipped dashboard, through this Prometheus (after
    // the regression run, so the regressions panel and the baselines have data).
    let dash: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/packaging/fleet/hlctl-dashboard.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let mut exprs = Vec::new();
    for p in dash["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().into_iter().flatten() {
            let e = t["expr"].as_str().unwrap().replace("$instance", ".*");
            exprs.push((p["title"].as_str().unwrap().to_string(), e));
        }
    }
    assert!(exprs.len() >= 8, "{exprs:?}");
    for (title, e) in &exprs {
        // veth has no rings, no flow control and reports no supported
        // modes: those queries are valid (the API accepts them) but empty here.
        let veth_lacks = [
            "hlctl_ring_",
            "hlctl_pause_",
            "hlctl_link_supported_speed_bps",
        ]
        .iter()
        .any(|m| e.contains(m));
        let r = f.query_until(e, if veth_lacks { 0 } else { 15 }, |r| !r.is_empty());
        if veth_lacks {
            println!("panel '{title}': {e} → {} series (veth has none)", r.len());
            continue;
        }
        assert!(!r.is_empty(), "panel '{title}': {e} returned no data");
        println!("panel '{title}': {e} → {} series", r.len());
    }

    let _ = SERVE_PORT;
}
