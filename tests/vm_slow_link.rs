//! The slow-link story on a real e1000e driver (qemu, TCG), in one boot:
//!
//! 1. forced `speed 100 duplex full autoneg off`: doctor finds the link at
//!    100 Mb/s while the NIC supports 1000 Mb/s and gives the renegotiate
//!    fix; with the path shaped to 100 Mbit/s (tbf on the host's tap for the
//!    guest's download, in the guest for its upload — the emulated NIC itself
//!    does not slow down) the measurement is tied to it ("measured … = the
//!    100 Mb/s link is the limit"). `hlctl tune --peer` (an `iperf3 -s` in the
//!    host-side namespace) renegotiates first: the link reports 1000 Mb/s
//!    full, the candidate is KEPT on the link's evidence and persisted;
//!    `hlctl rollback` returns it to forced 100;
//! 2. forced `speed 10 duplex half autoneg off`: the half-duplex finding is
//!    critical, and one tune candidate fixes speed and duplex;
//! 3. a virtio_net NIC (qemu told to report 100 Mb/s; it moves far more):
//!    no "is the limit" from its nominal speed, in text and JSON.
//!
//! The guest has no D-Bus: tune runs in-process (same journal and checks).

mod common;

use common::NetNs;
use common::lab::iperf3_server_in;
use common::report::{evidence, the_finding};
use common::vm::{NicBackend, Vm, VmOutput, add_tap};
use serde_json::Value;

const E_HOST: &str = "10.214.0.1";
const V_HOST: &str = "10.214.1.1";

/// The guest script; `PORT` is the host-side iperf3 server's port.
const SCRIPT: &str = r#"
drv() { basename "$(readlink /sys/class/net/$1/device/driver)"; }
for n in eth0 eth1; do
  case "$(drv $n)" in e1000e) E=$n;; virtio_net) V=$n;; esac
done
[ -n "$E" ] && [ -n "$V" ] || { echo "NICs: eth0 $(drv eth0), eth1 $(drv eth1)"; exit 1; }
ip addr add 10.214.0.2/24 dev $E
ip addr add 10.214.1.2/24 dev $V
ip link set $E up
ip link set $V up
settle() {
  wait_carrier $1 15
  i=0
  while ! ping -c 1 -W 1 $2 >/dev/null && [ $i -lt 10 ]; do i=$((i + 1)); done
}
# The guest's upload over the e1000e shaped like a 100 Mb/s wire (the
# guest kernel ticks at 250 Hz: the bucket holds more than one tick's bytes).
tc qdisc add dev $E root tbf rate 100mbit burst 128kb latency 50ms
H="hlctl --state-dir /tmp/s1 --sysctl-dir /tmp/d1"
P=10.214.0.1:PORT

ethtool -s $E speed 100 duplex full autoneg off
settle $E 10.214.0.1
section f100-ethtool ethtool $E
section f100-doctor $H doctor $E --peer $P --stress 0 --time 2
section f100-doctor-json $H doctor $E --peer $P --stress 0 --time 2 --json
section f100-tune $H tune $E --peer $P --yes --runs 3 --time 2 --no-mtu --min-gain 30
section f100-tune-json $H history --kind tune --limit 1 --json
settle $E 10.214.0.1
section f100-after ethtool $E
section f100-state cat /tmp/s1/nic-settings.json
section rollback $H rollback $E --json
settle $E 10.214.0.1
section rolled-back ethtool $E

ethtool -s $E speed 10 duplex half autoneg off
settle $E 10.214.0.1
H2="hlctl --state-dir /tmp/s2 --sysctl-dir /tmp/d2"
section h10-ethtool ethtool $E
section h10-doctor-json $H2 doctor $E --stress 0 --json
section h10-tune-json $H2 tune $E --peer $P --yes --runs 3 --time 2 --no-mtu --min-gain 30 --json
settle $E 10.214.0.1
section h10-after ethtool $E

settle $V 10.214.1.1
section v-show hlctl show $V --json
section v-doctor hlctl --state-dir /tmp/s3 doctor $V --peer 10.214.1.1:PORT --stress 0 --time 2
section v-doctor-json hlctl --state-dir /tmp/s3 doctor $V --peer 10.214.1.1:PORT --stress 0 --time 2 --json
section v-tune-json hlctl --state-dir /tmp/s3 --sysctl-dir /tmp/d3 tune $V --peer 10.214.1.1:PORT --dry-run --runs 1 --time 2 --json
"#;

fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(key))
        .map(str::trim)
}

/// `ethtool IFACE` speed, duplex, autoneg.
fn link(out: &VmOutput, name: &str) -> (String, String, String) {
    let s = out.section(name);
    assert_eq!(s.rc, 0, "{name}: {}", s.text);
    let f = |k| field(&s.text, k).unwrap_or("?").to_string();
    (f("Speed:"), f("Duplex:"), f("Auto-negotiation:"))
}

fn text(out: &VmOutput, name: &str) -> String {
    let s = out.section(name);
    assert_eq!(
        s.rc,
        0,
        "{name} failed:\n{}\n{}",
        s.text,
        out.try_section(&format!("{name}.stderr"))
            .map(|e| e.text)
            .unwrap_or_default()
    );
    s.text
}

const RENEGOTIATE: &str = "link autoneg on advertise 10baseT/Half 10baseT/Full 100baseT/Half 100baseT/Full 1000baseT/Full";

#[test]
fn slow_link_found_renegotiated_rolled_back_and_nominal_speeds_never_blamed() {
    common::require_root("taps in a network namespace");
    let ns = NetNs::new();
    add_tap(&ns, "tap0", &format!("{E_HOST}/24"));
    add_tap(&ns, "tap1", &format!("{V_HOST}/24"));
    // The guest's download over the e1000e: 100 Mbit/s like the forced wire.
    ns.exec(&[
        "tc", "qdisc", "add", "dev", "tap0", "root", "tbf", "rate", "100mbit", "burst", "32kbit",
        "latency", "50ms",
    ]);
    let srv = iperf3_server_in(&ns, &ns, E_HOST);
    let out = Vm::builder()
        .binary(env!("CARGO_BIN_EXE_hlctl"))
        .binary("/usr/sbin/ethtool")
        .iproute2()
        .module("sch_tbf")
        .nic_e1000e_tap(&ns, "tap0")
        .module("virtio_pci")
        .module("virtio_net")
        .nic(
            "virtio-net-pci,speed=100,duplex=full",
            NicBackend::Tap("tap1".into()),
        )
        .memory_mb(768)
        .script(&SCRIPT.replace("PORT", &srv.port.to_string()))
        .timeout(900)
        .run();
    out.report_and_assert_success(&["f100-doctor", "f100-tune", "rollback", "v-doctor"]);

    // 1. Forced 100: the finding names 100 and 1000 Mb/s and the fix.
    assert_eq!(
        link(&out, "f100-ethtool"),
        ("100Mb/s".into(), "Full".into(), "off".into())
    );
    let doctor = text(&out, "f100-doctor");
    assert!(
        doctor.contains("link at 100 Mbit/s, this NIC supports 1 Gbit/s"),
        "{doctor}"
    );
    assert!(doctor.contains(RENEGOTIATE), "{doctor}");
    let r: Value = serde_json::from_str(&text(&out, "f100-doctor-json")).unwrap();
    let f = the_finding(&r, "link-below-supported");
    assert_eq!(f["severity"], "warning", "{f}");
    assert!(f["title"].as_str().unwrap().contains("1 Gbit/s"), "{f}");
    assert!(f["fix"][0].as_str().unwrap().ends_with(RENEGOTIATE), "{f}");
    assert!(
        f["why"].as_str().unwrap().contains("forced to 100 Mbit/s"),
        "{f}"
    );
    assert_eq!(evidence(f, "autoneg"), "off");
    // Tied to the measurement over the 100 Mbit/s path: both directions are
    // in the finding's evidence, judged against a physical 100 Mb/s; on this
    // shared machine a direction may dip below 70 % of the rate (then the
    // queue under load names the shaper instead), not both.
    let mut at_link_rate = 0;
    for dir in ["upload", "download"] {
        let m = evidence(f, &format!("measured {dir}"));
        let l = r["limits"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["direction"] == dir)
            .unwrap();
        assert_eq!(l["link_speed"]["kind"], "physical", "{l}");
        assert_eq!(l["link_speed"]["mbps"], 100, "{l}");
        assert_eq!(l["text"].as_str().unwrap(), m, "{l}");
        if l["limit"]["kind"] == "link_rate" {
            assert!(m.contains("= the 100 Mbit/s link is the limit"), "{m}");
            at_link_rate += 1;
        } else {
            assert_eq!(l["limit"]["kind"], "bottleneck", "{l}");
        }
    }
    assert!(at_link_rate >= 1, "{}", r["limits"]);

    // Tune renegotiates first; 1000 full; kept on the link's evidence; persisted.
    let tune = text(&out, "f100-tune");
    let h: Value = serde_json::from_str(&text(&out, "f100-tune-json")).unwrap();
    let t = &h["results"][0]["result"];
    assert_eq!(t["plan"][0]["id"], "link-renegotiate", "{}", t["plan"]);
    let step = &t["steps"][0];
    assert_eq!(step["status"], "kept", "{step}");
    let reason = step["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("decided by the link") && reason.contains("1 Gbit/s full duplex"),
        "{reason}"
    );
    assert!(tune.contains("KEPT"), "{tune}");
    // The final limits are judged against the renegotiated link.
    for l in t["limits"].as_array().unwrap() {
        assert_eq!(l["link_speed"]["mbps"], 1000, "{l}");
    }
    assert_eq!(
        link(&out, "f100-after"),
        ("1000Mb/s".into(), "Full".into(), "on".into())
    );
    let state = text(&out, "f100-state");
    assert!(
        state.contains("1000baseT/Full") && state.contains("autoneg"),
        "{state}"
    );
    assert!(
        t["persisted"]["nic_state_file"].is_string(),
        "{}",
        t["persisted"]
    );
    // Rollback: forced 100 again.
    let rb: Value = serde_json::from_str(&text(&out, "rollback")).unwrap();
    assert_eq!(rb["undone"][0]["interface"], out_iface(&out), "{rb}");
    assert_eq!(
        link(&out, "rolled-back"),
        ("100Mb/s".into(), "Full".into(), "off".into())
    );

    // 2. 10 half: critical half-duplex finding; one candidate fixes both.
    assert_eq!(
        link(&out, "h10-ethtool"),
        ("10Mb/s".into(), "Half".into(), "off".into())
    );
    let r: Value = serde_json::from_str(&text(&out, "h10-doctor-json")).unwrap();
    let f = the_finding(&r, "link-half-duplex");
    assert_eq!(f["severity"], "critical", "{f}");
    assert!(f["fix"][0].as_str().unwrap().ends_with(RENEGOTIATE), "{f}");
    let slow = the_finding(&r, "link-below-supported");
    assert!(
        slow["title"]
            .as_str()
            .unwrap()
            .contains("link at 10 Mbit/s")
    );
    let t: Value = serde_json::from_str(&text(&out, "h10-tune-json")).unwrap();
    let step = &t["steps"][0];
    assert_eq!(step["candidate"], "link-renegotiate", "{step}");
    assert_eq!(step["status"], "kept", "{step}");
    assert!(
        step["reason"]
            .as_str()
            .unwrap()
            .contains("was 10 Mbit/s half duplex"),
        "{step}"
    );
    assert_eq!(
        link(&out, "h10-after"),
        ("1000Mb/s".into(), "Full".into(), "on".into())
    );

    // 3. virtio_net: its 100 Mb/s is nominal, never the limit.
    let show: Value = serde_json::from_str(&text(&out, "v-show")).unwrap();
    let v = &show["interfaces"][0];
    assert_eq!(
        (&v["driver"], &v["link"]["speed_mbps"]),
        (&"virtio_net".into(), &100.into()),
        "{v}"
    );
    let doctor = text(&out, "v-doctor");
    assert!(!doctor.contains("is the limit"), "{doctor}");
    assert!(doctor.contains("nominal"), "{doctor}");
    for name in ["v-doctor-json", "v-tune-json"] {
        let r: Value = serde_json::from_str(&text(&out, name)).unwrap();
        let limits = r["limits"].as_array().unwrap();
        assert_eq!(limits.len(), 2, "{name}: {limits:?}");
        for l in limits {
            assert_ne!(l["limit"]["kind"], "link_rate", "{name}: {l}");
            assert_eq!(l["link_speed"]["kind"], "nominal", "{name}: {l}");
            assert!(
                !l["text"].as_str().unwrap().contains("is the limit"),
                "{name}: {l}"
            );
        }
    }
}

/// The e1000e's name in the guest, from the first doctor report.
fn out_iface(out: &VmOutput) -> Value {
    let r: Value = serde_json::from_str(&out.section("f100-doctor-json").text).unwrap();
    r["interfaces"][0].clone()
}
