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
    common::require_root("network namespaces");
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
    common::require_root("network namespaces");
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

/// `rps_cpus` of `dev`'s rx-0 in the lab's namespace (sysfs' hex mask).
fn rps_mask(lab: &Lab, dev: &str) -> u64 {
    let out = lab
        .ns
        .exec(&["cat", &format!("/sys/class/net/{dev}/queues/rx-0/rps_cpus")]);
    let t = String::from_utf8_lossy(&out.stdout).trim().replace(',', "");
    u64::from_str_radix(&t, 16).unwrap_or_else(|_| panic!("mask {t}"))
}

/// RPS has no network manager field: `set --persist` keeps it in hlctl's
/// state file, `reapply` writes it back after a hand change and onto a
/// re-created veth (what hlctld does on hot-plug), and `export --format
/// udev-rule` writes the rule for hosts without hlctld.
#[test]
fn rps_is_persisted_reapplied_and_exported_as_a_udev_rule() {
    common::require_root("network namespaces");
    let lab = Lab::new();
    let r = lab.json(&[
        "set",
        &lab.a,
        "rps",
        "cpus",
        "0",
        "flow-cnt",
        "64",
        "--persist",
    ]);
    assert!(r["persisted"].is_string(), "{r}");
    assert_eq!(rps_mask(&lab, &lab.a), 1);
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(lab.dir.path().join("state/nic-settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        state["interfaces"][0]["settings"]["rps"],
        serde_json::json!({"cpus": "0", "flow_cnt": 64}),
        "{state}"
    );

    // By hand, then re-created: reapply puts it back both times.
    let q = format!("/sys/class/net/{}/queues/rx-0", lab.a);
    lab.ns
        .exec(&["sh", "-c", &format!("echo 0 > {q}/rps_cpus")]);
    assert_eq!(rps_mask(&lab, &lab.a), 0);
    let r = lab.json(&["reapply"]);
    assert_eq!(r["failed"], serde_json::json!([]), "{r}");
    assert_eq!(rps_mask(&lab, &lab.a), 1);
    lab.ns.ip(&["link", "del", &lab.a]);
    lab.ns.veth(&lab.a, &lab.b);
    assert_eq!(rps_mask(&lab, &lab.a), 0);
    lab.json(&["reapply"]);
    assert_eq!(rps_mask(&lab, &lab.a), 1);
    let cnt = lab.ns.exec(&["cat", &format!("{q}/rps_flow_cnt")]);
    assert_eq!(String::from_utf8_lossy(&cnt.stdout).trim(), "64");

    // export: the udev rule writes the same mask; the .link file says where it went.
    let out = lab.hlctl(&["export", &lab.a, "--format", "udev-rule"]);
    let t = common::output_text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.lines()
            .any(|l| l.starts_with("ACTION==\"add\", SUBSYSTEM==\"net\"")
                && l.contains("echo 1 > $$q/rps_cpus; echo 64 > $$q/rps_flow_cnt")),
        "{t}"
    );
    let link = lab.hlctl(&["export", &lab.a, "--format", "systemd-link"]);
    assert!(common::output_text(&link).contains("--format udev-rule"));
}

/// `xps_cpus` of each transmit queue of `dev` in the lab's namespace, as masks.
fn xps_masks(lab: &Lab, dev: &str) -> Vec<u64> {
    (0..2)
        .map(|q| {
            let out = lab.ns.exec(&[
                "cat",
                &format!("/sys/class/net/{dev}/queues/tx-{q}/xps_cpus"),
            ]);
            let t = String::from_utf8_lossy(&out.stdout).trim().replace(',', "");
            u64::from_str_radix(&t, 16).unwrap_or_else(|_| panic!("mask {t}"))
        })
        .collect()
}

/// XPS on a veth with two transmit queues (veth's `numtxqueues`): `set`
/// writes one CPU list per queue, refuses a map naming another number of
/// queues (nothing changed) and a single-queue device; `show` reads it
/// back; `reapply` puts it back after a hand change and onto a re-created
/// device; the udev rule writes each queue's mask.
#[test]
fn xps_is_set_per_queue_read_back_reapplied_and_exported() {
    common::require_root("network namespaces");
    let lab = Lab::new();
    let (x, y) = (common::unique("xq"), common::unique("yq"));
    let mq = |lab: &Lab| {
        lab.ns.ip(&[
            "link",
            "add",
            &x,
            "numtxqueues",
            "2",
            "numrxqueues",
            "2",
            "type",
            "veth",
            "peer",
            "name",
            &y,
            "numtxqueues",
            "2",
            "numrxqueues",
            "2",
        ]);
        lab.ns.ip(&["link", "set", &x, "up"]);
    };
    mq(&lab);
    assert_eq!(xps_masks(&lab, &x), [0, 0]);
    let r = lab.json(&["set", &x, "xps", "cpus", "0/1", "--persist"]);
    assert!(r["persisted"].is_string(), "{r}");
    assert_eq!(xps_masks(&lab, &x), [1, 2]);
    let shown = lab.show(&x);
    assert_eq!(
        shown["xps"],
        serde_json::json!({"cpus": "0/1", "queues": 2}),
        "{shown}"
    );

    // Three lists for two queues: refused, named, nothing changed.
    let bad = lab.hlctl(&["set", &x, "xps", "cpus", "1/0/1"]);
    let t = common::output_text(&bad);
    assert!(!bad.status.success(), "{t}");
    assert!(
        t.contains("names 3 queues") && t.contains("has 2 transmit queues"),
        "{t}"
    );
    assert_eq!(xps_masks(&lab, &x), [1, 2]);
    // One transmit queue: no XPS to set.
    let one = lab.hlctl(&["set", &lab.a, "xps", "cpus", "0"]);
    assert!(!one.status.success(), "{}", common::output_text(&one));

    // By hand, then re-created: reapply puts it back both times.
    lab.ns.exec(&[
        "sh",
        "-c",
        &format!("echo 0 > /sys/class/net/{x}/queues/tx-1/xps_cpus"),
    ]);
    assert_eq!(xps_masks(&lab, &x), [1, 0]);
    let r = lab.json(&["reapply"]);
    assert_eq!(r["failed"], serde_json::json!([]), "{r}");
    assert_eq!(xps_masks(&lab, &x), [1, 2]);
    lab.ns.ip(&["link", "del", &x]);
    mq(&lab);
    assert_eq!(xps_masks(&lab, &x), [0, 0]);
    lab.json(&["reapply"]);
    assert_eq!(xps_masks(&lab, &x), [1, 2]);

    let out = lab.hlctl(&["export", &x, "--format", "udev-rule"]);
    let t = common::output_text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("echo 1 > /sys/class/net/%k/queues/tx-0/xps_cpus; echo 2 > /sys/class/net/%k/queues/tx-1/xps_cpus"),
        "{t}"
    );
}
