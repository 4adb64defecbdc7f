//! A setting added only through the settings registry (`nic::registry`) and
//! its netlink encoder works end to end: `gso-max-size` (IFLA_GSO_MAX_SIZE,
//! bounded by the device's IFLA_TSO_MAX_SIZE) on a real veth in a
//! test-created namespace — `show` and `--json` print it as `ip -d link`
//! reads it, `set` applies it and reports before → after, a value above the
//! device's maximum is refused naming the limit and changes nothing,
//! `--persist` records it and `export` writes systemd's key for it.

mod common;

use common::lab::Lab;
use serde_json::Value;

/// `ip -j -d link show dev IFACE` in the lab's namespace.
fn ip_link(lab: &Lab, iface: &str) -> Value {
    let out = lab.here.ip(&["-j", "-d", "link", "show", "dev", iface]);
    serde_json::from_slice::<Value>(&out.stdout).unwrap()[0].clone()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn gso_max_size_is_shown_set_refused_above_the_limit_persisted_and_exported() {
    let lab = Lab::new();
    let a = lab.a.as_str();

    // show --json reads what the kernel holds, and the device's limit.
    let ip = ip_link(&lab, a);
    let show = &lab.json(&["show", a])["interfaces"][0];
    assert_eq!(show["gso_max_size"], ip["gso_max_size"], "{show}");
    assert_eq!(show["tso_max_size"], ip["tso_max_size"], "{show}");
    let before = ip["gso_max_size"].as_u64().unwrap();
    let max = ip["tso_max_size"].as_u64().unwrap();
    let want = if before == 131072 { 98304 } else { 131072 };
    assert!(want <= max, "veth's TSO limit {max} is below {want}");

    // set applies it: the row, the kernel (as ip reads it), the text view.
    let r = lab.json(&["set", a, "gso-max-size", &want.to_string()]);
    let row = &r["settings"][0];
    assert_eq!(row["setting"], "gso-max-size", "{r}");
    assert_eq!(row["before"], before, "{r}");
    assert_eq!(row["after"], want, "{r}");
    assert_eq!(row["status"], "changed", "{r}");
    assert_eq!(ip_link(&lab, a)["gso_max_size"], want);
    let text = String::from_utf8_lossy(&lab.hlctl(&["show", a]).stdout).into_owned();
    let line = format!("  sizes     gso-max-size {want}/{max} (current/max)");
    assert!(text.lines().any(|l| l == line), "no '{line}' in\n{text}");

    // Above the device's maximum: refused before anything is touched.
    let too_big = (max + 1).to_string();
    let out = lab.hlctl(&["set", a, "gso-max-size", &too_big, "mtu", "2000"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let e = stderr(&out);
    assert!(
        e.contains(&format!("gso-max-size {too_big}"))
            && e.contains(&format!("allowed 1 to {max}")),
        "{e}"
    );
    let ip = ip_link(&lab, a);
    assert_eq!(ip["gso_max_size"], want, "changed by a refused set");
    assert_ne!(ip["mtu"], 2000, "changed by a refused set");

    // --persist records it; export writes systemd's key.
    let r = lab.json(&["set", a, "gso-max-size", &before.to_string(), "--persist"]);
    assert!(r["persisted"].is_string(), "{r}");
    assert_eq!(ip_link(&lab, a)["gso_max_size"], before);
    let out = lab.hlctl(&["export", a, "--format", "systemd-link"]);
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(
        t.lines()
            .any(|l| l == format!("GenericSegmentOffloadMaxBytes={before}")),
        "{t}"
    );
}
