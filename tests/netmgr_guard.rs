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
//!
//! With networkd's files under the same kind of root, `Link.Owners` names
//! the settings each manager owns by the keys `ApplyChanges` takes.

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

/// Write `text` to `path` under `root`, making its directories.
fn write_under(root: &std::path::Path, path: &str, text: &str) {
    let p = root.join(path.trim_start_matches('/'));
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// `Link.Owners` names each setting a manager owns by the key
/// `ApplyChanges` takes: a client writes it back as it read it.
#[test]
fn the_settings_an_owner_holds_are_read_over_the_bus_as_keys_written_back() {
    let root = tempfile::tempdir().unwrap();
    let lab = Lab::new(&["--root", &root.path().display().to_string()]);
    let a = lab.a.clone();
    let path = lab.link_path(&a);
    const LINK: &str = "org.hlctl.Daemon1.Link";
    let ifindex: u32 = lab.rig.property(&path, LINK, "Ifindex").try_into().unwrap();
    // networkd's .network owns the MTU, a .link file TSO (as the veth
    // tests of tests/netmgr_veth.rs lay them out).
    let base = format!("/etc/systemd/network/10-{a}");
    write_under(
        root.path(),
        &format!("/run/systemd/netif/links/{ifindex}"),
        &format!("ADMIN_STATE=configured\nOPER_STATE=routable\nNETWORK_FILE={base}.network\n"),
    );
    write_under(
        root.path(),
        &format!("/run/udev/data/n{ifindex}"),
        &format!("E:ID_NET_LINK_FILE={base}.link\n"),
    );
    write_under(
        root.path(),
        &format!("{base}.network"),
        &format!("[Match]\nName={a}\n\n[Link]\nMTUBytes=1500\n"),
    );
    write_under(
        root.path(),
        &format!("{base}.link"),
        &format!("[Match]\nOriginalName={a}\n\n[Link]\nTCPSegmentationOffload=true\n"),
    );
    type Owner = (String, String, String, String, Vec<String>);
    let owners: Vec<Owner> = lab.rig.property(&path, LINK, "Owners").try_into().unwrap();
    let owns: Vec<&str> = owners
        .iter()
        .flat_map(|o| o.4.iter().map(String::as_str))
        .collect();
    for want in ["mtu", "feature.tx-tcp-segmentation"] {
        assert!(owns.contains(&want), "{want} not in {owners:?}");
    }
    assert!(!owns.iter().any(|k| k.contains(' ')), "{owners:?}");
    // Each key read is written back as it is.
    let apply = |key: &str, v: zbus::Variant<'_>| {
        let mut s = std::collections::HashMap::new();
        s.insert(key.to_string(), v);
        let o: std::collections::HashMap<String, zbus::Variant<'_>> = Default::default();
        let r = lab.rig.rt.block_on(lab.rig.conn.call_method(
            Some(common::bus::BUS_NAME),
            path.as_str(),
            Some(LINK),
            "ApplyChanges",
            &(s, o),
        ));
        let r = r.unwrap_or_else(|e| panic!("ApplyChanges {key}: {e}\n{}", lab.log()));
        let (rows, _): (
            Vec<hlctl::dbus::wire::set_rows::Row>,
            std::collections::HashMap<String, zbus::OwnedVariant>,
        ) = r.body().deserialize().unwrap();
        assert_eq!(rows[0].0, key, "{rows:?}");
        assert_eq!(rows[0].4, "changed", "{rows:?}");
    };
    apply("mtu", zbus::Variant::from(1400u32));
    assert_eq!(mtu(&lab, &a), 1400);
    apply("feature.tx-tcp-segmentation", zbus::Variant::from(false));
    let f: std::collections::HashMap<String, (bool, bool, bool)> = lab
        .rig
        .property(&path, LINK, "Features")
        .try_into()
        .unwrap();
    assert!(
        !f["tx-tcp-segmentation"].1,
        "{:?}",
        f["tx-tcp-segmentation"]
    );
}
