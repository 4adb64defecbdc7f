//! A change refused for lack of CAP_NET_ADMIN says so and changes nothing
//! (root with the capability dropped by `setpriv`, in a throw-away
//! namespace); a global sysctl is named as global where a namespace cannot
//! have it.

mod common;

use common::lab::{NsLab as Lab, hlctl_argv};
use serde_json::Value;

fn mtu(lab: &Lab) -> u64 {
    let out = lab.ns.exec(&["ip", "-j", "link", "show", "dev", &lab.a]);
    serde_json::from_slice::<Value>(&out.stdout).unwrap()[0]["mtu"]
        .as_u64()
        .unwrap()
}

#[test]
fn a_change_without_cap_net_admin_is_refused_naming_it_and_changes_nothing() {
    common::require_root("network namespaces, setpriv");
    let lab = Lab::new();
    let before = mtu(&lab);
    let mut args = vec!["ip", "netns", "exec", &lab.ns.name];
    args.extend([
        "setpriv",
        "--inh-caps=-net_admin",
        "--bounding-set=-net_admin",
    ]);
    let argv = hlctl_argv(lab.dir.path(), &["set", &lab.a, "mtu", "1400", "--persist"]);
    args.extend(argv.iter().map(String::as_str));
    let out = common::die_with_test(&mut std::process::Command::new(args[0]))
        .args(&args[1..])
        .output()
        .unwrap();
    let text = common::output_text(&out);
    assert_eq!(out.status.code(), Some(3), "exit 3 (not permitted): {text}");
    assert!(
        text.contains("changing mtu needs CAP_NET_ADMIN: "),
        "{text}"
    );
    assert_eq!(mtu(&lab), before, "nothing changed");
    assert!(
        !lab.dir.path().join("state/nic-settings.json").exists(),
        "nothing persisted"
    );
    // The same with the capability: done.
    let ok = lab.hlctl(&["set", &lab.a, "mtu", "1400"]);
    assert!(ok.status.success(), "{}", common::output_text(&ok));
    assert_eq!(mtu(&lab), 1400);
}

#[test]
fn a_global_sysctl_is_named_global_in_a_namespace() {
    common::require_root("network namespaces");
    let lab = Lab::new();
    let out = lab.hlctl(&["sysctl", "net.core.netdev_max_backlog=2000"]);
    let text = common::output_text(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    // This machine is itself a container (/.dockerenv): the container's
    // refusal; on a bare host, the namespace has no such key.
    assert!(text.contains("global, not per network namespace"), "{text}");
    // Per namespace but set only from the host's: said so.
    let o = lab.hlctl(&["sysctl", "net.core.rmem_max=8388608"]);
    let text = common::output_text(&o);
    assert!(
        !o.status.success() && text.contains("may not change it: set it on the host"),
        "{text}"
    );
    // A per-namespace key of the set is there and settable.
    let ok = lab.hlctl(&["sysctl", "net.ipv4.tcp_rmem=4096 131072 8388608"]);
    assert!(ok.status.success(), "{}", common::output_text(&ok));
}
