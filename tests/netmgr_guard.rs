//! hlctld never fights a network manager: a persisted MTU that something
//! else changes is re-applied once (after the managers settle); set back
//! again, hlctld logs one warning naming the manager and its file, shows
//! the conflict on the link and leaves the setting alone.
//!
//! hlctld serves a veth pair in a test namespace on a private bus, with
//! `--root` at a temporary tree holding Proxmox's `/etc/network/interfaces`
//! (so it names ifupdown2 as the owner and runs no manager tool). What
//! `ifreload -a` does to a stanza without `mtu` — set 1500 — is done here
//! with `ip link set` (ifupdown2 itself runs in the VM test).

mod common;

use std::time::{Duration, Instant};

use common::bus::DaemonLab as Lab;

fn mtu(lab: &Lab, iface: &str) -> u64 {
    let out = lab.ns.exec(&["ip", "-j", "link", "show", "dev", iface]);
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()[0]["mtu"]
        .as_u64()
        .unwrap()
}

/// Wait until `iface`'s MTU is `want`, up to `timeout`; the MTU at the end.
fn wait_mtu(lab: &Lab, iface: &str, want: u64, timeout: Duration) -> u64 {
    let start = Instant::now();
    loop {
        let m = mtu(lab, iface);
        if m == want || start.elapsed() > timeout {
            return m;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_value_set_back_twice_is_reapplied_once_then_reported_not_fought() {
    let root = tempfile::tempdir().unwrap();
    let root_arg = root.path().display().to_string();
    let mut lab = Lab::new(&["--root", &root_arg]);
    let a = lab.a.clone();
    // The guard is what is tested here: the veth gets a classic ifupdown
    // stanza (no ifupdown2), which owns no mtu without a line, so hlctl
    // writes nothing into it and the warning names it as the manager.
    std::fs::create_dir_all(root.path().join("etc/network")).unwrap();
    std::fs::write(
        root.path().join("etc/network/interfaces"),
        format!("iface {a} inet manual\n\tbridge-stp off\n"),
    )
    .unwrap();
    let r = lab.json(&["set", &a, "mtu", "9000", "--persist"]);
    assert!(r["persisted"].is_string(), "{r}");
    assert_eq!(mtu(&lab, &a), 9000);

    // Someone else sets it back: hlctld re-applies the persisted value once.
    lab.ns
        .exec(&["ip", "link", "set", "dev", &a, "mtu", "1500"]);
    assert_eq!(
        wait_mtu(&lab, &a, 9000, Duration::from_secs(15)),
        9000,
        "not re-applied:\n{}",
        lab.log()
    );
    assert!(
        lab.log()
            .contains("changed by someone else: mtu 1500 (persisted 9000)"),
        "{}",
        lab.log()
    );

    // And again: now hlctld says who does it and leaves it alone.
    lab.ns
        .exec(&["ip", "link", "set", "dev", &a, "mtu", "1500"]);
    let start = Instant::now();
    while !lab.log().contains("stops re-applying") && start.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(mtu(&lab, &a), 1500, "hlctld fought back:\n{}", lab.log());
    let log = lab.log();
    assert_eq!(log.matches("stops re-applying").count(), 1, "{log}");
    assert!(
        log.contains(&format!(
            "Set by: managed by ifupdown (iface {a}, /etc/network/interfaces)"
        )),
        "{log}"
    );
    assert_eq!(
        log.matches("re-applying the persisted values once").count(),
        1,
        "{log}"
    );
    let shown = lab.show(&a);
    let conflicts = shown["conflicts"]
        .as_array()
        .expect("conflicts on the link");
    assert_eq!(conflicts.len(), 1, "{shown}");
    assert!(
        conflicts[0]
            .as_str()
            .unwrap()
            .starts_with("mtu was set back to 1500"),
        "{shown}"
    );

    // `status` lists it, and it holds across a restart of hlctld: the
    // persisted MTU is not re-applied at start, the conflict is still shown.
    let st = lab.json(&["status"]);
    assert_eq!(st["conflicts"][0]["interface"], a.as_str(), "{st}");
    assert_eq!(st["conflicts"][0]["setting"], "mtu", "{st}");
    lab.daemon.terminate();
    lab.daemon = lab
        .rig
        .daemon(&lab.ns, lab.state.path(), &["--root", &root_arg]);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        mtu(&lab, &a),
        1500,
        "re-applied after a restart:\n{}",
        lab.log()
    );
    let shown = lab.show(&a);
    assert!(
        shown["conflicts"][0]
            .as_str()
            .is_some_and(|c| c.starts_with("mtu was set back to 1500")),
        "{shown}"
    );

    // A third change is not fought either.
    lab.ns
        .exec(&["ip", "link", "set", "dev", &a, "mtu", "1400"]);
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(mtu(&lab, &a), 1400);
    assert_eq!(lab.log().matches("stops re-applying").count(), 1);

    // Persisting again guards the new value afresh.
    lab.json(&["set", &a, "mtu", "9000", "--persist"]);
    assert!(lab.show(&a).get("conflicts").is_none());
    assert_eq!(lab.json(&["status"])["conflicts"], serde_json::json!([]));
}
