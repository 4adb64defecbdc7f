//! Living with the host's network manager on a booted Debian 12 (issue 24),
//! in a qemu VM (TCG, rig in tests/common/sysvm.rs) whose image adds
//! ifupdown2 to vm_systemd's (cached apart). One qemu process, two boots of
//! the same disk.
//!
//! Proxmox-style: `/etc/network/interfaces` with `vmbr0` bridging the
//! e1000e `eth0`, no `mtu` lines. `hlctl set eth0 mtu 9000 --persist` and
//! `hlctl set vmbr0 mtu 9000 --persist` write the lines into the stanzas;
//! `ifreload -a` (what Proxmox's "Apply Configuration" runs) keeps 9000,
//! `ifquery --check -a` is clean, and after a reboot — with no hlctld
//! installed — ifupdown2 itself brings back 9000. A value set without
//! `--persist` is reset by the next `ifreload -a`, as it always was.
//!
//! Before that, in the same boot, systemd-networkd: a `.network` file with
//! `MTUBytes=` makes networkd the MTU's owner; `set --persist` writes
//! hlctl's drop-in and `networkctl reconfigure` keeps the value.
//!
//! Not here yet: the NetworkManager and netplan boots.

mod common;

use std::time::{Duration, Instant};

use common::sysvm::{NETMGR_ROOT, PEER_CIDR, SystemVm, files_disk, image_of};
use common::vm::add_tap;
use common::{NetNs, deb};
use serde_json::Value;

const INTERFACES: &str = "auto lo
iface lo inet loopback

auto eth0
iface eth0 inet manual

auto vmbr0
iface vmbr0 inet static
\taddress 10.77.0.2/24
\tbridge-ports eth0
\tbridge-stp off
\tbridge-fd 0
";

fn mtu(vm: &mut SystemVm, iface: &str) -> u64 {
    let out = vm.ok(&format!("ip -j link show dev {iface}"));
    let v: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    v[0]["mtu"].as_u64().unwrap()
}

/// hlctl (copied from the second disk) in-process, as root.
fn hlctl_json(vm: &mut SystemVm, args: &str) -> Value {
    let out = vm.ok(&format!("hlctl --local {args} --json"));
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("hlctl {args}: {e}: {out}"))
}

fn install_hlctl(vm: &mut SystemVm) {
    vm.ok("mkdir -p /run/hl && { mountpoint -q /run/hl || mount -o ro /dev/vdb /run/hl; }");
    vm.ok("install -m 755 /run/hl/hlctl /usr/local/bin/hlctl");
    // eth0 leaves networkd below; nothing waits for it to come online.
    vm.ok("systemctl mask systemd-networkd-wait-online.service");
}

/// systemd-networkd configures eth0 from a `.network` file that sets the
/// MTU: `show` names it (from /run/systemd/netif/links), `set --persist`
/// writes hlctl's drop-in, and `networkctl reconfigure` keeps the value.
fn persist_through_networkd(vm: &mut SystemVm) {
    vm.ok("printf '[Match]\\nName=eth0\\n\\n[Link]\\nMTUBytes=1500\\n\\n[Network]\\nAddress=10.77.0.2/24\\n' > /etc/systemd/network/10-eth0.network");
    vm.ok("networkctl reload && networkctl reconfigure eth0 && sleep 3");
    let shown = hlctl_json(vm, "show eth0");
    let o = &shown["interfaces"][0]["owners"][0];
    assert_eq!(o["manager"], "networkd", "{shown}");
    assert_eq!(o["file"], "/etc/systemd/network/10-eth0.network", "{shown}");
    assert_eq!(o["owns"], serde_json::json!(["mtu"]), "{shown}");
    let r = hlctl_json(vm, "set eth0 mtu 9000 --persist");
    assert_eq!(
        r["persisted_through"][0],
        "MTUBytes 9000 in Link of /etc/systemd/network/10-eth0.network.d/90-hlctl.conf",
        "{r}"
    );
    let dropin = vm.ok("cat /etc/systemd/network/10-eth0.network.d/90-hlctl.conf");
    eprintln!("/etc/systemd/network/10-eth0.network.d/90-hlctl.conf:\n{dropin}");
    vm.ok("networkctl reconfigure eth0 && sleep 3");
    assert_eq!(mtu(vm, "eth0"), 9000, "after networkctl reconfigure");
    // Clean up for the ifupdown2 part: networkd lets go of eth0.
    vm.ok("rm -rf /etc/systemd/network/10-eth0.network* /var/lib/hlctl/nic-settings.json");
    vm.ok("networkctl reload && ip link set dev eth0 mtu 1500");
}

fn setup(vm: &mut SystemVm) {
    vm.ok(&format!(
        "cat > /etc/network/interfaces <<'EOF'\n{INTERFACES}EOF"
    ));
    vm.ok("ifreload -a");
    assert_eq!(mtu(vm, "vmbr0"), 1500);
}

fn persist_through_ifupdown2(vm: &mut SystemVm) {
    let shown = hlctl_json(vm, "show vmbr0");
    let o = &shown["interfaces"][0]["owners"][0];
    assert_eq!(o["manager"], "ifupdown2", "{shown}");
    assert_eq!(o["file"], "/etc/network/interfaces", "{shown}");
    for iface in ["eth0", "vmbr0"] {
        let r = hlctl_json(vm, &format!("set {iface} mtu 9000 --persist"));
        assert_eq!(
            r["persisted_through"][0],
            format!("mtu 9000 in iface {iface} of /etc/network/interfaces"),
            "{r}"
        );
    }
    let after = vm.ok("cat /etc/network/interfaces");
    eprintln!("/etc/network/interfaces after set --persist:\n{after}");
    assert_eq!(
        after.trim_end(),
        INTERFACES
            .replace(
                "iface eth0 inet manual\n",
                "iface eth0 inet manual\n\tmtu 9000\n"
            )
            .replace("\tbridge-fd 0\n", "\tbridge-fd 0\n\tmtu 9000\n")
            .trim_end()
    );
    vm.ok("ifreload -a");
    assert_eq!(
        (mtu(vm, "eth0"), mtu(vm, "vmbr0")),
        (9000, 9000),
        "after ifreload -a"
    );
    let (code, check) = vm.sh("ifquery --check -a");
    assert_eq!(code, 0, "ifquery --check -a:\n{check}");
    // Without --persist, the next ifreload -a puts the file's value back.
    hlctl_json(vm, "set vmbr0 mtu 8000");
    vm.ok("ifreload -a");
    assert_eq!(mtu(vm, "vmbr0"), 9000);
}

#[test]
fn ifupdown2_keeps_a_persisted_mtu_through_ifreload_and_reboot() {
    if !common::is_root() {
        panic!("vm_netmgr needs root (netns, tap)");
    }
    let t0 = Instant::now();
    let img = image_of(&NETMGR_ROOT, &["bridge"]);
    deb::took("the network managers' image", t0);
    let ns = NetNs::new();
    add_tap(&ns, "tap0", PEER_CIDR);
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let bin = tmp.path().join("hlctl");
    deb::ok(
        "strip hlctl",
        &deb::run(
            "strip",
            &["-o", bin.to_str().unwrap(), env!("CARGO_BIN_EXE_hlctl")],
        ),
    );
    let disk = files_disk(tmp.path(), &[&bin]);

    let t = Instant::now();
    let mut vm = SystemVm::boot(&img, &disk, &ns, "tap0");
    let boot1 = vm.wait_agent(Duration::from_secs(300));
    let (state, failed) = vm.wait_system_running();
    deb::took("boot 1", t);
    eprintln!("boot 1: {state}; failed: {failed}");
    install_hlctl(&mut vm);
    let t = Instant::now();
    persist_through_networkd(&mut vm);
    deb::took("networkd", t);
    let t = Instant::now();
    setup(&mut vm);
    persist_through_ifupdown2(&mut vm);
    deb::took("ifupdown2", t);

    let t = Instant::now();
    vm.send("systemctl reboot");
    let boot2 = vm.wait_agent(Duration::from_secs(300));
    assert_ne!(boot1, boot2, "no new boot");
    let (state, failed) = vm.wait_system_running();
    deb::took("reboot", t);
    eprintln!("after reboot: {state}; failed: {failed}");
    assert_eq!(
        (mtu(&mut vm, "eth0"), mtu(&mut vm, "vmbr0")),
        (9000, 9000),
        "after the reboot"
    );
    deb::took("the whole test", t0);
}
