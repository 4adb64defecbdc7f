//! A polkit rules file granting hlctl's actions to a group makes a member of
//! that group succeed through hlctld, while other unprivileged users stay
//! refused. Real polkitd, real bus, a throw-away user and group.

mod common;

use common::NetNs;
use common::bus::{Rig, TempUser};
use serde_json::Value;

/// Run by `Rig::call_as` as another user; ignored in a normal run.
#[test]
#[ignore = "not a test: the D-Bus caller that Rig::call_as runs as another user"]
fn helper() {
    common::bus::helper_main();
}

#[test]
fn a_rules_file_granting_a_group_lets_its_member_change_things() {
    let user = TempUser::new();
    // A second group may try settings (apply-settings) but not keep them (persist).
    let trier = TempUser::new();
    let _trier_rules = common::bus::grant(&trier.group, &["apply-settings"]);
    let rules = common::bus::grant(&user.group, &[]);
    // polkitd reads rules at start: the rig starts it after the file exists.
    let mut rig = Rig::start();
    rig.start_polkit();
    let ns = NetNs::new();
    let (a, b) = (common::unique("pa"), common::unique("pb"));
    ns.veth(&a, &b);
    let state = tempfile::tempdir().unwrap();
    let daemon = rig.daemon(&ns, state.path(), &[]);

    // The group member: apply, persist and sysctl succeed.
    let out = rig.hlctl_as(
        user.uid,
        user.gid,
        &["set", &a, "mtu", "1420", "--persist", "--json"],
    );
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        daemon.log()
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["settings"][0]["after"], 1420);
    assert!(r["persisted"].is_string());
    let ip = ns.exec(&["ip", "-j", "link", "show", "dev", &a]);
    assert_eq!(
        serde_json::from_slice::<Value>(&ip.stdout).unwrap()[0]["mtu"],
        1420
    );
    let out = rig.hlctl_as(user.uid, user.gid, &["sysctl", "net.ipv4.tcp_sack=0"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sack = ns.exec(&["cat", "/proc/sys/net/ipv4/tcp_sack"]);
    assert_eq!(String::from_utf8_lossy(&sack.stdout).trim(), "0");
    // tune is authorized too: the call gets past polkit and fails only on
    // its missing parameters (no interface).
    match rig.call_as(user.uid, user.gid, "helper", "tune") {
        Err((name, msg)) => {
            assert_eq!(name, "org.hlctl.Daemon1.Error.InvalidArgument", "{msg}");
            assert!(msg.contains("interface"), "{msg}");
        }
        Ok(r) => panic!("tune: {r}"),
    }
    // nobody is not in the group: still refused.
    let out = rig.hlctl_as(65534, 65534, &["set", &a, "mtu", "1400"]);
    assert_eq!(out.status.code(), Some(3));
    let ip = ns.exec(&["ip", "-j", "link", "show", "dev", &a]);
    assert_eq!(
        serde_json::from_slice::<Value>(&ip.stdout).unwrap()[0]["mtu"],
        1420
    );
    // apply-settings without persist: the change is allowed, keeping it is not.
    let out = rig.hlctl_as(trier.uid, trier.gid, &["set", &a, "mtu", "1410"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = rig.hlctl_as(
        trier.uid,
        trier.gid,
        &["set", &a, "mtu", "1400", "--persist"],
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("org.hlctl.Daemon1.persist"));
    let ip = ns.exec(&["ip", "-j", "link", "show", "dev", &a]);
    assert_eq!(
        serde_json::from_slice::<Value>(&ip.stdout).unwrap()[0]["mtu"],
        1410,
        "refused as a whole: not applied either"
    );
    let out = rig.hlctl_as(trier.uid, trier.gid, &["sysctl", "net.ipv4.tcp_sack=1"]);
    assert_eq!(out.status.code(), Some(3));
    // The daemon logged the member's changes with their uid.
    let log = daemon.log();
    assert!(log.contains(&format!("uid={}", user.uid)), "{log}");
    drop(daemon);
    drop(rig);
    drop(rules);
}
