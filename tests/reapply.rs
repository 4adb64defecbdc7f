//! `hlctl reapply` in a throw-away namespace: what `set --persist` and
//! `sysctl --persist` persisted is put back after it was changed by hand
//! (read back with `ip`, `ethtool` and /proc/sys), and `--watch` re-applies
//! a re-created veth's settings within 2 s — no hlctld, no system bus.

mod common;

use std::time::{Duration, Instant};

use common::lab::{NsLab as Lab, hlctl_argv};
use common::net::Proc;
use serde_json::Value;

fn mtu(lab: &Lab, iface: &str) -> u64 {
    let out = lab.ns.exec(&["ip", "-j", "link", "show", "dev", iface]);
    serde_json::from_slice::<Value>(&out.stdout).unwrap()[0]["mtu"]
        .as_u64()
        .unwrap()
}

fn gro_on(lab: &Lab, iface: &str) -> bool {
    let out = lab.ns.exec(&["ethtool", "-k", iface]);
    String::from_utf8_lossy(&out.stdout).contains("generic-receive-offload: on")
}

fn slow_start(lab: &Lab) -> String {
    let out = lab
        .ns
        .exec(&["cat", "/proc/sys/net/ipv4/tcp_slow_start_after_idle"]);
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Persist MTU 1400, GRO off on `a`, and tcp_slow_start_after_idle=0.
fn persist(lab: &Lab) {
    let r = lab.json(&[
        "set",
        &lab.a,
        "mtu",
        "1400",
        "feature",
        "gro",
        "off",
        "--persist",
    ]);
    assert!(r["persisted"].is_string(), "{r}");
    let s = lab.json(&[
        "sysctl",
        "net.ipv4.tcp_slow_start_after_idle=0",
        "--persist",
    ]);
    assert!(s["persisted"].is_string(), "{s}");
}

#[test]
fn reapply_puts_back_what_was_changed_by_hand() {
    if common::skip_unless_root("network namespaces") {
        return;
    }
    let lab = Lab::new();
    persist(&lab);
    // By hand, behind hlctl's back.
    lab.ns.ip(&["link", "set", &lab.a, "mtu", "1500"]);
    lab.ns.exec(&["ethtool", "-K", &lab.a, "gro", "on"]);
    lab.ns.exec(&[
        "sh",
        "-c",
        "echo 1 > /proc/sys/net/ipv4/tcp_slow_start_after_idle",
    ]);
    assert_eq!(
        (mtu(&lab, &lab.a), gro_on(&lab, &lab.a), slow_start(&lab)),
        (1500, true, "1".into())
    );

    let r = lab.json(&["reapply"]);
    assert_eq!(r["failed"], serde_json::json!([]), "{r}");
    assert_eq!(r["links"][0]["interface"], lab.a.as_str(), "{r}");
    assert_eq!(
        r["sysctls"][0]["key"], "net.ipv4.tcp_slow_start_after_idle",
        "{r}"
    );
    assert_eq!(
        (mtu(&lab, &lab.a), gro_on(&lab, &lab.a), slow_start(&lab)),
        (1400, false, "0".into())
    );

    // Text output names each setting; a second run changes nothing and says so.
    let again = lab.hlctl(&["reapply"]);
    let text = common::output_text(&again);
    assert!(again.status.success(), "{text}");
    assert!(text.contains("mtu 1400 -> 1400"), "{text}");

    // A persisted value the link refuses: exit 1, the failure named.
    let state = lab.dir.path().join("state/nic-settings.json");
    let t = std::fs::read_to_string(&state).unwrap();
    std::fs::write(&state, t.replace("1400", "99999")).unwrap();
    let bad = lab.hlctl(&["reapply"]);
    let text = common::output_text(&bad);
    assert_eq!(bad.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!("failed: {}", lab.a)) && text.contains("mtu"),
        "{text}"
    );
    assert_eq!(slow_start(&lab), "0");
}

#[test]
fn reapply_watch_puts_back_the_settings_of_a_re_created_veth() {
    if common::skip_unless_root("network namespaces") {
        return;
    }
    let lab = Lab::new();
    persist(&lab);
    let argv = hlctl_argv(lab.dir.path(), &["reapply", "--watch", "--json"]);
    let mut cmd = std::process::Command::new("ip");
    cmd.args(["netns", "exec", &lab.ns.name]).args(&argv);
    let watch = Proc::spawn(common::die_with_test(&mut cmd));
    // Give it time to subscribe (its first pass prints the one-shot report).
    std::thread::sleep(Duration::from_millis(500));
    lab.ns.ip(&["link", "del", &lab.a]);
    lab.ns.veth(&lab.a, &lab.b);
    let created = Instant::now();
    let mut last = (0, true);
    while created.elapsed() < Duration::from_secs(2) {
        last = (mtu(&lab, &lab.a), gro_on(&lab, &lab.a));
        if last == (1400, false) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let took = created.elapsed();
    let (_, out, err) = watch.finish(Duration::from_millis(100));
    assert_eq!(
        last,
        (1400, false),
        "not re-applied within 2 s:\n{out}\n{err}"
    );
    eprintln!("re-applied {took:?} after the veth was created");
    assert!(
        out.lines().count() >= 2,
        "the first report and the link's line:\n{out}"
    );
    let line: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(line["interface"], lab.a.as_str(), "{out}");
    // The fresh veth came up at the kernel's 1500: the watch changed it.
    let m = line["outcome"]["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["setting"] == "mtu")
        .unwrap_or_else(|| panic!("no mtu row: {line}"));
    assert_eq!(
        (m["before"].as_u64(), m["after"].as_u64()),
        (Some(1500), Some(1400)),
        "{line}"
    );
}
