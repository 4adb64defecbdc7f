//! hlctl.toml: `hlctl config check` lists every problem (file, line, key)
//! and exits 2; hlctld started with a bad file logs the same problems, keeps
//! serving D-Bus with the good keys — here the metrics directory, where it
//! writes hlctl.prom at start and again after a link change.

mod common;

use common::hlctl;
use common::output_text as text;

use std::process::Output;
use std::time::{Duration, Instant};

use common::NetNs;
use common::bus::Rig;

const BAD: &str = "[check]
peers = [\"nas.lan\", \"bad host:1\"]
cpu = \"yes\"
colour = \"blue\"

[metrics]
textfile_dir = \"TEXTFILE\"
debounce_s = 0

[serve]
port = 0
";

#[test]
fn config_check_lists_every_problem_with_line_and_key() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("hlctl.toml");
    std::fs::write(
        &f,
        BAD.replace("TEXTFILE", "/var/lib/prometheus/node-exporter"),
    )
    .unwrap();
    let o = hlctl(&["config", "check", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let fp = f.display().to_string();
    for want in [
        format!("{fp}: 4 problem(s):"),
        format!("{fp}:2: check.peers: peer 'bad host:1': no host name"),
        format!("{fp}:3: check.cpu: invalid type: string \"yes\", expected a boolean"),
        format!("{fp}:4: check.colour: unknown key; [check] allows peers, dirs, cpu"),
        format!("{fp}:11: serve.port: 0: allowed 1 to 65535"),
    ] {
        assert!(err.contains(&want), "missing '{want}' in:\n{err}");
    }
    println!("{err}");

    // JSON: the same problems, machine-readable.
    let o = hlctl(&["config", "check", f.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["problems"].as_array().unwrap().len(), 4, "{v}");
    assert_eq!(v["problems"][2]["key"], "check.colour");
    assert_eq!(v["problems"][2]["line"], 4);

    // Unreadable (a directory), missing when named, not TOML at all.
    let o = hlctl(&["config", "check", d.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("cannot read"),
        "{}",
        text(&o)
    );
    let missing = d.path().join("nope.toml");
    let o = hlctl(&["config", "check", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    std::fs::write(&f, "[check\npeers = 1\n").unwrap();
    let o = hlctl(&["config", "check", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&format!("{fp}:1: not valid TOML")),
        "{}",
        text(&o)
    );

    // A good file.
    std::fs::write(
        &f,
        "[check]\npeers = [\"nas.lan\", \"pve2.lan:5201\"]\ndirs = [\"/mnt/nas\", \"/srv\"]\ncpu = true\nschedule = \"weekly\"\nafter_kernel_change = true\nbaseline = \"good\"\n\n[metrics]\ntextfile_dir = \"/var/lib/prometheus/node-exporter\"\n\n[serve]\nenable = false\n",
    )
    .unwrap();
    let o = hlctl(&["config", "check", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // The shipped conffile is valid too.
    let shipped = concat!(env!("CARGO_MANIFEST_DIR"), "/packaging/hlctl.toml");
    let o = hlctl(&["config", "check", shipped]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn hlctld_logs_a_bad_file_keeps_serving_and_writes_metrics_on_link_changes() {
    common::require_root("this test");
    let rig = Rig::start();
    let ns = NetNs::new();
    let (a, b) = (common::unique("ca"), common::unique("cb"));
    ns.veth(&a, &b);
    let state = tempfile::tempdir().unwrap();
    let textfile = state.path().join("textfile");
    let conf = state.path().join("hlctl.toml");
    std::fs::write(&conf, BAD.replace("TEXTFILE", textfile.to_str().unwrap())).unwrap();
    let daemon = rig.daemon(&ns, state.path(), &["--config", conf.to_str().unwrap()]);

    // Still serving: a read through the bus works.
    let o = rig.hlctl(&["show", &a, "--json"]);
    assert!(o.status.success(), "{}\n{}", text(&o), daemon.log());

    // The problems, with file, line and key, in its log.
    let cp = conf.display().to_string();
    let log = daemon.log();
    for want in [
        format!("{cp}:3: check.cpu: invalid type"),
        format!("{cp}:4: check.colour: unknown key"),
        format!("{cp}:11: serve.port: 0: allowed 1 to 65535"),
    ] {
        assert!(log.contains(&want), "missing '{want}' in:\n{log}");
    }

    // The good keys are used: hlctl.prom, written at start...
    let prom = textfile.join("hlctl.prom");
    let wait_for = |want: &str| -> String {
        let t0 = Instant::now();
        loop {
            let t = std::fs::read_to_string(&prom).unwrap_or_default();
            if t.contains(want) || t0.elapsed() > Duration::from_secs(15) {
                return t;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let want = format!("hlctl_mtu_bytes{{iface=\"{a}\"}} 1500");
    let t = wait_for(&want);
    assert!(t.contains(&want), "{want} not in:\n{t}\n{}", daemon.log());
    assert!(t.contains("# TYPE hlctl_link_speed_bps gauge"), "{t}");
    assert!(
        t.contains(&format!("hlctl_link_speed_is_physical{{iface=\"{a}\"}} 0")),
        "{t}"
    );
    // ...and again after a link change made behind its back.
    ns.ip(&["link", "set", &a, "mtu", "1400"]);
    let want = format!("hlctl_mtu_bytes{{iface=\"{a}\"}} 1400");
    let t = wait_for(&want);
    assert!(t.contains(&want), "{want} not in:\n{t}\n{}", daemon.log());
    println!("{t}");
}

#[test]
fn after_boot_check_runs_only_when_the_kernel_changed() {
    let host = common::fleet::DiskCheckHost::new("");
    let run = |args: &[&str]| host.hlctl(args);
    let state = &host.state;
    // The boot unit's ExecStart, before any check: nothing to compare with.
    let unit = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/systemd/hlctl-check-boot.service"
    ))
    .unwrap();
    assert!(
        unit.lines()
            .any(|l| l == "ExecStart=/usr/bin/hlctl check --if-kernel-changed")
    );
    let o = run(&["check", "--if-kernel-changed"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("no check ran yet"),
        "{}",
        text(&o)
    );
    // A first check; the same kernel after "boot": nothing to do.
    let o = run(&["check"]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", text(&o));
    let o = run(&["check", "--if-kernel-changed"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("nothing to do"),
        "{}",
        text(&o)
    );
    let checks = |out: &Output| -> usize {
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["results"].as_array().unwrap().len()
    };
    assert_eq!(checks(&run(&["history", "--kind", "check", "--json"])), 1);
    // The last check ran under another kernel (as after an upgrade): it runs.
    let db = rusqlite::Connection::open(state.join("history.db")).unwrap();
    db.execute(
        "UPDATE results SET kernel = '6.1.0-0-old' WHERE kind = 'check'",
        [],
    )
    .unwrap();
    drop(db);
    let o = run(&["check", "--if-kernel-changed"]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("kernel changed (6.1.0-0-old → "),
        "{}",
        text(&o)
    );
    assert_eq!(checks(&run(&["history", "--kind", "check", "--json"])), 2);
}
