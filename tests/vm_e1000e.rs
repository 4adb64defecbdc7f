//! Smoke test of the VM rig: Debian's kernel, the real e1000e driver on an
//! emulated Intel 82574L, the real `ethtool` and `ip`, and our own binary
//! running in the guest. Every value is read back in the guest and checked
//! here on the host from the serial console.

mod common;

use common::NetNs;
use common::vm::{Vm, VmOutput, add_tap};

/// Value of the first line `KEY<whitespace>VALUE` in `text` (ethtool style).
fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(key))
        .map(str::trim)
}

/// (max rx, max tx, current rx, current tx) from `ethtool -g` output.
fn rings(text: &str) -> (u32, u32, u32, u32) {
    let (max, cur) = text
        .split_once("Current hardware settings:")
        .unwrap_or_else(|| panic!("no current settings in:\n{text}"));
    let num = |t: &str, k: &str| -> u32 {
        field(t, k)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {k} number in:\n{t}"))
    };
    (
        num(max, "RX:"),
        num(max, "TX:"),
        num(cur, "RX:"),
        num(cur, "TX:"),
    )
}

fn assert_ok(out: &VmOutput, name: &str) -> String {
    let s = out.section(name);
    assert_eq!(
        s.rc,
        0,
        "{name} failed in the guest:\n{}",
        out.guest_output()
    );
    s.text
}

/// One boot: the VM's e1000e is wired to a tap inside a namespace this test
/// created (traffic flows both ways and stays inside that namespace), then
/// the real driver is driven with the real `ethtool` and `ip`, and our own
/// binary runs in the guest.
#[test]
fn e1000e_on_a_tap_real_ethtool_and_our_binary() {
    common::require_root("a tap device in a network namespace");
    let ns = NetNs::new();
    add_tap(&ns, "tap0", "10.213.0.1/24");
    let (out, from_host) = std::thread::scope(|s| {
        let vm = s.spawn(|| {
            Vm::builder()
                .binary("/usr/sbin/ethtool")
                .iproute2()
                .binary(env!("CARGO_BIN_EXE_hlctl"))
                .nic_e1000e_tap(&ns, "tap0")
                .script(TAP_SCRIPT)
                .script(ETHTOOL_SCRIPT)
                .timeout(300)
                .run()
        });
        let from_host = ping_guest_while_it_runs(&ns, &vm);
        (vm.join().expect("VM thread"), from_host)
    });
    eprintln!("VM boot to power-off: {:.1} s", out.elapsed.as_secs_f64());
    out.assert_success();
    assert!(out.insmod_failures().is_empty(), "{}", out.serial);
    let ping = assert_ok(&out, "ping");
    assert!(ping.contains("3 packets received"), "{ping}");
    assert!(from_host, "the namespace never reached the guest");
    check_real_ethtool_and_our_binary(&out);
}

/// The guest pings the namespace, then stays up a while so the host side
/// can ping it.
const TAP_SCRIPT: &str = r#"ip addr add 10.213.0.2/24 dev eth0
ip link set eth0 up
wait_carrier eth0
# The first packet may be lost while the link settles: warm up, then count.
i=0
while ! ping -c 1 -W 1 10.213.0.1 >/dev/null && [ $i -lt 10 ]; do i=$((i + 1)); done
section ping ping -c 3 -W 5 10.213.0.1
sleep 6
"#;

const ETHTOOL_SCRIPT: &str = r#"section netdevs ls /sys/class/net
section drvinfo ethtool -i eth0
section ring-before ethtool -g eth0
section ring-set ethtool -G eth0 rx 4096 tx 4096
section ring-after ethtool -g eth0
wait_carrier eth0
section pause ethtool -a eth0
section pause-set ethtool -A eth0 autoneg off rx off tx off
section pause-after ethtool -a eth0
section link-set ethtool -s eth0 speed 100 duplex full autoneg off
wait_carrier eth0
section link-after ethtool eth0
section mtu-set ip link set eth0 mtu 9000
section mtu-after ip -j link show eth0
section hlctl-help hlctl --help
"#;

/// From the namespace to the guest, retried while the guest boots
/// (busybox's ping: the rig needs busybox anyway). True once it answered.
fn ping_guest_while_it_runs<T>(ns: &NetNs, vm: &std::thread::ScopedJoinHandle<'_, T>) -> bool {
    while !vm.is_finished() {
        let r = ns.exec_raw(&["busybox", "ping", "-c", "1", "-W", "1", "10.213.0.2"]);
        if r.status.success() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    false
}

fn check_real_ethtool_and_our_binary(out: &VmOutput) {
    let netdevs = assert_ok(out, "netdevs");
    assert!(netdevs.split_whitespace().any(|n| n == "eth0"), "{netdevs}");

    let drv = assert_ok(out, "drvinfo");
    assert_eq!(field(&drv, "driver:"), Some("e1000e"), "{drv}");

    let before = rings(&assert_ok(out, "ring-before"));
    assert_eq!(before, (4096, 4096, 256, 256), "ethtool -g before");
    assert_ok(out, "ring-set");
    let after = rings(&assert_ok(out, "ring-after"));
    assert_eq!(after, (4096, 4096, 4096, 4096), "ethtool -g after -G");

    let pause = assert_ok(out, "pause");
    for key in ["Autonegotiate:", "RX:", "TX:"] {
        let v = field(&pause, key);
        assert!(matches!(v, Some("on" | "off")), "{key} {v:?} in:\n{pause}");
    }
    assert_ok(out, "pause-set");
    let pause = assert_ok(out, "pause-after");
    for key in ["Autonegotiate:", "RX:", "TX:"] {
        assert_eq!(field(&pause, key), Some("off"), "{key} in:\n{pause}");
    }

    assert_ok(out, "link-set");
    let link = assert_ok(out, "link-after");
    assert_eq!(field(&link, "Speed:"), Some("100Mb/s"), "{link}");
    assert_eq!(field(&link, "Duplex:"), Some("Full"), "{link}");
    assert_eq!(field(&link, "Auto-negotiation:"), Some("off"), "{link}");
    assert_eq!(field(&link, "Link detected:"), Some("yes"), "{link}");

    assert_ok(out, "mtu-set");
    let j = out.json("mtu-after");
    assert_eq!(j[0]["ifname"], "eth0", "{j}");
    assert_eq!(j[0]["mtu"], 9000, "{j}");

    let help = assert_ok(out, "hlctl-help");
    assert!(help.contains("Usage"), "hlctl --help in the guest:\n{help}");
}

/// A guest that never finishes: qemu is killed at the timeout and reaped.
#[test]
fn vm_overrunning_its_timeout_is_killed() {
    let out = Vm::builder().script("sleep 1000").timeout(5).run();
    assert!(out.timed_out, "{}", out.serial);
    assert_eq!(out.guest_rc, None);
    assert!(
        !std::path::Path::new(&format!("/proc/{}", out.qemu_pid)).exists(),
        "qemu {} still running",
        out.qemu_pid
    );
}
