//! `hlctl show` and `hlctl set` against the real e1000e driver in a qemu VM,
//! each step cross-checked with the real `ethtool` in the same guest; last,
//! `hlctl tune` of the guest's virtio NIC at 1 channel (`tune_channels.rs`).

mod common;
#[path = "vm_e1000e_hlctl/refusal.rs"]
mod refusal;
#[path = "vm_e1000e_hlctl/tune_channels.rs"]
mod tune_channels;
#[path = "vm_e1000e_hlctl/virtio_mq.rs"]
mod virtio_mq;

use common::NetNs;
use common::vm::{NicBackend, Vm, VmOutput, add_tap_multi_queue};
use serde_json::Value;

/// The guest's NICs by driver: the e1000e is `eth0` and the multi-queue
/// virtio NIC `eth1`, whichever order the drivers probed in.
const NAME_NICS: &str = r#"drv() { basename "$(readlink /sys/class/net/$1/device/driver)"; }
if [ "$(drv eth0)" != e1000e ]; then
  ip link set eth0 name tmp0
  ip link set eth1 name eth0
  ip link set tmp0 name eth1
fi
nic_drivers() { echo "eth0 $(drv eth0)"; echo "eth1 $(drv eth1)"; }
section nic-drivers nic_drivers
"#;

/// The virtio NIC (2 queue pairs, 2 vCPUs): hlctl's queue layout against
/// `ethtool -l`, /proc/interrupts, /proc/irq/N/ and the queues' sysfs, after
/// RPS/XPS/IRQ affinity written in sysfs and procfs, and channels 1 then 2.
const VIRTIO_MQ: &str = r#"
# IRQ NAME SMP_AFFINITY_LIST EFFECTIVE_AFFINITY_LIST of eth1's virtio vectors.
v_irqs() {
  vd=$(basename "$(readlink /sys/class/net/eth1/device)")
  awk -v vd="$vd-" 'index($NF, vd) == 1 { sub(":", "", $1); print $1, $NF }' /proc/interrupts |
  while read n name; do
    echo "$n $name $(cat /proc/irq/$n/smp_affinity_list) $(cat /proc/irq/$n/effective_affinity_list 2>/dev/null || echo -)"
  done
}
# QUEUE RPS_CPUS RPS_FLOW_CNT (rx) or QUEUE XPS_CPUS (tx), per sysfs queue dir.
v_queues() {
  for q in /sys/class/net/eth1/queues/*; do
    case $q in
      */rx-*) echo "$(basename $q) $(cat $q/rps_cpus) $(cat $q/rps_flow_cnt)" ;;
      */tx-*) echo "$(basename $q) $(cat $q/xps_cpus 2>/dev/null || echo -)" ;;
    esac
  done
}
v_spread() {
  Q=/sys/class/net/eth1/queues
  echo 2 > $Q/rx-0/rps_cpus && echo 1 > $Q/rx-1/rps_cpus &&
  echo 256 > $Q/rx-0/rps_flow_cnt && echo 4096 > /proc/sys/net/core/rps_sock_flow_entries &&
  echo 2 > $Q/tx-0/xps_cpus && echo 1 > $Q/tx-1/xps_cpus || return 1
  n=$(v_irqs | awk '$2 ~ /input\.0$/ { print $1 }')
  echo 1 > /proc/irq/$n/smp_affinity_list
}
ip link set eth1 up
section v-nproc nproc
section v-irqs0 v_irqs
section v-show hlctl show eth1 --json
section v-show-text hlctl show eth1
section v-l ethtool -l eth1
section v-x ethtool -x eth1
section v-irqs v_irqs
section v-queues v_queues
section v-interrupts cat /proc/interrupts
section v-spread v_spread
section v-spread-irqs0 v_irqs
section v-spread-show hlctl show eth1 --json
section v-spread-irqs v_irqs
section v-spread-queues v_queues
section v-ch1 hlctl set eth1 channels combined 1 --json
section v-ch1-l ethtool -l eth1
section v-ch1-queues ls -1 /sys/class/net/eth1/queues
section v-ch1-show hlctl show eth1 --json
section v-ch2 hlctl set eth1 channels combined 2 --json
section v-ch2-l ethtool -l eth1
section v-ch2-queues ls -1 /sys/class/net/eth1/queues
section v-ch2-irqs0 v_irqs
section v-ch2-show hlctl show eth1 --json
section v-ch2-irqs v_irqs
section v-ch2-rpsxps v_queues
section v-aff-bad hlctl set eth1 irq-affinity cpus 0/1 --json
section v-aff hlctl set eth1 irq-affinity cpus 0/0/1/1 xps cpus 1/0 --json
section v-aff-irqs v_irqs
section v-aff-queues v_queues
section v-aff-show hlctl show eth1 --json
section e-l ethtool -l eth0
section e-show hlctl show eth0 --json
section e-show-text hlctl show eth0
section e-irqs grep eth0 /proc/interrupts
"#;

/// The e1000e has one queue pair and no channels: hlctl shows it as
/// single-queue, with the queue vectors /proc/interrupts lists for it.
fn e1000e_single_queue(out: &VmOutput) {
    let l = out.section("e-l");
    assert_ne!(l.rc, 0, "e1000e has no channels: {}", l.text);
    let s = iface(out, "e-show");
    assert!(s["channels"].is_null(), "{}", s["channels"]);
    let q = &s["queues"];
    let len = |k: &str| q[k].as_array().map(Vec::len);
    assert_eq!((len("rx"), len("tx")), (Some(1), Some(1)), "{q}");
    let shown: Vec<(u64, &str)> = q["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["irq"].as_u64().unwrap(), v["name"].as_str().unwrap()))
        .collect();
    let irqs = ok(out, "e-irqs");
    let listed: Vec<(u64, &str)> = irqs
        .lines()
        .filter_map(|l| {
            let (n, rest) = l.trim().split_once(':')?;
            let name = rest.split_whitespace().last()?;
            (name.contains("-rx-") || name.contains("-tx-")).then(|| (n.parse().ok(), name))
        })
        .map(|(n, name)| (n.expect("irq number"), name))
        .collect();
    assert_eq!(shown, listed, "{irqs}");
    let text = ok(out, "e-show-text");
    assert!(
        text.contains(
            "  queues    1 rx / 1 tx (channels not supported by driver; 2 physical cores)"
        ),
        "{text}"
    );
}

/// Value of the first line `KEY VALUE` in ethtool-style text.
fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(key))
        .map(str::trim)
}

/// (max rx, max tx, current rx, current tx) from `ethtool -g`.
fn ethtool_rings(text: &str) -> (u64, u64, u64, u64) {
    let (max, cur) = text
        .split_once("Current hardware settings:")
        .expect("ethtool -g output");
    let n = |t: &str, k: &str| {
        field(t, k)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{k} in {t}"))
    };
    (n(max, "RX:"), n(max, "TX:"), n(cur, "RX:"), n(cur, "TX:"))
}

fn ok(out: &VmOutput, name: &str) -> String {
    let s = out.section(name);
    assert_eq!(
        s.rc,
        0,
        "{name} failed in the guest:\n{}",
        out.guest_output()
    );
    s.text
}

fn iface(out: &VmOutput, name: &str) -> Value {
    ok(out, name);
    out.json(name)["interfaces"][0].clone()
}

fn onoff(v: &Value) -> &'static str {
    if v.as_bool().expect("bool") {
        "on"
    } else {
        "off"
    }
}

#[test]
fn hlctl_on_a_real_e1000e_agrees_with_ethtool() {
    let script = r#"ip link set eth0 up
wait_carrier eth0
section show hlctl show eth0 --json
section show-text hlctl show eth0
section e-i ethtool -i eth0
section e-g ethtool -g eth0
section e-a ethtool -a eth0
section e-k ethtool -k eth0
section e-c ethtool -c eth0
section e-link ethtool eth0
section e-S ethtool -S eth0
section ip ip -j -d link show eth0

export HLCTL_ETHTOOL_IOCTL=1
section show-ioctl hlctl show eth0 --json
section ring-ioctl hlctl set eth0 ring rx 1024 tx 512 --json
wait_carrier eth0
section ring-ioctl-e ethtool -g eth0
section ring-ioctl-back hlctl set eth0 ring rx 256 tx 256 --json
wait_carrier eth0
section ring-ioctl-back-e ethtool -g eth0
section pause-ioctl hlctl set eth0 pause autoneg off rx off tx off --json
wait_carrier eth0
section pause-ioctl-e ethtool -a eth0
section pause-ioctl-back hlctl set eth0 pause autoneg on rx on tx on --json
wait_carrier eth0
section pause-ioctl-back-e ethtool -a eth0
section coal-ioctl hlctl set eth0 coalesce rx-usecs 50 --json
section coal-ioctl-e ethtool -c eth0
section feat-ioctl hlctl set eth0 feature gro off --json
section feat-ioctl-e ethtool -k eth0
section feat-ioctl-back hlctl set eth0 feature gro on --json
section link-ioctl hlctl set eth0 link speed 100 duplex full autoneg off --json
wait_carrier eth0
section link-ioctl-e ethtool eth0
section link-ioctl-back hlctl set eth0 link autoneg on --json
wait_carrier eth0 20
section link-ioctl-back-e ethtool eth0
unset HLCTL_ETHTOOL_IOCTL

section ring-up hlctl set eth0 ring rx 4096 tx 4096 --json
wait_carrier eth0
section ring-up-e ethtool -g eth0
section ring-up-show hlctl show eth0 --json
section ring-down hlctl set eth0 ring rx 256 tx 256 --json
wait_carrier eth0
section ring-down-e ethtool -g eth0

section pause-kept hlctl set eth0 pause rx off tx off
wait_carrier eth0
section pause-kept-json hlctl set eth0 pause rx off tx off --json
wait_carrier eth0
section pause-kept-e ethtool -a eth0
section pause-off hlctl set eth0 pause autoneg off rx off tx off --json
wait_carrier eth0
section pause-off-e ethtool -a eth0
section pause-on hlctl set eth0 pause rx on tx on --json
wait_carrier eth0
section pause-on-e ethtool -a eth0

section link-100 hlctl set eth0 link speed 100 duplex full autoneg off --json
wait_carrier eth0
section link-100-e ethtool eth0
section link-100-show hlctl show eth0 --json
section link-auto hlctl set eth0 link autoneg on --json
wait_carrier eth0 20
section link-auto-e ethtool eth0

section mtu hlctl set eth0 mtu 9000 --json
section mtu-ip ip -j link show eth0

section feat hlctl set eth0 feature gro off tso off --json
section feat-e ethtool -k eth0

section coal hlctl set eth0 coalesce rx-usecs 100 --json
section coal-e ethtool -c eth0

section overmax hlctl set eth0 ring rx 8192
section overmax-e ethtool -g eth0
"#;
    // The refusals run last: the multi-queue checks read the virtio NIC as
    // it booted, and each refusal compares its own before and after.
    let refusals = refusal::script();
    // The virtio NIC's multi-queue tap lives in a namespace of this test
    // (qemu runs there); the e1000e stays on its isolated hub.
    common::require_root("a multi-queue tap in a network namespace");
    let ns = NetNs::new();
    add_tap_multi_queue(&ns, "mq0", &format!("{}/24", tune_channels::PEER));
    // The tune's peer, on the tap's host side (stopped by pid when dropped).
    let _peer = iperf3_server_in(&ns, tune_channels::PORT);
    let out = Vm::builder()
        .binary("/usr/sbin/ethtool")
        .iproute2()
        .binary(env!("CARGO_BIN_EXE_hlctl"))
        .binary("/usr/bin/iperf3")
        .file(common::vm::failnic(), "/lib/failnic.ko")
        .nic_e1000e()
        .module("virtio_pci")
        .module("virtio_net")
        .nic_opts(
            "virtio-net-pci",
            NicBackend::Tap("mq0".into()),
            "queues=2",
            "mq=on,vectors=6",
        )
        .netns(&ns)
        .cpus(2)
        .script(NAME_NICS)
        .script(script)
        .script(VIRTIO_MQ)
        .script(&refusals)
        .script(&tune_channels::script())
        .script("true")
        .timeout(540)
        .run();
    let shown: Vec<&str> = [virtio_mq::SHOWN, tune_channels::SHOWN].concat();
    out.report_and_assert_success(&shown);
    let drivers = ok(&out, "nic-drivers");
    assert_eq!(
        drivers.lines().collect::<Vec<_>>(),
        ["eth0 e1000e", "eth1 virtio_net"],
        "{drivers}"
    );
    virtio_mq::check(&out);
    e1000e_single_queue(&out);

    // show agrees with ethtool and ip.
    let s = iface(&out, "show");
    let drv = ok(&out, "e-i");
    assert_eq!(s["driver"].as_str(), field(&drv, "driver:"), "{drv}");
    assert_eq!(s["driver_version"].as_str(), field(&drv, "version:"));
    assert_eq!(s["bus_info"].as_str(), field(&drv, "bus-info:"));
    let (rx_max, tx_max, rx, tx) = ethtool_rings(&ok(&out, "e-g"));
    let r = &s["rings"];
    assert_eq!(
        (
            r["rx_max"].as_u64(),
            r["tx_max"].as_u64(),
            r["rx"].as_u64(),
            r["tx"].as_u64()
        ),
        (Some(rx_max), Some(tx_max), Some(rx), Some(tx))
    );
    assert_eq!((rx_max, rx), (4096, 256));
    let pause = ok(&out, "e-a");
    assert_eq!(
        Some(onoff(&s["pause"]["autoneg"])),
        field(&pause, "Autonegotiate:")
    );
    assert_eq!(Some(onoff(&s["pause"]["rx"])), field(&pause, "RX:"));
    assert_eq!(Some(onoff(&s["pause"]["tx"])), field(&pause, "TX:"));
    let k = common::ethtool::parse_k(&ok(&out, "e-k"));
    for (name, (on, fixed, _)) in &k {
        let f = &s["features"][name];
        assert!(!f.is_null(), "feature {name} missing from hlctl show");
        assert_eq!(f["active"].as_bool(), Some(*on), "feature {name}");
        assert_eq!(f["fixed"].as_bool(), Some(*fixed), "feature {name} fixed");
    }
    assert_eq!(k.len(), s["features"].as_object().unwrap().len());
    let c = ok(&out, "e-c");
    assert_eq!(
        s["coalesce"]["rx_usecs"]
            .as_u64()
            .map(|v| v.to_string())
            .as_deref(),
        field(&c, "rx-usecs:"),
        "{c}"
    );
    let link = ok(&out, "e-link");
    assert_eq!(
        s["link"]["speed_mbps"]
            .as_u64()
            .map(|v| format!("{v}Mb/s"))
            .as_deref(),
        field(&link, "Speed:")
    );
    assert_eq!(
        s["link"]["duplex"].as_str(),
        field(&link, "Duplex:").map(|d| if d == "Full" { "full" } else { "half" })
    );
    assert_eq!(
        Some(onoff(&s["link"]["autoneg"])),
        field(&link, "Auto-negotiation:")
    );
    assert_eq!(
        s["link"]["detected"].as_bool(),
        Some(field(&link, "Link detected:") == Some("yes"))
    );
    for m in s["link"]["supported_modes"].as_array().unwrap() {
        assert!(
            link.contains(m.as_str().unwrap()),
            "mode {m} not in ethtool:\n{link}"
        );
    }
    assert!(
        s["link"]["supported_modes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m == "1000baseT/Full")
    );
    let stats = ok(&out, "e-S");
    let n_stats = stats.lines().skip(1).filter(|l| l.contains(':')).count();
    assert_eq!(
        s["driver_stats"].as_object().unwrap().len(),
        n_stats,
        "{stats}"
    );
    let ip = out.json("ip");
    assert_eq!(s["mtu"], ip[0]["mtu"]);
    assert_eq!(s["mtu_max"], ip[0]["max_mtu"]);
    assert_eq!(s["mac"], ip[0]["address"]);
    assert!(ok(&out, "show-text").contains("! rx ring 256 is below its maximum 4096"));

    // The SIOCETHTOOL fallback (forced as on kernels before 5.6) shows what
    // netlink shows, and its ring changes reach the driver.
    let io = iface(&out, "show-ioctl");
    for key in ["rings", "pause", "coalesce", "link", "features", "channels"] {
        assert_eq!(io[key], s[key], "{key} via ioctl vs netlink");
    }
    assert_eq!(io["link"]["speed_mbps"], 1000, "{}", io["link"]);
    let r = out.json("ring-ioctl");
    assert!(r["failure"].is_null(), "{r}");
    assert_eq!(
        ethtool_rings(&ok(&out, "ring-ioctl-e")),
        (4096, 4096, 1024, 512)
    );
    assert!(out.json("ring-ioctl-back")["failure"].is_null());
    assert_eq!(
        ethtool_rings(&ok(&out, "ring-ioctl-back-e")),
        (4096, 4096, 256, 256)
    );
    // Pause, coalescing, a feature and the link through the ioctl, each
    // read back by ethtool and put back.
    assert!(
        out.json("pause-ioctl")["failure"].is_null(),
        "{}",
        out.json("pause-ioctl")
    );
    let p = ok(&out, "pause-ioctl-e");
    let pause_of = |p: &str| {
        (
            field(p, "Autonegotiate:").map(str::to_string),
            field(p, "RX:").map(str::to_string),
            field(p, "TX:").map(str::to_string),
        )
    };
    let off = Some("off".to_string());
    assert_eq!(pause_of(&p), (off.clone(), off.clone(), off), "{p}");
    assert!(out.json("pause-ioctl-back")["failure"].is_null());
    let p = ok(&out, "pause-ioctl-back-e");
    let on = Some("on".to_string());
    assert_eq!(pause_of(&p), (on.clone(), on.clone(), on), "{p}");
    assert!(
        out.json("coal-ioctl")["failure"].is_null(),
        "{}",
        out.json("coal-ioctl")
    );
    assert_eq!(field(&ok(&out, "coal-ioctl-e"), "rx-usecs:"), Some("50"));
    assert!(
        out.json("feat-ioctl")["failure"].is_null(),
        "{}",
        out.json("feat-ioctl")
    );
    assert!(!common::ethtool::parse_k(&ok(&out, "feat-ioctl-e"))["rx-gro"].0);
    assert!(out.json("feat-ioctl-back")["failure"].is_null());
    assert!(
        out.json("link-ioctl")["failure"].is_null(),
        "{}",
        out.json("link-ioctl")
    );
    let l = ok(&out, "link-ioctl-e");
    assert_eq!(
        (
            field(&l, "Speed:"),
            field(&l, "Duplex:"),
            field(&l, "Auto-negotiation:")
        ),
        (Some("100Mb/s"), Some("Full"), Some("off")),
        "{l}"
    );
    assert!(
        out.json("link-ioctl-back")["failure"].is_null(),
        "{}",
        out.json("link-ioctl-back")
    );
    let l = ok(&out, "link-ioctl-back-e");
    assert_eq!(
        (field(&l, "Speed:"), field(&l, "Auto-negotiation:")),
        (Some("1000Mb/s"), Some("on")),
        "{l}"
    );

    // rings 256 → 4096 → 256.
    assert!(out.json("ring-up")["failure"].is_null());
    assert_eq!(
        ethtool_rings(&ok(&out, "ring-up-e")),
        (4096, 4096, 4096, 4096)
    );
    let r = &out.json("ring-up-show")["interfaces"][0]["rings"];
    assert_eq!(
        (r["rx"].as_u64(), r["tx"].as_u64()),
        (Some(4096), Some(4096))
    );
    let down = out.json("ring-down");
    assert!(
        down["settings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["status"] == "changed"),
        "{down}"
    );
    assert_eq!(
        ethtool_rings(&ok(&out, "ring-down-e")),
        (4096, 4096, 256, 256)
    );

    // Pause autoneg on: the driver keeps rx/tx on. Nothing changed, and the
    // rows say why (text and JSON alike).
    let kept = ok(&out, "pause-kept");
    assert_eq!(
        kept.lines().next(),
        Some("eth0: nothing changed (2 ADJUSTED by the driver)"),
        "{kept}"
    );
    let why = "pause autoneg is on: the negotiation decides; add `autoneg off` to force";
    for setting in ["pause rx", "pause tx"] {
        assert!(
            kept.lines()
                .any(|l| l.trim_start().starts_with(setting) && l.ends_with(&format!("({why})"))),
            "{kept}"
        );
    }
    let j = out.json("pause-kept-json");
    assert!(j["failure"].is_null(), "{j}");
    assert_eq!(j["summary"]["changed"], 0, "{j}");
    assert_eq!(
        j["summary"]["statuses"],
        serde_json::json!({"adjusted": 2}),
        "{j}"
    );
    for row in j["settings"].as_array().unwrap() {
        assert_eq!(
            (row["before"].as_str(), row["after"].as_str()),
            (Some("on"), Some("on")),
            "{j}"
        );
        assert_eq!(row["reason"].as_str(), Some(why), "{j}");
    }
    let p = ok(&out, "pause-kept-e");
    assert_eq!(
        (
            field(&p, "Autonegotiate:"),
            field(&p, "RX:"),
            field(&p, "TX:")
        ),
        (Some("on"), Some("on"), Some("on")),
        "{p}"
    );

    // pause off → on.
    assert!(
        out.json("pause-off")["failure"].is_null(),
        "{}",
        out.json("pause-off")
    );
    let p = ok(&out, "pause-off-e");
    assert_eq!(
        (field(&p, "RX:"), field(&p, "TX:")),
        (Some("off"), Some("off")),
        "{p}"
    );
    assert!(out.json("pause-on")["failure"].is_null());
    let p = ok(&out, "pause-on-e");
    assert_eq!(
        (field(&p, "RX:"), field(&p, "TX:")),
        (Some("on"), Some("on")),
        "{p}"
    );

    // link forced to 100 full, then autoneg back on.
    assert!(
        out.json("link-100")["failure"].is_null(),
        "{}",
        out.json("link-100")
    );
    let l = ok(&out, "link-100-e");
    assert_eq!(
        (
            field(&l, "Speed:"),
            field(&l, "Duplex:"),
            field(&l, "Auto-negotiation:")
        ),
        (Some("100Mb/s"), Some("Full"), Some("off")),
        "{l}"
    );
    let ls = &out.json("link-100-show")["interfaces"][0]["link"];
    assert_eq!(
        (ls["speed_mbps"].as_u64(), ls["autoneg"].as_bool()),
        (Some(100), Some(false))
    );
    assert!(out.json("link-auto")["failure"].is_null());
    let l = ok(&out, "link-auto-e");
    assert_eq!(field(&l, "Auto-negotiation:"), Some("on"), "{l}");

    // MTU 9000.
    assert!(out.json("mtu")["failure"].is_null());
    assert_eq!(out.json("mtu-ip")[0]["mtu"], 9000);

    // A feature toggle.
    let f = out.json("feat");
    assert!(f["failure"].is_null(), "{f}");
    let k = common::ethtool::parse_k(&ok(&out, "feat-e"));
    assert_eq!(
        (k["rx-gro"].0, k["tx-tcp-segmentation"].0),
        (false, false),
        "{k:?}"
    );

    // Coalescing rx-usecs.
    assert!(
        out.json("coal")["failure"].is_null(),
        "{}",
        out.json("coal")
    );
    assert_eq!(field(&ok(&out, "coal-e"), "rx-usecs:"), Some("100"));

    // Over-max ring: exit 2, message, nothing changed.
    let o = out.section("overmax");
    assert_eq!(o.rc, 2, "{}", o.text);
    let err = out
        .try_section("overmax.stderr")
        .map(|s| s.text)
        .unwrap_or_default();
    assert!(
        err.contains("above the device's maximum: allowed 1 to 4096"),
        "{err}"
    );
    assert_eq!(
        ethtool_rings(&ok(&out, "overmax-e")),
        (4096, 4096, 256, 256)
    );

    refusal::assert_all(&out);
    tune_channels::check(&out);
}

/// `iperf3 -s -p PORT` inside `ns`, killed and reaped when dropped.
fn iperf3_server_in(ns: &NetNs, port: u16) -> common::ChildGuard {
    let mut cmd = std::process::Command::new("ip");
    cmd.args([
        "netns",
        "exec",
        &ns.name,
        "iperf3",
        "-s",
        "-p",
        &port.to_string(),
    ])
    // Quiet: hlctl's port probes connect and close without a test.
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null());
    let child = common::die_with_test(&mut cmd)
        .spawn()
        .expect("start iperf3 -s");
    common::ChildGuard(child)
}
