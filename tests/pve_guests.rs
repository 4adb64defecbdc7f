//! A Proxmox node's VMs seen from the host (issue 36 §5): a configuration
//! tree under a test root (`--root`, the VMs' `/etc/pve/qemu-server/NNN.conf`
//! as Proxmox writes them) and, in a network namespace of this test, the
//! links Proxmox would have made for them: real taps (`tap101i0`,
//! `tap102i0`, `tap103i0`) on a real bridge `vmbr0` at MTU 9000, and VM
//! 102's firewall bridge `fwbr102i0`. Each tap is opened by a real qemu
//! (virtio-net-pci, with the queues its VM was started with; stopped
//! before its first instruction, `-S`: no guest boots, what is read is the
//! host's side: a queue the guest has not enabled stays detached, so each
//! tap carries one). Doctor names the VM behind each tap, says the three
//! things a guest cannot see and the queues the guest does not use;
//! nothing under the tree is written.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{ChildGuard, NetNs};
use serde_json::Value;

const HLCTL: &str = env!("CARGO_BIN_EXE_hlctl");

/// VM 101: a virtio NIC with one queue for 4 vCPUs, on a tap at 1500 below
/// vmbr0's 9000. VM 102: queues as vCPUs, MTU as the bridge, the firewall on.
const VM101: &str = "\
boot: order=scsi0;net0
cores: 4
memory: 4096
name: plex
net0: virtio=BC:24:11:5E:2A:01,bridge=vmbr0
ostype: l26
";
const VM102: &str = "\
cores: 2
name: nas
net0: virtio=BC:24:11:5E:2A:02,bridge=vmbr0,firewall=1,queues=2,mtu=1
";
/// VM 103: its config was given 2 queues after the VM started with one.
const VM103: &str = "\
cores: 2
name: backup
net0: virtio=BC:24:11:5E:2A:03,bridge=vmbr0,queues=2
";

/// Every file below `dir` and its bytes.
fn tree(dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            tree(&p, out);
        } else {
            out.insert(p.display().to_string(), std::fs::read(&p).unwrap());
        }
    }
}

/// A qemu holding `tap` open in `ns` with a virtio NIC of `queues` queues,
/// stopped before the guest's first instruction; killed (by pid) when
/// dropped.
fn qemu_on_tap(ns: &NetNs, tap: &str, mac: &str, queues: u32) -> ChildGuard {
    let mut netdev = format!("tap,id=n0,ifname={tap},script=no,downscript=no");
    let mut device = format!("virtio-net-pci,netdev=n0,mac={mac}");
    if queues > 1 {
        netdev += &format!(",queues={queues}");
        device += &format!(",mq=on,vectors={}", 2 * queues + 2);
    }
    let child = common::die_with_test(&mut std::process::Command::new("ip"))
        .args(["netns", "exec", &ns.name, "qemu-system-x86_64"])
        .args(["-machine", "q35,accel=tcg", "-S", "-m", "64", "-nodefaults"])
        .args(["-display", "none", "-monitor", "none", "-serial", "none"])
        .args(["-smp", &queues.to_string(), "-netdev", &netdev])
        .args(["-device", &device])
        .stdin(std::process::Stdio::null())
        .spawn()
        .expect("qemu-system-x86_64");
    let guard = ChildGuard(child);
    let t0 = std::time::Instant::now();
    // qemu opens every queue; the ones the guest has not enabled (a guest
    // stopped at its first instruction enables none) stay detached.
    while tap_queues(ns, tap) == 0 {
        assert!(t0.elapsed().as_secs() < 30, "qemu did not open {tap}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    guard
}

/// The transmit queues `tap` carries in `ns` (its sysfs `tx-N`).
fn tap_queues(ns: &NetNs, tap: &str) -> u32 {
    let o = ns.exec(&[
        "sh",
        "-c",
        &format!("ls /sys/class/net/{tap}/queues 2>/dev/null; true"),
    ]);
    String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .filter(|q| q.starts_with("tx-"))
        .count() as u32
}

/// The bridge, the VMs' taps (each opened by its qemu, with the queues
/// the VM was started with) and VM 102's firewall bridge and veth pair,
/// as Proxmox lays them out.
fn links(ns: &NetNs) -> Vec<ChildGuard> {
    ns.ip(&["link", "add", "vmbr0", "type", "bridge"]);
    ns.ip(&["link", "set", "vmbr0", "mtu", "9000", "up"]);
    let vms = vec![
        qemu_on_tap(ns, "tap101i0", "BC:24:11:5E:2A:01", 1),
        qemu_on_tap(ns, "tap102i0", "BC:24:11:5E:2A:02", 2),
        qemu_on_tap(ns, "tap103i0", "BC:24:11:5E:2A:03", 1),
    ];
    for (tap, mtu) in [
        ("tap101i0", "1500"),
        ("tap102i0", "9000"),
        ("tap103i0", "9000"),
    ] {
        ns.ip(&["link", "set", tap, "mtu", mtu, "up"]);
    }
    ns.ip(&["link", "set", "tap101i0", "master", "vmbr0"]);
    ns.ip(&["link", "set", "tap103i0", "master", "vmbr0"]);
    // VM 102's firewall: tap → fwbr102i0, then the veth pair to vmbr0.
    ns.ip(&["link", "add", "fwbr102i0", "type", "bridge"]);
    ns.ip(&["link", "set", "fwbr102i0", "mtu", "9000", "up"]);
    ns.ip(&["link", "set", "tap102i0", "master", "fwbr102i0"]);
    ns.ip(&[
        "link",
        "add",
        "fwpr102p0",
        "mtu",
        "9000",
        "type",
        "veth",
        "peer",
        "name",
        "fwln102i0",
        "mtu",
        "9000",
    ]);
    ns.ip(&["link", "set", "fwpr102p0", "master", "vmbr0", "up"]);
    ns.ip(&["link", "set", "fwln102i0", "master", "fwbr102i0", "up"]);
    vms
}

#[test]
fn doctor_names_the_vm_behind_each_tap_and_what_it_cannot_see() {
    common::require_root("taps and bridges in a network namespace");
    let ns = NetNs::new();
    let _vms = links(&ns);
    let root = tempfile::tempdir().unwrap();
    let conf = root.path().join("etc/pve/qemu-server");
    std::fs::create_dir_all(&conf).unwrap();
    std::fs::write(conf.join("101.conf"), VM101).unwrap();
    std::fs::write(conf.join("102.conf"), VM102).unwrap();
    std::fs::write(conf.join("103.conf"), VM103).unwrap();
    let mut before = BTreeMap::new();
    tree(&root.path().join("etc"), &mut before);

    let o = ns.exec_raw(&[
        HLCTL,
        "--root",
        root.path().to_str().unwrap(),
        "doctor",
        "vmbr0",
        "--stress",
        "0",
        "--json",
    ]);
    let r: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    let findings = r["findings"].as_array().unwrap();
    let by = |id: &str| -> Vec<&Value> { findings.iter().filter(|f| f["id"] == id).collect() };
    let show = serde_json::to_string_pretty(findings).unwrap();

    // VM 101: one queue for its 4 vCPUs, and its tap below the bridge.
    let q = by("vm-nic-queues");
    assert_eq!(q.len(), 1, "{show}");
    assert_eq!(q[0]["interface"], "tap101i0");
    assert_eq!(
        q[0]["title"],
        "VM 101 (plex) net0: its virtio NIC has 1 queue(s) for 4 vCPUs"
    );
    assert_eq!(
        q[0]["fix"][0],
        "# qm set 101 --net0 virtio=BC:24:11:5E:2A:01,bridge=vmbr0,queues=4"
    );
    let carried = |f: &Value| {
        f["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "queues the tap carries (host side)")
            .map(|e| e["value"].clone())
    };
    assert_eq!(carried(q[0]), Some(Value::from("1")), "{}", q[0]);
    // VMs 102 and 103: their configs give 2 queues; VM 102's qemu opened
    // 2 and VM 103's 1, and neither guest enabled a second: the taps carry 1.
    let n = by("vm-nic-queues-not-in-effect");
    let taps: Vec<&str> = n.iter().map(|f| f["interface"].as_str().unwrap()).collect();
    assert_eq!(taps, ["tap102i0", "tap103i0"], "{show}");
    assert_eq!(
        n[1]["title"],
        "VM 103 (backup) net0: its config gives 2 queue(s), the guest uses 1"
    );
    assert_eq!(
        n[1]["fix"][0],
        "# in VM 103: ethtool -L <its NIC> combined 2; or, if net0 changed since it started: qm reboot 103"
    );
    let m = by("vm-tap-mtu-below-bridge");
    assert_eq!(m.len(), 1, "{show}");
    assert_eq!(
        m[0]["title"],
        "VM 101 (plex) net0: tap MTU 1500 below vmbr0's 9000"
    );
    assert!(
        m[0]["fix"][0]
            .as_str()
            .unwrap()
            .starts_with("# qm set 101 --net0 virtio=BC:24:11:5E:2A:01,bridge=vmbr0,mtu=1")
    );
    // VM 102: only the firewall's hop (its queues and MTU are right).
    let fw = by("vm-firewall-hop");
    assert_eq!(fw.len(), 1, "{show}");
    assert_eq!(fw[0]["interface"], "tap102i0");
    let path = fw[0]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "path")
        .unwrap();
    assert_eq!(
        path["value"],
        "tap102i0 → fwbr102i0 → fwpr102p0/fwln102i0 → vmbr0"
    );
    assert!(
        !findings.iter().any(|f| f["interface"] == "tap102i0"
            && !["vm-firewall-hop", "vm-nic-queues-not-in-effect"]
                .contains(&f["id"].as_str().unwrap())),
        "{show}"
    );
    // Every fix is Proxmox's to make: a comment, never a command hlctl runs.
    for f in findings
        .iter()
        .filter(|f| f["id"].as_str().unwrap().starts_with("vm-"))
    {
        assert!(f["fix"][0].as_str().unwrap().starts_with("# "), "{f}");
    }

    // The text names them too.
    let o = ns.exec_raw(&[
        HLCTL,
        "--root",
        root.path().to_str().unwrap(),
        "doctor",
        "vmbr0",
        "--stress",
        "0",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("VM 101 (plex) net0: its virtio NIC has 1 queue(s) for 4 vCPUs"),
        "{text}"
    );

    // Nothing under the tree was written.
    let mut after = BTreeMap::new();
    tree(&root.path().join("etc"), &mut after);
    assert_eq!(before, after);
}

#[test]
fn a_host_without_proxmox_has_no_vm_checks() {
    common::require_root("a tap in a network namespace");
    let ns = NetNs::new();
    ns.ip(&["tuntap", "add", "dev", "tap101i0", "mode", "tap"]);
    let root = tempfile::tempdir().unwrap();
    let o = ns.exec_raw(&[
        HLCTL,
        "--root",
        root.path().to_str().unwrap(),
        "doctor",
        "--stress",
        "0",
        "--json",
    ]);
    let r: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    let all = [&r["findings"], &r["passed"], &r["not_checked"]];
    for list in all {
        for c in list.as_array().unwrap() {
            let name = c["id"].as_str().or(c["check"].as_str()).unwrap();
            assert!(!name.starts_with("vm-"), "{c}");
        }
    }
}
