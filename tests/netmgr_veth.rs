//! Living with the host's network manager, end to end on real veth pairs
//! in a throw-away namespace: hlctl (in-process, `--local`) with `--root`
//! pointing at a temporary tree that holds the managers' files as Proxmox's
//! ifupdown2 and netplan-rendered systemd-networkd write them. With a moved
//! root hlctl never runs the managers' tools (`ifquery`, `networkctl`,
//! `udevadm`): the VM test does that; here the files are checked.

mod common;

use std::path::{Path, PathBuf};

use common::lab::NsLab as Lab;
use serde_json::Value;

/// hlctl in-process inside the lab's namespace with `root` as its root.
fn hlctl(lab: &Lab, root: &Path, args: &[&str]) -> std::process::Output {
    let root = root.display().to_string();
    let mut v = vec!["--local", "--root", root.as_str()];
    v.extend_from_slice(args);
    lab.hlctl(&v)
}

fn json(lab: &Lab, root: &Path, args: &[&str]) -> Value {
    let mut v = args.to_vec();
    v.push("--json");
    let out = hlctl(lab, root, &v);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "hlctl {args:?}: not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn write(root: &Path, path: &str, text: &str) -> PathBuf {
    let p = root.join(path.trim_start_matches('/'));
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

fn kernel_mtu(lab: &Lab, iface: &str) -> u64 {
    let out = lab.ns.exec(&["ip", "-j", "link", "show", "dev", iface]);
    serde_json::from_slice::<Value>(&out.stdout).unwrap()[0]["mtu"]
        .as_u64()
        .unwrap()
}

/// Proxmox VE's file with the veth as `vmbr0`'s port: `show` names
/// ifupdown2 as the owner of the MTU; `set --persist` puts `mtu 9000` into
/// the stanza (ifreload would reset it otherwise), leaves every other byte
/// alone, and records the line in hlctl's state file.
#[test]
fn ifupdown2_owns_the_mtu_and_set_persist_writes_the_stanza() {
    let lab = Lab::new();
    let root = tempfile::tempdir().unwrap();
    let a = lab.a.as_str();
    let before = format!(
        "auto lo\niface lo inet loopback\n\niface {a} inet manual\n\nauto vmbr0\niface vmbr0 inet static\n\taddress 192.0.2.10/24\n\tbridge-ports {a}\n\tbridge-stp off\n\tbridge-fd 0\n\n\nsource /etc/network/interfaces.d/*\n"
    );
    let file = write(root.path(), "/etc/network/interfaces", &before);
    std::fs::create_dir_all(root.path().join("usr/share/ifupdown2")).unwrap();
    let shown = json(&lab, root.path(), &["show", a]);
    let owners = &shown["interfaces"][0]["owners"];
    assert_eq!(owners[0]["manager"], "ifupdown2", "{owners}");
    assert_eq!(owners[0]["file"], "/etc/network/interfaces", "{owners}");
    assert_eq!(owners[0]["owns"], serde_json::json!(["mtu"]), "{owners}");
    let text = String::from_utf8_lossy(&hlctl(&lab, root.path(), &["show", a]).stdout).into_owned();
    assert!(
        text.contains(&format!(
            "owner     managed by ifupdown2 (iface {a}, /etc/network/interfaces): owns mtu"
        )),
        "{text}"
    );

    let r = json(&lab, root.path(), &["set", a, "mtu", "9000", "--persist"]);
    assert_eq!(kernel_mtu(&lab, a), 9000);
    assert_eq!(
        r["persisted_through"],
        serde_json::json!([format!("mtu 9000 in iface {a} of /etc/network/interfaces")]),
        "{r}"
    );
    let after = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        after,
        before.replace(
            &format!("iface {a} inet manual\n"),
            &format!("iface {a} inet manual\n\tmtu 9000\n")
        )
    );
    let backups: Vec<_> = std::fs::read_dir(lab.dir.path().join("state/owner-backup"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(backups.len(), 1);
    assert_eq!(std::fs::read_to_string(backups[0].path()).unwrap(), before);
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(lab.dir.path().join("state/nic-settings.json")).unwrap(),
    )
    .unwrap();
    let placed = &state["interfaces"][0]["placed"][0];
    assert_eq!(placed["manager"], "ifupdown2", "{state}");
    assert_eq!(placed["key"], "mtu");
    assert_eq!(placed["before"], Value::Null, "hlctl added the line");
    // Setting it again changes the line in place, keeping one line.
    json(&lab, root.path(), &["set", a, "mtu", "4000", "--persist"]);
    let again = std::fs::read_to_string(&file).unwrap();
    assert_eq!(again, after.replace("mtu 9000", "mtu 4000"));

    // The stanza now says 1500 (edited by the user) and the link holds it,
    // as after `ifreload -a`: the doctor says the persisted value is not in
    // effect and that ifupdown2 sets it.
    std::fs::write(&file, again.replace("mtu 4000", "mtu 1500")).unwrap();
    lab.ns.exec(&["ip", "link", "set", "dev", a, "mtu", "1500"]);
    let report = json(&lab, root.path(), &["doctor", a, "--stress", "0"]);
    let findings = report["findings"].as_array().unwrap();
    let f = findings
        .iter()
        .find(|f| f["id"] == "persisted-setting-overridden")
        .unwrap_or_else(|| panic!("no finding: {report}"));
    assert_eq!(
        f["title"],
        format!("{a}: persisted mtu 4000 is not in effect (1500); ifupdown2 sets it")
    );
    assert_eq!(f["fix"][0], format!("hlctl set {a} mtu 4000 --persist"));
}

/// Issue 39: an MTU persisted on a bridge (or bond) is written for the
/// devices under it that run at that MTU too, or `ifreload -a` puts the port
/// back to 1500 under a bridge at 9000 and jumbo frames die on the wire with
/// nothing said. A port at another MTU is left alone; `rollback` restores
/// the file byte for byte (stanzas of the bridge and of the port).
#[test]
fn an_mtu_persisted_on_a_bridge_is_written_for_its_port_at_that_mtu() {
    let lab = Lab::new();
    let root = tempfile::tempdir().unwrap();
    let a = lab.a.as_str();
    // A second port, at 1500, on its own veth pair in the lab's namespace.
    let (c, d) = (common::unique("vc"), common::unique("vd"));
    lab.ns
        .exec(&["ip", "link", "add", &c, "type", "veth", "peer", "name", &d]);
    lab.ns
        .exec(&["ip", "link", "add", "vmbr0", "type", "bridge"]);
    for (port, mtu) in [(a, "9000"), (c.as_str(), "1500")] {
        lab.ns.exec(&["ip", "link", "set", port, "mtu", mtu]);
        lab.ns.exec(&["ip", "link", "set", port, "master", "vmbr0"]);
    }
    // The bridge's own MTU set by hand, so that it does not follow its ports.
    lab.ns.exec(&["ip", "link", "set", "vmbr0", "mtu", "1500"]);
    let before = format!(
        "auto lo\niface lo inet loopback\n\niface {a} inet manual\n\niface {c} inet manual\n\nauto vmbr0\niface vmbr0 inet manual\n\tbridge-ports {a} {c}\n\tbridge-stp off\n\tbridge-fd 0\n"
    );
    let file = write(root.path(), "/etc/network/interfaces", &before);
    std::fs::create_dir_all(root.path().join("usr/share/ifupdown2")).unwrap();

    let r = json(
        &lab,
        root.path(),
        &["set", "vmbr0", "mtu", "9000", "--persist"],
    );
    assert_eq!(kernel_mtu(&lab, "vmbr0"), 9000);
    assert_eq!(
        r["persisted_through"],
        serde_json::json!([
            "mtu 9000 in iface vmbr0 of /etc/network/interfaces",
            format!("mtu 9000 in iface {a} of /etc/network/interfaces"),
        ]),
        "{r}"
    );
    let after = std::fs::read_to_string(&file).unwrap();
    let want = before
        .replace(
            &format!("iface {a} inet manual\n"),
            &format!("iface {a} inet manual\n\tmtu 9000\n"),
        )
        .replace("\tbridge-fd 0\n", "\tbridge-fd 0\n\tmtu 9000\n");
    assert_eq!(after, want, "both stanzas, and not the 1500 port's");
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(lab.dir.path().join("state/nic-settings.json")).unwrap(),
    )
    .unwrap();
    let names: Vec<&str> = state["interfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["vmbr0", a], "{state}");

    json(&lab, root.path(), &["rollback", "vmbr0"]);
    assert_eq!(kernel_mtu(&lab, "vmbr0"), 1500);
    assert_eq!(
        kernel_mtu(&lab, a),
        9000,
        "the port's live MTU was never hlctl's"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        before,
        "byte for byte"
    );
}

/// `hlctl rollback IFACE` after `set --persist`: the live MTU, the stanza
/// (byte for byte) and hlctl's state file go back to what they were before
/// the latest persisted `set`, the one before it stays.
#[test]
fn rollback_undoes_the_last_persisted_set_in_the_stanza_too() {
    let lab = Lab::new();
    let root = tempfile::tempdir().unwrap();
    let a = lab.a.as_str();
    let before = format!(
        "auto lo\niface lo inet loopback\n\niface {a} inet manual\n\taddress 192.0.2.10/24\n"
    );
    let file = write(root.path(), "/etc/network/interfaces", &before);
    std::fs::create_dir_all(root.path().join("usr/share/ifupdown2")).unwrap();
    let state_file = lab.dir.path().join("state/nic-settings.json");
    let entry = || -> Value {
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(&state_file).unwrap()).unwrap();
        v["interfaces"][0]["settings"].clone()
    };

    json(&lab, root.path(), &["set", a, "mtu", "4000", "--persist"]);
    let first = std::fs::read_to_string(&file).unwrap();
    assert!(first.contains("\tmtu 4000\n"), "{first}");
    json(&lab, root.path(), &["set", a, "mtu", "9000", "--persist"]);
    assert_eq!(entry()["mtu"], 9000);

    let r = json(&lab, root.path(), &["rollback", a]);
    assert_eq!(r["undone"][0]["interface"], a, "{r}");
    assert_eq!(r["undone"][0]["restored"]["nic"]["mtu"], 4000, "{r}");
    assert_eq!(kernel_mtu(&lab, a), 4000);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), first);
    assert_eq!(entry()["mtu"], 4000, "the first set stays persisted");
    let text =
        String::from_utf8_lossy(&hlctl(&lab, root.path(), &["rollback", a]).stdout).into_owned();
    assert_eq!(
        text.trim(),
        "Nothing to roll back.",
        "only the latest is kept"
    );

    // From the start: set once, roll back, and the file is as the user wrote it.
    json(&lab, root.path(), &["set", a, "mtu", "1500", "--persist"]);
    json(&lab, root.path(), &["set", a, "mtu", "9000", "--persist"]);
    json(&lab, root.path(), &["rollback", a]);
    assert_eq!(kernel_mtu(&lab, a), 1500);
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("\tmtu 1500\n")
    );
}

/// A link's systemd-networkd files under `root`: the `.network` sets the
/// MTU, the `.link` (matched by `link_match`) sets TSO. With `netplan`,
/// they are named and placed as netplan renders them, from
/// `/etc/netplan/01-lab.yaml`; else they are the user's own in
/// `/etc/systemd/network`. Returns the `.link` file's path.
fn networkd_files(lab: &Lab, root: &Path, link_match: &str, netplan: bool) -> String {
    let a = lab.a.as_str();
    let ifindex = json(lab, root, &["show", a])["interfaces"][0]["ifindex"]
        .as_u64()
        .unwrap();
    let base = if netplan {
        format!("/run/systemd/network/10-netplan-{a}")
    } else {
        format!("/etc/systemd/network/10-{a}")
    };
    let (network, link) = (format!("{base}.network"), format!("{base}.link"));
    write(
        root,
        &format!("/run/systemd/netif/links/{ifindex}"),
        &format!("ADMIN_STATE=configured\nOPER_STATE=routable\nNETWORK_FILE={network}\n"),
    );
    write(
        root,
        &format!("/run/udev/data/n{ifindex}"),
        &format!("E:ID_NET_LINK_FILE={link}\n"),
    );
    write(
        root,
        &network,
        &format!("[Match]\nName={a}\n\n[Link]\nMTUBytes=1500\n\n[Network]\nDHCP=ipv4\n"),
    );
    write(
        root,
        &link,
        &format!("[Match]\n{link_match}\n\n[Link]\nTCPSegmentationOffload=true\n"),
    );
    if netplan {
        write(root, "/etc/netplan/01-lab.yaml", &netplan_yaml(a));
    }
    link
}

/// `set A mtu 1400 feature tso off --persist`; its JSON reply.
fn set_mtu_1400_tso_off(lab: &Lab, root: &Path, a: &str) -> Value {
    let args = [
        "set",
        a,
        "mtu",
        "1400",
        "feature",
        "tso",
        "off",
        "--persist",
    ];
    json(lab, root, &args)
}

fn netplan_yaml(a: &str) -> String {
    format!("network:\n  version: 2\n  ethernets:\n    {a}:\n      mtu: 1500\n")
}

/// Files netplan rendered for networkd: the MTU and TSO go into hlctl's
/// own netplan file (netplan merges it after the user's), the user's YAML
/// and the rendered files stay as they are, and `rollback` takes hlctl's
/// file away again.
#[test]
fn netplan_rendered_files_get_hlctls_netplan_file() {
    let lab = Lab::new();
    let root = tempfile::tempdir().unwrap();
    let a = lab.a.as_str();
    networkd_files(&lab, root.path(), &format!("OriginalName={a}"), true);
    let shown = json(&lab, root.path(), &["show", a]);
    assert_eq!(
        shown["interfaces"][0]["owners"][0]["netplan"], "/etc/netplan/01-lab.yaml",
        "{shown}"
    );
    let r = set_mtu_1400_tso_off(&lab, root.path(), a);
    let file = "/etc/netplan/90-hlctl.yaml";
    assert_eq!(
        r["persisted_through"],
        serde_json::json!([
            format!("mtu 1400 in ethernets.{a} of {file}"),
            format!("tcp-segmentation-offload false in ethernets.{a} of {file}"),
            format!("tcp6-segmentation-offload false in ethernets.{a} of {file}"),
        ]),
        "{r}"
    );
    let ours = root.path().join(file.trim_start_matches('/'));
    let text = std::fs::read_to_string(&ours).unwrap();
    assert!(
        text.ends_with(&format!("network:\n  version: 2\n  ethernets:\n    {a}:\n      mtu: 1400\n      tcp-segmentation-offload: false\n      tcp6-segmentation-offload: false\n")),
        "{text}"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&ours).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "netplan wants its files private");
    let user = std::fs::read_to_string(root.path().join("etc/netplan/01-lab.yaml")).unwrap();
    assert_eq!(user, netplan_yaml(a));
    let dropins: Vec<PathBuf> = walk(&root.path().join("etc/systemd"));
    assert!(dropins.is_empty(), "no networkd drop-ins: {dropins:?}");

    let rb = json(&lab, root.path(), &["rollback", a]);
    assert_eq!(rb["undone"][0]["interface"], a, "{rb}");
    assert!(
        !ours.exists(),
        "hlctl's netplan file is gone after rollback"
    );
    assert_eq!(kernel_mtu(&lab, a), 1500);
}

/// The user's own `.network` and `.link` files own the MTU and TSO, so
/// `set --persist` writes hlctl's drop-ins beside them.
#[test]
fn networkd_and_link_files_get_hlctl_dropins() {
    let lab = Lab::new();
    let root = tempfile::tempdir().unwrap();
    let a = lab.a.as_str();
    networkd_files(&lab, root.path(), &format!("OriginalName={a}"), false);
    let owners = json(&lab, root.path(), &["show", a])["interfaces"][0]["owners"].clone();
    assert_eq!(owners[0]["manager"], "networkd", "{owners}");
    assert_eq!(owners[0]["netplan"], Value::Null, "{owners}");
    assert_eq!(owners[1]["manager"], "link-file", "{owners}");
    let tso = Value::from("feature tx-tcp-segmentation");
    assert!(
        owners[1]["owns"].as_array().unwrap().contains(&tso),
        "{owners}"
    );

    let r = set_mtu_1400_tso_off(&lab, root.path(), a);
    assert_eq!(kernel_mtu(&lab, a), 1400);
    assert_eq!(
        r["persisted_through"].as_array().map(Vec::len),
        Some(2),
        "{r}"
    );
    let dropin = |kind: &str| {
        let p = format!("etc/systemd/network/10-{a}.{kind}.d/90-hlctl.conf");
        std::fs::read_to_string(root.path().join(p)).unwrap()
    };
    assert!(dropin("network").ends_with("[Link]\nMTUBytes=1400\n"));
    assert!(dropin("link").ends_with("[Link]\nTCPSegmentationOffload=no\n"));
}

/// A `.link` file matching every device gets no drop-in: the change is
/// applied, persisting is refused with the key to set, and nothing (not the
/// `.network` drop-in written first, not the state entry) is left behind.
#[test]
fn a_link_file_for_every_device_is_refused_and_nothing_is_left_behind() {
    let lab = Lab::new();
    let root = tempfile::tempdir().unwrap();
    let a = lab.a.as_str();
    networkd_files(&lab, root.path(), "OriginalName=*", false);
    let args = ["set", a, "mtu", "1400", "feature", "tso", "on", "--persist"];
    let out = hlctl(&lab, root.path(), &args);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(kernel_mtu(&lab, a), 1400, "applied, not persisted");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("matches more than one device") && err.contains("TCPSegmentationOffload=yes"),
        "{err}"
    );
    let left: Vec<PathBuf> = walk(&root.path().join("etc/systemd"))
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(".d/"))
        .collect();
    assert!(
        left.is_empty(),
        "the .network drop-in written first is left: {left:?}"
    );
    assert!(
        !lab.dir.path().join("state/nic-settings.json").exists(),
        "nothing recorded when the owner refused"
    );
}

/// systemd 252's `99-default.link`, which matches every device and sets
/// only naming and MAC policies.
const DEFAULT_LINK: &str = "[Match]
OriginalName=*

[Link]
NamePolicy=keep kernel database onboard slot path
AlternativeNamesPolicy=database onboard slot path
MACAddressPolicy=persistent
";

/// Only `99-default.link` matches the link (udev's `ID_NET_LINK_FILE`):
/// it sets none of hlctl's settings, so it is no owner, and `set
/// --persist` writes no `.link` file of hlctl's own (one would replace
/// 99-default.link for the device, naming policy included): the settings
/// stay in hlctl's state file, re-applied by hlctld, and 99-default.link
/// is left byte for byte. With `networkd`, systemd-networkd manages the
/// link from a `.network` file that sets no MTU (the case the VM test
/// checks with real udev): the same, and no drop-in either.
fn only_99_default_link_matches(networkd: bool) {
    let lab = Lab::new();
    let root = tempfile::tempdir().unwrap();
    let a = lab.a.as_str();
    let ifindex = json(&lab, root.path(), &["show", a])["interfaces"][0]["ifindex"]
        .as_u64()
        .unwrap();
    let default = "/usr/lib/systemd/network/99-default.link";
    let file = write(root.path(), default, DEFAULT_LINK);
    write(
        root.path(),
        &format!("/run/udev/data/n{ifindex}"),
        &format!("E:ID_NET_LINK_FILE={default}\nE:ID_NET_NAME={a}\n"),
    );
    let network = format!("/etc/systemd/network/10-{a}.network");
    if networkd {
        write(
            root.path(),
            &format!("/run/systemd/netif/links/{ifindex}"),
            &format!("ADMIN_STATE=configured\nOPER_STATE=routable\nNETWORK_FILE={network}\n"),
        );
        write(
            root.path(),
            &network,
            &format!("[Match]\nName={a}\n\n[Network]\nDHCP=ipv4\n"),
        );
    }
    let shown = json(&lab, root.path(), &["show", a]);
    let owners = &shown["interfaces"][0]["owners"];
    let managers: Vec<&Value> = owners
        .as_array()
        .unwrap()
        .iter()
        .map(|o| &o["manager"])
        .collect();
    let want: Vec<&str> = if networkd { vec!["networkd"] } else { vec![] };
    assert_eq!(managers, want, "{shown}");
    if networkd {
        assert_eq!(owners[0]["owns"], serde_json::json!([]), "{shown}");
    }
    let r = set_mtu_1400_tso_off(&lab, root.path(), a);
    assert_eq!(kernel_mtu(&lab, a), 1400);
    assert!(r["persisted"].is_string(), "{r}");
    assert!(r.get("persisted_through").is_none(), "{r}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), DEFAULT_LINK);
    let written: Vec<PathBuf> = walk(root.path())
        .into_iter()
        .filter(|p| {
            !p.ends_with(&default[1..])
                && !p.ends_with(&network[1..])
                && !p.starts_with(root.path().join("run"))
        })
        .collect();
    assert!(
        written.is_empty(),
        "files written under the root: {written:?}"
    );
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(lab.dir.path().join("state/nic-settings.json")).unwrap(),
    )
    .unwrap();
    let entry = &state["interfaces"][0];
    assert_eq!(entry["settings"]["mtu"], 1400, "{state}");
    assert_eq!(entry["placed"], Value::Null, "{state}");
}

#[test]
fn only_99_default_link_matches_and_no_link_file_is_written() {
    only_99_default_link_matches(false);
}

#[test]
fn a_networkd_link_with_only_99_default_link_gets_no_link_file() {
    only_99_default_link_matches(true);
}

/// No manager's files at all (today's case): nothing is owned and
/// `--persist` writes only hlctl's own state file, as before.
#[test]
fn without_a_manager_nothing_changes() {
    let lab = Lab::new();
    let root = tempfile::tempdir().unwrap();
    let a = lab.a.as_str();
    assert_eq!(
        json(&lab, root.path(), &["show", a])["interfaces"][0]["owners"],
        serde_json::json!([])
    );
    let r = json(&lab, root.path(), &["set", a, "mtu", "1400", "--persist"]);
    assert!(r["persisted"].is_string(), "{r}");
    assert!(r.get("persisted_through").is_none(), "{r}");
    let entries: Vec<_> = walk(root.path());
    assert!(
        entries.is_empty(),
        "files written under the root: {entries:?}"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
