//! The home lab, assembled by Prometheus: three hosts (`nas`, `pve1`,
//! `pve2`) in network namespaces on a bridge, each with its own hlctl state,
//! hlctl.toml (peers = the other two) and `hlctl serve`; `tc tbf rate
//! 200mbit` on nas's port. `hlctl check` runs in all three at once (they
//! must not measure on top of each other: busy peers are retried), a real
//! node_exporter per host exposes each textfile, a real Prometheus scrapes
//! the three, and its HTTP API gives the transfer matrix. Then every panel
//! of the shipped Grafana dashboard is queried, and a regression is planted
//! on nas and found by the check the timer runs.
//!
//! A fourth host is real hardware's stand-in: a qemu VM with the e1000e
//! driver on the lab's bridge (a tap in `switch`) runs `hlctl check` against
//! nas; its hlctl.prom (written by that check, printed on the
//! console) goes to a node_exporter of its own. It gives the dashboard's ring,
//! pause and supported-speed panels real data (veth has none of them) and the
//! matrix a pair with a physical end.

mod common;

use common::output_text as text;

use std::collections::BTreeMap;

use common::fleet::{Fleet, HOSTS, SERVE_PORT, ip_of};
use common::vm::{Vm, VmOutput};
use serde_json::Value;

/// The VM's address on the lab's bridge and its node_exporter's port.
const VM_IP: &str = "10.71.0.4";
/// The VM's host name in pve1's namespace (its /etc/netns hosts file): pve1
/// measures the VM by name, so the matrix's colour joins a named peer.
const VM_NAME: &str = "vm.fleet-lab";
const VM_EXPORTER_PORT: u16 = 9101;

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

/// Boot the e1000e VM on the lab's bridge; in it `hlctl check` against nas
/// writes /tmp/textfile/hlctl.prom, printed as section `prom`; then it runs
/// `hlctl serve` until 30 s pass without a client (pve1 measures it; its busy back-offs stay below that). The
/// VM's own check measures only nas: an emulated e1000e is not held to its
/// line rate (it measured 2 Gbit/s to pve1 over its "1000 Mb/s"), which by
/// nic::speed's last rule makes the figure nominal; against the 200
/// Mbit-shaped nas its speed stands.
fn vm_check(f: &Fleet) -> VmOutput {
    let tap = common::unique("ft");
    f.switch.ip(&["tuntap", "add", &tap, "mode", "tap"]);
    f.switch.ip(&["link", "set", &tap, "master", "br0"]);
    f.switch.ip(&["link", "set", &tap, "up"]);
    let cfg = f.dir.path().join("vm-hlctl.toml");
    std::fs::write(
        &cfg,
        format!(
            "[check]\npeers = [\"{}:{SERVE_PORT}\"]\ncpu = false\ntime_s = 2\nbusy_window_s = 60\n\n[metrics]\ntextfile_dir = \"/tmp/textfile\"\n",
            ip_of(0)
        ),
    )
    .unwrap();
    let script = format!(
        "ip link set lo up
ip addr add {VM_IP}/24 dev eth0
ip link set eth0 up
wait_carrier eth0 20
mkdir -p /tmp/state /tmp/textfile
export HLCTL_STATE_DIR=/tmp/state HLCTL_CONFIG=/etc/hlctl/hlctl.toml HLCTL_LOCAL=true
section check hlctl check --json
section prom cat /tmp/textfile/hlctl.prom
section serve hlctl serve -p {SERVE_PORT} --idle-timeout 30
true
"
    );
    let out = Vm::builder()
        .binary(env!("CARGO_BIN_EXE_hlctl"))
        .iproute2()
        .file(&cfg, "/etc/hlctl/hlctl.toml")
        .nic_e1000e_tap(&f.switch, &tap)
        .script(&script)
        .timeout(300)
        .run();
    println!("VM boot to power-off: {:.1} s", out.elapsed.as_secs_f64());
    out.assert_success();
    let check = out.section("check");
    assert_eq!(
        check.rc,
        0,
        "hlctl check in the VM:\n{}",
        out.guest_output()
    );
    out
}

/// The physical link speed (bit/s) of `host` as Prometheus has it: its
/// links' speeds where `hlctl_link_speed_is_physical` is 1 (nic::speed
/// decides); `None` when every speed it reports is nominal.
fn physical_speed(f: &Fleet, host: &str) -> Option<f64> {
    let q = format!(
        "hlctl_link_speed_bps{{host=\"{host}\"}} and on(instance, iface) hlctl_link_speed_is_physical == 1"
    );
    f.query(&q)
        .iter()
        .map(|s| s["value"][1].as_str().unwrap().parse::<f64>().unwrap())
        .reduce(f64::min)
}

/// The host in a peer label `10.71.0.N:5201` (or the VM's, by name too).
fn host_of_peer(peer: &str) -> &'static str {
    let ip = peer.rsplit_once(':').unwrap().0;
    if ip == VM_IP || ip == VM_NAME {
        return "vm";
    }
    let n: usize = ip.rsplit('.').next().unwrap().parse().unwrap();
    HOSTS[n - 1]
}

/// The dashboard's transfer-matrix panel as Grafana reads it: the field
/// override that colours by thresholds names the share's query (`Value #X`
/// is query X's value); the other query gives the Mbit/s shown beside it.
struct MatrixPanel {
    mbits_expr: String,
    share_expr: String,
    /// (from, colour) threshold steps, the first from -inf.
    steps: Vec<(f64, String)>,
}

impl MatrixPanel {
    fn from_dashboard(dash: &Value) -> MatrixPanel {
        let panel = dash["panels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["title"].as_str().unwrap().contains("matrix"))
            .expect("a matrix panel");
        let targets = panel["targets"].as_array().unwrap();
        for t in targets {
            assert_eq!(t["format"], "table", "{t}");
            assert_eq!(t["instant"], true, "{t}");
        }
        let transforms: Vec<&str> = panel["transformations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap())
            .collect();
        assert_eq!(
            transforms.first(),
            Some(&"merge"),
            "the two queries join into one row per pair"
        );
        let coloured = panel["fieldConfig"]["overrides"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| {
                o["properties"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|p| p["id"] == "thresholds")
            })
            .expect("an override colouring by thresholds");
        let props = coloured["properties"].as_array().unwrap();
        let prop = |id: &str| {
            props
                .iter()
                .find(|p| p["id"] == id)
                .map(|p| p["value"].clone())
                .unwrap_or_else(|| panic!("{id} missing from {coloured}"))
        };
        assert_eq!(prop("custom.cellOptions")["type"], "color-background");
        assert_eq!(prop("color")["mode"], "thresholds");
        let thresholds = prop("thresholds");
        assert_eq!(thresholds["mode"], "absolute", "a share is not relative");
        let steps = thresholds["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["value"].as_f64().unwrap_or(f64::NEG_INFINITY),
                    s["color"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let field = coloured["matcher"]["options"].as_str().unwrap();
        let ref_id = field.strip_prefix("Value #").expect("a query's value");
        let expr = |pick: &dyn Fn(&Value) -> bool| {
            let t: Vec<&Value> = targets.iter().filter(|t| pick(t)).collect();
            assert_eq!(t.len(), 1, "{targets:?}");
            t[0]["expr"].as_str().unwrap().to_string()
        };
        MatrixPanel {
            share_expr: expr(&|t| t["refId"] == ref_id),
            mbits_expr: expr(&|t| t["refId"] != ref_id),
            steps,
        }
    }

    /// The colour Grafana gives `v`: the last step whose start is ≤ v.
    fn colour(&self, v: f64) -> &str {
        self.steps
            .iter()
            .rev()
            .find(|(from, _)| *from <= v)
            .map(|(_, c)| c.as_str())
            .unwrap()
    }
}

#[test]
fn three_hosts_matrix_in_prometheus_dashboard_panels_and_a_planted_regression() {
    let _serial = common::lab::serial();
    let mut f = Fleet::new(config);
    f.serve_all();
    f.node_exporters();
    let vm_textfile = f.textfile_node("vm", VM_EXPORTER_PORT);
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

    // The VM (real e1000e) measures nas (still shaped); its file is scraped
    // as host "vm". While it serves, pve1 measures it (pve1's file then
    // holds pve1 → vm only): the peer end of the matrix's join.
    let out = std::thread::scope(|sc| {
        let vm = sc.spawn(|| vm_check(&f));
        let pve1 = f.host("pve1");
        let t0 = std::time::Instant::now();
        // (This probe holds the VM's server for up to its setup timeout:
        // pve1's first tries may meet busy and back off, at most 15 s.)
        while !common::fleet::port_answers(&f.switch, VM_IP, SERVE_PORT) {
            assert!(
                !vm.is_finished() && t0.elapsed().as_secs() < 240,
                "the VM never served"
            );
        }
        pve1.ns
            .hosts(&format!("127.0.0.1 localhost\n{VM_IP} {VM_NAME}\n"));
        let cfg = pve1.dir.join("hlctl-vm.toml");
        std::fs::write(
            &cfg,
            format!(
                "[check]\npeers = [\"{VM_NAME}:{SERVE_PORT}\"]\ncpu = false\ntime_s = 2\nbusy_window_s = 30\n\n[metrics]\ntextfile_dir = \"{}\"\n",
                pve1.textfile_dir().display()
            ),
        )
        .unwrap();
        let o = pve1
            .command(&[common::lab::HLCTL, "check"])
            .env("HLCTL_CONFIG", &cfg)
            .output()
            .unwrap();
        println!("pve1 → vm check:\n{}", text(&o));
        assert!(o.status.success(), "{}", text(&o));
        vm.join().unwrap()
    });
    let prom = out.section("prom").text;
    println!("hlctl.prom written by hlctl check in the VM:\n{prom}");
    for m in [
        "hlctl_ring_rx_max_entries{iface=\"eth0\"}",
        "hlctl_pause_rx{iface=\"eth0\"}",
        "hlctl_link_supported_speed_bps{iface=\"eth0\"}",
        "hlctl_link_speed_is_physical{iface=\"eth0\"} 1",
        &format!("hlctl_address_link_speed_bps{{address=\"{VM_IP}\",iface=\"eth0\"}}"),
    ] {
        assert!(prom.contains(m), "{m} missing from the VM's file");
    }
    std::fs::write(vm_textfile.join("hlctl.prom"), &prom).unwrap();

    // "Share of the slower end's link speed": throughput over the lower
    // PHYSICAL speed of the two ends (a nominal speed caps nothing, so it is
    // no end's limit); a pair with no physical end has no share. The
    // expectation comes from the speeds the hosts themselves report.
    let vm_speed = f
        .query_until(
            "hlctl_link_speed_bps{host=\"vm\",iface=\"eth0\"}",
            20,
            |r| !r.is_empty(),
        )
        .first()
        .map(|s| s["value"][1].as_str().unwrap().parse::<f64>().unwrap())
        .expect("the VM's eth0 speed in Prometheus");
    let speeds: BTreeMap<&str, Option<f64>> = HOSTS
        .iter()
        .copied()
        .chain(["vm"])
        .map(|h| (h, physical_speed(&f, h)))
        .collect();
    println!("physical link speed per host (None: only nominal speeds): {speeds:?}");
    assert_eq!(speeds["vm"], Some(vm_speed), "e1000e's speed is physical");
    for h in HOSTS {
        assert_eq!(speeds[h], None, "{h}: veth speeds are nominal");
    }
    let dash: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/packaging/fleet/hlctl-dashboard.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let matrix_panel = MatrixPanel::from_dashboard(&dash);
    let share_q = matrix_panel.share_expr.clone();
    let up = f.query_until("hlctl_net_throughput_bps{direction=\"upload\"}", 20, |r| {
        r.len() == 6
            && r.iter()
                .any(|s| s["metric"]["peer"] == format!("{VM_NAME}:{SERVE_PORT}"))
    });
    assert_eq!(
        up.len(),
        6,
        "nas and pve2's 4 pairs, vm → nas, pve1 → vm: {up:?}"
    );
    let mut expected = BTreeMap::new();
    for s in &up {
        let from = s["metric"]["host"].as_str().unwrap();
        let to = host_of_peer(s["metric"]["peer"].as_str().unwrap());
        let bps: f64 = s["value"][1].as_str().unwrap().parse().unwrap();
        let slower = [speeds[from], speeds[to]]
            .into_iter()
            .flatten()
            .reduce(f64::min);
        if let Some(sp) = slower {
            expected.insert((from.to_string(), to.to_string()), bps / sp);
        }
    }
    let got: BTreeMap<(String, String), f64> = f
        .query_until(&share_q, 20, |r| r.len() == expected.len())
        .iter()
        .map(|s| {
            let from = s["metric"]["host"].as_str().unwrap().to_string();
            let to = host_of_peer(s["metric"]["peer"].as_str().unwrap()).to_string();
            (
                (from, to),
                s["value"][1].as_str().unwrap().parse::<f64>().unwrap(),
            )
        })
        .collect();
    println!("matrix cell colour ({share_q}):");
    for ((from, to), v) in &got {
        println!(
            "  {from:>5} → {to:<5} {:>6.1}% of the slower end",
            v * 100.0
        );
    }
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "only pairs with a physical end have a share"
    );
    for (k, v) in &got {
        assert!(
            (v - expected[k]).abs() <= 1e-9 * expected[k].abs(),
            "{k:?}: {v} vs {}",
            expected[k]
        );
    }
    // Both joins: the VM's own end toward nas, and pve1's pair through the
    // address pve1 resolved the VM's name to (pve1's end is nominal, the
    // VM's is the slower end).
    assert!(
        got.contains_key(&("pve1".to_string(), "vm".to_string())),
        "{got:?}"
    );
    let q = format!("hlctl_net_peer_address{{host=\"pve1\",peer=\"{VM_NAME}:{SERVE_PORT}\"}}");
    let named = f.query(&q);
    assert_eq!(named.len(), 1, "{q}: {named:?}");
    assert_eq!(named[0]["metric"]["address"], VM_IP, "{named:?}");
    println!("{q} → address {}", named[0]["metric"]["address"]);
    // The VM's pair to the 200 Mbit-shaped nas: at most about a fifth of its 1000 Mb/s.
    let vm_nas = got[&("vm".to_string(), "nas".to_string())];
    assert!(
        vm_nas > 0.0 && vm_nas <= 215e6 / vm_speed,
        "vm → nas: {vm_nas} of {vm_speed}"
    );

    // The cells as Grafana colours them: the panel's own Mbit/s query beside
    // the share, each share through the panel's own thresholds. A pair
    // touching the shaped nas and a fast pair must not look alike.
    let mbits: BTreeMap<(String, String), f64> = f
        .query(&matrix_panel.mbits_expr)
        .iter()
        .map(|s| {
            let from = s["metric"]["host"].as_str().unwrap().to_string();
            let to = host_of_peer(s["metric"]["peer"].as_str().unwrap()).to_string();
            let v: f64 = s["value"][1].as_str().unwrap().parse().unwrap();
            ((from, to), v)
        })
        .collect();
    println!("matrix panel cells ({}):", matrix_panel.mbits_expr);
    let mut colours = BTreeMap::new();
    for (k, v) in &got {
        let c = matrix_panel.colour(*v);
        println!(
            "  {:>5} → {:<5} {:>6.0} Mbit/s  {:>6.1}%  {c}",
            k.0,
            k.1,
            mbits[k],
            v * 100.0
        );
        colours.insert(k.clone(), c);
    }
    for k in got.keys() {
        let bps = up
            .iter()
            .find(|s| {
                s["metric"]["host"] == k.0.as_str()
                    && host_of_peer(s["metric"]["peer"].as_str().unwrap()) == k.1
            })
            .map(|s| s["value"][1].as_str().unwrap().parse::<f64>().unwrap())
            .unwrap();
        assert!(
            (mbits[k] - bps / 1e6).abs() <= 1e-6 * mbits[k],
            "{k:?}: the panel shows {} Mbit/s of {bps} bit/s",
            mbits[k]
        );
    }
    let touches_nas = |k: &(String, String)| k.0 == "nas" || k.1 == "nas";
    let slow: Vec<_> = colours.iter().filter(|(k, _)| touches_nas(k)).collect();
    let fast: Vec<_> = colours.iter().filter(|(k, _)| !touches_nas(k)).collect();
    assert!(!slow.is_empty() && !fast.is_empty(), "{colours:?}");
    // The fast pair (pve1 → vm) runs over an emulated e1000e, whose rate
    // depends on the host's CPU: 34-44 % of its 1 Gb/s on this 2-core host
    // on 2 Dec (the code from before that day included), 50 % and more
    // before. Its cell is coloured by that share like any other (checked
    // above); it must differ from the nas pairs' whenever the share reaches
    // the panel's next step.
    let next_step = matrix_panel.steps.get(1).map_or(f64::MAX, |s| s.0);
    for (ks, cs) in &slow {
        for (kf, cf) in &fast {
            if got[*kf] < next_step {
                println!(
                    "{kf:?}: {:.0} % is below the panel's next step; not compared",
                    got[*kf] * 100.0
                );
                continue;
            }
            assert_ne!(cs, cf, "{ks:?} and {kf:?} are coloured alike: {colours:?}");
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
    // hlctld samples nas's link while the checks run (a veth: sampled only
    // because [usage] names it, judged against 1 Gbit/s), for the usage panel.
    let cfg = format!("{cfg}\n\n[usage]\nlinks = [\"{}:1G\"]\n", nas.dev);
    std::fs::write(nas.config(), cfg).unwrap();
    let rig = common::bus::Rig::start();
    let config_arg = nas.config().display().to_string();
    let mut sampler = rig.daemon(
        &nas.ns,
        &nas.dir,
        &["--config", &config_arg, "--test-usage-interval-ms", "500"],
    );
    // A file written and read back in nas's own directory (`bench file
    // --dir`: protocol "local <fs>"), for the file-transfer panel: the
    // check below writes it into hlctl.prom.
    let files = nas.dir.join("bench-file");
    std::fs::create_dir_all(&files).unwrap();
    let o = nas.hlctl(&[
        "bench",
        "file",
        "--dir",
        files.to_str().unwrap(),
        "--size",
        "4M",
    ]);
    assert!(o.status.success(), "{}", text(&o));
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
    // hlctld stores the minute it was filling when it stops, and writes the
    // usage gauges with it.
    assert!(sampler.terminate().success(), "{}", sampler.log());
    let prom = std::fs::read_to_string(nas.textfile_dir().join("hlctl.prom")).unwrap();
    let peak = format!(
        "hlctl_usage_peak_bps{{iface=\"{}\",direction=\"send\",window=\"1d\"}} ",
        nas.dev
    );
    let sent: f64 = prom
        .lines()
        .find_map(|l| l.strip_prefix(&peak))
        .unwrap_or_else(|| panic!("no {peak}in nas's hlctl.prom:\n{prom}"))
        .parse()
        .unwrap();
    assert!(
        sent > 50e6,
        "nas sent its checks' traffic: {sent} bit/s at the peak"
    );
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
    // the regression run, so the regressions panel and the baselines have
    // data; the VM gives the ring, pause and supported-speed panels theirs).
    let mut exprs = Vec::new();
    for p in dash["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().into_iter().flatten() {
            let e = t["expr"].as_str().unwrap().replace("$instance", ".*");
            exprs.push((p["title"].as_str().unwrap().to_string(), e));
        }
    }
    assert!(exprs.len() >= 8, "{exprs:?}");
    // The lab's one file figure is nas's local directory: no server, so no
    // link end at all, and the file panel's share query (Prometheus runs
    // it: a PromQL error fails here) must come back empty. The share's
    // arithmetic is matrix's unit tests' (the CLI and the panel share it).
    let (file_share, exprs): (Vec<_>, Vec<_>) = exprs.into_iter().partition(|(t, e)| {
        t.starts_with("File transfers") && e.contains("hlctl_file_local_link_speed_bps")
    });
    assert_eq!(file_share.len(), 1, "{file_share:?}");
    for (title, e) in &file_share {
        let r = f.query(e);
        assert!(
            r.is_empty(),
            "panel '{title}': {e} gave a share to a local directory: {r:?}"
        );
        println!("panel '{title}': {e} → empty, as a local directory has no link");
    }
    for (title, e) in &exprs {
        let r = f.query_until(e, 15, |r| !r.is_empty());
        assert!(!r.is_empty(), "panel '{title}': {e} returned no data");
        let hosts: std::collections::BTreeSet<&str> = r
            .iter()
            .filter_map(|s| s["metric"]["host"].as_str())
            .collect();
        println!("panel '{title}': {e} → {} series from {hosts:?}", r.len());
    }

    whole_matrix_from_prometheus(&f, &speeds, &files);
    a_file_to_pve2_reads_its_own_figures_from_the_fleet(&f);
}

/// pve1 times a file over SSH to pve2 (a real sshd in pve2's namespace)
/// with `--prometheus`: the run carries pve2's own disks and CPU exactly as
/// Prometheus holds them from pve2's check (the one host whose last check
/// measured its dir and CPU by now), the text prints them, and a
/// verdict that reaches the server names pve2's figures, not the commands
/// to run there.
fn a_file_to_pve2_reads_its_own_figures_from_the_fleet(f: &Fleet) {
    let (client, server) = (f.host("pve1"), f.host("pve2"));
    let sshd = common::sshd::Sshd::start_on(Some(&server.ns), &server.ip, &[22]);
    let remote = server.dir.join("ssh-files");
    std::fs::create_dir_all(&remote).unwrap();
    let url = format!("http://{}:9090", common::fleet::PROM_IP);
    let target = format!("ssh://root@{}{}", server.ip, remote.display());
    let cfg = sshd.config();
    let net_peer = format!("{}:{SERVE_PORT}", server.ip);
    let args = [
        "bench",
        "file",
        &target,
        "--ssh-config",
        cfg.to_str().unwrap(),
        "--size",
        "4M",
        "--net-peer",
        &net_peer,
        "--net-time",
        "1",
        "--no-disk",
        "--no-crypto",
        "--prometheus",
        &url,
    ];
    let o = client.hlctl(&[&args[..], &["--json"]].concat());
    assert!(o.status.success(), "{}", text(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let h = &r["fleet"]["measured"];
    assert_eq!(h["host"], "pve2", "{}", r["fleet"]);
    assert_eq!(h["prometheus"], url.as_str());
    // Every sequential disk figure and the CPU figure of pve2, as
    // Prometheus has them.
    let want = |q: &str, key: &str| -> BTreeMap<String, f64> {
        f.query(q)
            .iter()
            .map(|s| {
                let v: f64 = s["value"][1].as_str().unwrap().parse().unwrap();
                (s["metric"][key].as_str().unwrap().to_string(), v)
            })
            .collect()
    };
    let got = |list: &str, key: &str, value: &str| -> BTreeMap<String, f64> {
        h[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d[key].to_string().trim_matches('"').to_string(),
                    d[value].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let disks = want(
        "hlctl_disk_bytes_per_second{host=\"pve2\",pattern=~\"seq-.*\"}",
        "pattern",
    );
    assert_eq!(
        disks.len(),
        2,
        "seq-read and seq-write of pve2's one dir: {disks:?}"
    );
    assert_eq!(got("disks", "pattern", "bytes_per_second"), disks, "{h}");
    let cpu = want("hlctl_cpu_events_per_second{host=\"pve2\"}", "threads");
    assert!(!cpu.is_empty(), "pve2's check measures its CPU");
    assert_eq!(got("cpu", "threads", "events_per_second"), cpu, "{h}");
    for v in r["verdicts"].as_array().unwrap() {
        let sentence = v["sentence"].as_str().unwrap();
        match v["limit"].as_str().unwrap() {
            "server-disk" => assert!(sentence.contains("pve2's last check"), "{sentence}"),
            "elsewhere" => assert!(
                sentence.contains("pve2's own figures in the fleet's Prometheus")
                    && !sentence.contains("hlctl bench disk"),
                "{sentence}"
            ),
            _ => {}
        }
        println!("bench file to pve2: {sentence}");
    }
    assert_eq!(
        std::fs::read_dir(&remote).unwrap().count(),
        0,
        "a remote file was left"
    );
    // The text: pve2's disk each way, from this Prometheus.
    let o = client.hlctl(&args);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    for way in ["write", "read"] {
        let line = t
            .lines()
            .find(|l| l.trim_start().starts_with("server disk") && l.contains(way))
            .unwrap_or_else(|| panic!("no server disk {way} line: {t}"));
        assert!(
            line.contains(&format!("pve2's {}", server.dir.join("disk").display())),
            "{line}"
        );
        assert!(line.contains(&url), "{line}");
    }
    assert!(t.contains("server CPU"), "{t}");
}

/// `hlctl matrix --prometheus`, run on pve2, prints every host's figures as
/// Prometheus holds them now: each TCP series in its cell (rows and columns
/// joined by address and by the name pve1 resolved), the share of the
/// slower physical end where there is one, nas's `bench file` figures.
fn whole_matrix_from_prometheus(
    f: &Fleet,
    speeds: &BTreeMap<&str, Option<f64>>,
    files: &std::path::Path,
) {
    let url = format!("http://{}:9090", common::fleet::PROM_IP);
    let pve2 = f.host("pve2");
    let o = pve2.hlctl(&["matrix", "--prometheus", &url]);
    println!("hlctl matrix --prometheus {url}:\n{}", text(&o));
    assert!(o.status.success(), "{}", text(&o));
    let o = pve2.hlctl(&["matrix", "--prometheus", &url, "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let m: Value = serde_json::from_slice(&o.stdout).unwrap();
    let hosts: Vec<&str> = m["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap())
        .collect();
    assert_eq!(hosts, ["nas", "pve1", "pve2", "vm"], "{m}");
    let cells = m["cells"].as_array().unwrap();
    let cell = |from: &str, to: &str, protocol: &str| {
        cells
            .iter()
            .find(|c| c["from"] == from && c["to"] == to && c["protocol"] == protocol)
            .unwrap_or_else(|| panic!("no {from} → {to} {protocol} cell: {m:#}"))
    };
    let tcp = f.query("hlctl_net_throughput_bps");
    assert!(tcp.len() >= 10, "{tcp:?}");
    for s in &tcp {
        let from = s["metric"]["host"].as_str().unwrap();
        let to = host_of_peer(s["metric"]["peer"].as_str().unwrap());
        let v: f64 = s["value"][1].as_str().unwrap().parse().unwrap();
        let (key, share) = match s["metric"]["direction"].as_str().unwrap() {
            "upload" => ("write", "write_share"),
            _ => ("read", "read_share"),
        };
        let c = cell(from, to, "tcp");
        assert_eq!(c[key].as_f64(), Some(v), "{from} → {to} {key}: {c}");
        assert_eq!(c["to_is_host"], true, "{c}");
        assert_eq!(c["unit"], "bit/s", "{c}");
        let slower = [speeds[from], speeds[to]]
            .into_iter()
            .flatten()
            .reduce(f64::min);
        match (slower, c[share].as_f64()) {
            (Some(sp), Some(got)) => {
                assert!(
                    (got - v / sp).abs() <= 1e-9 * got,
                    "{from} → {to}: {got} vs {v}/{sp}"
                )
            }
            (None, None) => {}
            (want, got) => panic!("{from} → {to} {share}: {got:?}, slower end {want:?}"),
        }
    }
    let file = f.query("hlctl_file_transfer_bytes_per_second{host=\"nas\"}");
    assert_eq!(file.len(), 2, "read and write: {file:?}");
    let place = file[0]["metric"]["place"].as_str().unwrap();
    assert!(
        place.ends_with(files.file_name().unwrap().to_str().unwrap()),
        "{place}"
    );
    let protocol = file[0]["metric"]["protocol"].as_str().unwrap();
    let c = cell("nas", place, protocol);
    assert_eq!(
        (&c["unit"], &c["to_is_host"]),
        (&Value::from("B/s"), &Value::from(false)),
        "{c}"
    );
    for s in &file {
        let key = s["metric"]["direction"].as_str().unwrap();
        let v: f64 = s["value"][1].as_str().unwrap().parse().unwrap();
        assert_eq!(c[key].as_f64(), Some(v), "{key}: {c}");
    }
    // Nothing answers on port 9: an error naming Prometheus, exit 1.
    let o = pve2.hlctl(&[
        "matrix",
        "--prometheus",
        &format!("http://{}:9", common::fleet::PROM_IP),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("Prometheus at http://10.71.0.254:9"),
        "{}",
        text(&o)
    );
    // A URL hlctl cannot speak: invalid input, what is allowed named.
    let o = pve2.hlctl(&["matrix", "--prometheus", "https://prometheus.lab"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("allowed: http://HOST"), "{}", text(&o));
}
