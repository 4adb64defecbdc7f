//! Our netlink layer and SIOCETHTOOL against the real kernel, cross-checked
//! with `ip` and `ethtool`, on veth pairs and taps inside throw-away network
//! namespaces (root only; CI runs as root).

mod common;

use std::collections::BTreeMap;
use std::net::UdpSocket;

use common::{NetNs, require_root, unique};
use hlctl::nic::ioctl;
use hlctl::nic::model::{ChannelsSet, CoalesceSet, Duplex, LinkSet, PauseSet, RingsSet};
use hlctl::nic::netlink::{Netlink, RtLink};
use serde_json::Value;

fn text(out: std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `ip -j -d -s link show [dev]` inside the namespace.
fn ip_links(ns: &NetNs, dev: Option<&str>) -> Vec<Value> {
    let mut args = vec!["-j", "-d", "-s", "link", "show"];
    if let Some(d) = dev {
        args.extend(["dev", d]);
    }
    let out = text(ns.ip(&args));
    serde_json::from_str::<Vec<Value>>(&out).expect("ip -j output")
}

fn num(v: &Value, path: &[&str]) -> u64 {
    let mut cur = v;
    for p in path {
        cur = &cur[*p];
    }
    cur.as_u64()
        .unwrap_or_else(|| panic!("{path:?} missing in {v}"))
}

/// `ethtool ARGS` inside the namespace.
fn ethtool(ns: &NetNs, args: &[&str]) -> String {
    let mut v = vec!["ethtool"];
    v.extend_from_slice(args);
    text(ns.exec(&v))
}

/// `Key: value` lines of ethtool output (first occurrence wins).
fn ethtool_fields(out: &str) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for line in out.lines() {
        if let Some((k, v)) = line.split_once(':') {
            m.entry(k.trim().to_string())
                .or_insert_with(|| v.trim().to_string());
        }
    }
    m
}

/// Two namespaces joined by a veth pair with IPv4 addresses and IPv6 off
/// (so no background neighbour discovery moves the counters).
struct Pair {
    a: NetNs,
    b: NetNs,
    va: String,
    vb: String,
}

fn pair() -> Pair {
    let (a, b) = (NetNs::new(), NetNs::new());
    let (va, vb) = (unique("va"), unique("vb"));
    for ns in [&a, &b] {
        for key in ["all", "default"] {
            ns.exec(&[
                "sysctl",
                "-qw",
                &format!("net.ipv6.conf.{key}.disable_ipv6=1"),
            ]);
        }
    }
    a.ip(&[
        "link", "add", &va, "type", "veth", "peer", "name", &vb, "netns", &b.name,
    ]);
    a.ip(&["addr", "add", "10.77.0.1/24", "dev", &va]);
    b.ip(&["addr", "add", "10.77.0.2/24", "dev", &vb]);
    a.ip(&["link", "set", &va, "up"]);
    b.ip(&["link", "set", &vb, "up"]);
    Pair { a, b, va, vb }
}

/// A namespace with one veth pair `v`–`p`, both up.
fn one_veth() -> (NetNs, String, String) {
    let ns = NetNs::new();
    let (v, p) = (unique("ve"), unique("vp"));
    ns.veth(&v, &p);
    (ns, v, p)
}

fn check_link_matches_ip(ours: &RtLink, ip: &Value) {
    let name = &ours.name;
    assert_eq!(
        u64::from(ours.ifindex),
        num(ip, &["ifindex"]),
        "{name} ifindex"
    );
    assert_eq!(ip["ifname"].as_str(), Some(name.as_str()));
    assert_eq!(ours.mac.as_deref(), ip["address"].as_str(), "{name} mac");
    assert_eq!(u64::from(ours.mtu), num(ip, &["mtu"]), "{name} mtu");
    assert_eq!(
        ours.mtu_min.map(u64::from),
        ip["min_mtu"].as_u64(),
        "{name} min_mtu"
    );
    assert_eq!(
        ours.mtu_max.map(u64::from),
        ip["max_mtu"].as_u64(),
        "{name} max_mtu"
    );
    assert_eq!(
        u64::from(ours.txqueuelen),
        ip["txqlen"].as_u64().unwrap_or(0),
        "{name} txqlen"
    );
    assert_eq!(
        ours.kind.as_deref(),
        ip["linkinfo"]["info_kind"].as_str(),
        "{name} kind"
    );
    assert_eq!(
        ours.oper_state,
        ip["operstate"].as_str().unwrap().to_lowercase(),
        "{name} operstate"
    );
    let flags: Vec<&str> = ip["flags"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f.as_str())
        .collect();
    assert_eq!(ours.admin_up, flags.contains(&"UP"), "{name} admin up");
    assert!(
        !ours.physical,
        "{name}: virtual devices have no parent device"
    );
}

/// Counters only grow: `before <= ours <= after` for every counter ip shows.
fn check_counters_between(ours: &RtLink, before: &Value, after: &Value) {
    let name = &ours.name;
    let c = &ours.counters;
    for (ours, dir, key) in [
        (c.rx_bytes, "rx", "bytes"),
        (c.rx_packets, "rx", "packets"),
        (c.rx_errors, "rx", "errors"),
        (c.rx_dropped, "rx", "dropped"),
        (c.rx_over_errors, "rx", "over_errors"),
        (c.tx_bytes, "tx", "bytes"),
        (c.tx_packets, "tx", "packets"),
        (c.tx_errors, "tx", "errors"),
        (c.tx_dropped, "tx", "dropped"),
        (c.tx_carrier_errors, "tx", "carrier_errors"),
        (c.collisions, "tx", "collisions"),
    ] {
        let (lo, hi) = (
            num(before, &["stats64", dir, key]),
            num(after, &["stats64", dir, key]),
        );
        assert!(
            lo <= ours && ours <= hi,
            "{name} {dir} {key}: ip {lo}..{hi}, ours {ours}"
        );
    }
}

#[test]
fn links_and_counters_agree_with_ip() {
    require_root("creating network namespaces");
    let p = pair();
    let va = p.va.clone();
    // Traffic across the pair: 20 datagrams from a to b (b answers with ICMP unreachable).
    let sent = p.a.run_in(|| {
        let s = UdpSocket::bind("10.77.0.1:0").unwrap();
        for i in 0..20u8 {
            s.send_to(&[i; 100], "10.77.0.2:9").unwrap();
        }
        20u64
    });
    // Wait (up to 5 s) until ARP resolved and the queued datagrams left.
    let va2 = va.clone();
    p.a.run_in(move || {
        let mut nl = Netlink::new().unwrap();
        for _ in 0..100 {
            if nl.link(&va2).unwrap().counters.tx_packets > sent {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the datagrams never left {va2}");
    });
    let before = ip_links(&p.a, None);
    let ours = p.a.run_in(|| Netlink::new().unwrap().links().unwrap());
    let after = ip_links(&p.a, None);

    assert_eq!(ours.len(), before.len(), "same number of links as ip");
    assert!(
        ours.windows(2).all(|w| w[0].ifindex < w[1].ifindex),
        "ifindex order"
    );
    for (l, (b, a)) in ours.iter().zip(before.iter().zip(&after)) {
        check_link_matches_ip(l, b);
        check_counters_between(l, b, a);
    }
    let v = ours
        .iter()
        .find(|l| l.name == va)
        .expect("our veth is listed");
    assert_eq!(v.kind.as_deref(), Some("veth"));
    assert!(
        v.counters.tx_packets >= sent,
        "tx_packets {} after {sent} datagrams",
        v.counters.tx_packets
    );
    assert!(
        v.counters.tx_bytes >= sent * 128,
        "tx_bytes {}",
        v.counters.tx_bytes
    );
    assert!(v.counters.rx_packets >= 1, "ARP reply / ICMP came back");
    let lo = ours.iter().find(|l| l.name == "lo").expect("lo");
    assert_eq!(lo.kind, None);
    assert_eq!(lo.mac.as_deref(), Some("00:00:00:00:00:00"));

    // The same by name, and carrier changes as sysfs counts them.
    let vb = p.vb.clone();
    let one =
        p.b.run_in(move || Netlink::new().unwrap().link(&vb).unwrap());
    check_link_matches_ip(&one, &ip_links(&p.b, Some(&p.vb))[0]);
    let sysfs = text(p.b.exec(&["cat", &format!("/sys/class/net/{}/carrier_changes", p.vb)]));
    assert_eq!(one.carrier_changes, Some(sysfs.trim().parse().unwrap()));
    assert_eq!(one.oper_state, "up");
}

#[test]
fn dump_spanning_several_datagrams() {
    require_root("creating network namespaces");
    let ns = NetNs::new();
    // 30 veth pairs = 61 links with stats: far more than one netlink datagram.
    let batch: String = (0..30)
        .map(|i| format!("link add m{i}a type veth peer name m{i}b\n"))
        .collect();
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), batch).unwrap();
    ns.ip(&["-batch", file.path().to_str().unwrap()]);
    let ours = ns.run_in(|| Netlink::new().unwrap().links().unwrap());
    let ip = ip_links(&ns, None);
    assert_eq!(ours.len(), 61);
    assert_eq!(ours.len(), ip.len());
    for (l, i) in ours.iter().zip(&ip) {
        check_link_matches_ip(l, i);
    }
}

/// `ethtool -k` as kernel name → (on, fixed, requested-suffix).
fn ethtool_k(ns: &NetNs, dev: &str) -> BTreeMap<String, (bool, bool, Option<bool>)> {
    common::ethtool::parse_k(&ethtool(ns, &["-k", dev]))
}

fn check_features_match_ethtool(
    ns: &NetNs,
    dev: &str,
) -> BTreeMap<String, hlctl::nic::model::Feature> {
    let d = dev.to_string();
    let ours = ns.run_in(move || {
        Netlink::new()
            .unwrap()
            .features(&d)
            .unwrap()
            .expect("veth has features")
    });
    let theirs = ethtool_k(ns, dev);
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>(),
        "the same feature names as ethtool -k"
    );
    for (name, f) in &ours {
        let (on, fixed, requested) = theirs[name];
        assert_eq!(f.active, on, "{name} active");
        assert_eq!(f.fixed, fixed, "{name} fixed");
        if !f.fixed {
            let expect = (f.requested != f.active).then_some(f.requested);
            assert_eq!(requested, expect, "{name} requested");
        }
    }
    ours
}

#[test]
fn features_agree_with_ethtool_and_toggle() {
    require_root("creating network namespaces");
    let (ns, v, _) = one_veth();
    let before = check_features_match_ethtool(&ns, &v);
    assert!(before.len() > 30, "veth reports many features");
    assert!(before["highdma"].fixed || before["highdma"].active);

    let toggled = [
        ("tx-generic-segmentation", "generic-segmentation-offload"),
        ("rx-gro", "generic-receive-offload"),
        ("tx-tcp-segmentation", "tx-tcp-segmentation"),
        ("tx-scatter-gather", "tx-scatter-gather"),
    ];
    for on in [false, true] {
        let wanted: BTreeMap<String, bool> =
            toggled.iter().map(|(k, _)| (k.to_string(), on)).collect();
        let d = v.clone();
        ns.run_in(move || Netlink::new().unwrap().set_features(&d, &wanted).unwrap());
        let after = check_features_match_ethtool(&ns, &v);
        let k = ethtool(&ns, &["-k", &v]);
        for (kernel, shown) in toggled {
            assert_eq!(after[kernel].active, on, "{kernel} after set {on}");
            assert_eq!(after[kernel].requested, on, "{kernel} requested {on}");
            let want = format!("{shown}: {}", if on { "on" } else { "off" });
            assert!(k.contains(&want), "ethtool -k shows {want:?}:\n{k}");
        }
    }
}

fn ethtool_channels(ns: &NetNs, dev: &str) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let out = ethtool(ns, &["-l", dev]);
    let (max, cur) = out
        .split_once("Current hardware settings:")
        .expect("ethtool -l sections");
    (ethtool_fields(max), ethtool_fields(cur))
}

fn shown(v: Option<u32>) -> String {
    v.map_or("n/a".to_string(), |n| n.to_string())
}

#[test]
fn channels_agree_with_ethtool_and_set() {
    require_root("creating network namespaces");
    let (ns, v, _) = one_veth();
    for target in [2, 1] {
        let d = v.clone();
        let ch = ns.run_in(move || {
            let mut nl = Netlink::new().unwrap();
            let set = ChannelsSet {
                rx: Some(target),
                tx: Some(target),
                ..Default::default()
            };
            nl.set_channels(&d, &set).unwrap();
            nl.channels(&d).unwrap().expect("veth has channels")
        });
        assert_eq!((ch.rx, ch.tx), (Some(target), Some(target)));
        let (max, cur) = ethtool_channels(&ns, &v);
        for (ours, key) in [
            (ch.rx_max, "RX"),
            (ch.tx_max, "TX"),
            (ch.other_max, "Other"),
            (ch.combined_max, "Combined"),
        ] {
            assert_eq!(shown(ours), max[key], "max {key}");
        }
        for (ours, key) in [
            (ch.rx, "RX"),
            (ch.tx, "TX"),
            (ch.other, "Other"),
            (ch.combined, "Combined"),
        ] {
            assert_eq!(shown(ours), cur[key], "current {key}");
        }
    }
    // Above the maximum: the kernel's own message comes through.
    let d = v.clone();
    let err = ns.run_in(move || {
        let set = ChannelsSet {
            rx: Some(64),
            ..Default::default()
        };
        Netlink::new().unwrap().set_channels(&d, &set).unwrap_err()
    });
    assert_eq!(err.errno, libc::EINVAL);
    assert!(
        err.extack
            .as_deref()
            .unwrap_or("")
            .contains("exceeds maximum"),
        "{err}"
    );
    assert_eq!(err.ifname.as_deref(), Some(v.as_str()));
}

#[test]
fn mtu_and_txqueuelen_set_and_read_back() {
    require_root("creating network namespaces");
    let (ns, v, _) = one_veth();
    let d = v.clone();
    let (mtu, txq) = ns.run_in(move || {
        let mut nl = Netlink::new().unwrap();
        let idx = nl.link(&d).unwrap().ifindex;
        nl.set_mtu(idx, 9000).unwrap();
        nl.set_txqueuelen(idx, 321).unwrap();
        let l = nl.link(&d).unwrap();
        (l.mtu, l.txqueuelen)
    });
    assert_eq!((mtu, txq), (9000, 321));
    let ip = &ip_links(&ns, Some(&v))[0];
    assert_eq!((num(ip, &["mtu"]), num(ip, &["txqlen"])), (9000, 321));

    // Out of range: the kernel refuses and nothing changes.
    let d = v.clone();
    let (err, mtu) = ns.run_in(move || {
        let mut nl = Netlink::new().unwrap();
        let idx = nl.link(&d).unwrap().ifindex;
        let e = nl.set_mtu(idx, 70_000).unwrap_err();
        (e, nl.link(&d).unwrap().mtu)
    });
    assert_eq!(err.errno, libc::EINVAL, "{err}");
    assert_eq!(mtu, 9000);
}

#[test]
fn rings_pause_coalesce_not_supported_on_veth() {
    require_root("creating network namespaces");
    let (ns, v, _) = one_veth();
    let d = v.clone();
    ns.run_in(move || {
        let mut nl = Netlink::new().unwrap();
        assert_eq!(nl.rings(&d).unwrap(), None);
        assert_eq!(nl.pause(&d).unwrap(), None);
        assert_eq!(nl.coalesce(&d).unwrap(), None);
        let rings = RingsSet {
            rx: Some(512),
            ..Default::default()
        };
        let e = nl.set_rings(&d, &rings).unwrap_err();
        assert!(e.is_not_supported(), "{e}");
        assert_eq!(e.op, "RINGS_SET");
        assert!(e.to_string().contains(&d), "error names the interface: {e}");
        let pause = PauseSet {
            rx: Some(true),
            ..Default::default()
        };
        assert!(nl.set_pause(&d, &pause).unwrap_err().is_not_supported());
        let co = CoalesceSet {
            rx_usecs: Some(10),
            ..Default::default()
        };
        assert!(nl.set_coalesce(&d, &co).unwrap_err().is_not_supported());
    });
    assert!(
        ns.exec_raw(&["ethtool", "-g", &v])
            .stderr
            .ends_with(b"Operation not supported\n")
    );
}

#[test]
fn link_modes_on_veth_match_ethtool() {
    require_root("creating network namespaces");
    let p = pair();
    let va = p.va.clone();
    let m = p.a.run_in(move || {
        Netlink::new()
            .unwrap()
            .link_modes(&va)
            .unwrap()
            .expect("veth link modes")
    });
    let e = ethtool_fields(&ethtool(&p.a, &[&p.va]));
    assert_eq!(m.speed_mbps, Some(10000));
    assert_eq!(e["Speed"], format!("{}Mb/s", m.speed_mbps.unwrap()));
    assert_eq!(m.duplex, Some(Duplex::Full));
    assert_eq!(e["Duplex"], "Full");
    assert!(!m.autoneg);
    assert_eq!(e["Auto-negotiation"], "off");
    assert_eq!(m.port.as_deref(), Some("TP"));
    assert_eq!(e["Port"], "Twisted Pair");
    assert!(m.supported_modes.is_empty() && m.advertised_modes.is_empty());
    assert_eq!(e["Supported link modes"], "Not reported");
    assert_eq!(m.detected, Some(true), "both ends are up");
    assert_eq!(e["Link detected"], "yes");

    // Take the peer down: no carrier any more, seen by both.
    p.b.ip(&["link", "set", &p.vb, "down"]);
    let va = p.va.clone();
    let m =
        p.a.run_in(move || Netlink::new().unwrap().link_modes(&va).unwrap().unwrap());
    assert_eq!(m.detected, Some(false));
    assert_eq!(
        ethtool_fields(&ethtool(&p.a, &[&p.va]))["Link detected"],
        "no"
    );

    // veth's speed is fixed.
    let va = p.va.clone();
    let err = p.a.run_in(move || {
        let set = LinkSet {
            speed_mbps: Some(100),
            duplex: Some(Duplex::Full),
            autoneg: Some(false),
            ..Default::default()
        };
        Netlink::new()
            .unwrap()
            .set_link_modes(&va, &set)
            .unwrap_err()
    });
    assert!(err.is_not_supported(), "{err}");
}

#[test]
fn tap_speed_and_duplex_set_and_read_back() {
    require_root("creating network namespaces");
    let ns = NetNs::new();
    let tap = unique("tp");
    ns.exec(&["ip", "tuntap", "add", &tap, "mode", "tap"]);
    let t = tap.clone();
    let m = ns.run_in(move || {
        let mut nl = Netlink::new().unwrap();
        let set = LinkSet {
            speed_mbps: Some(1000),
            duplex: Some(Duplex::Half),
            ..Default::default()
        };
        nl.set_link_modes(&t, &set).unwrap();
        nl.link_modes(&t).unwrap().expect("tap link modes")
    });
    assert_eq!((m.speed_mbps, m.duplex), (Some(1000), Some(Duplex::Half)));
    let e = ethtool_fields(&ethtool(&ns, &[&tap]));
    assert_eq!(
        (e["Speed"].as_str(), e["Duplex"].as_str()),
        ("1000Mb/s", "Half")
    );

    // Advertised modes go by name: the kernel accepts real names, refuses unknown ones.
    let t = tap.clone();
    let bogus = ns.run_in(move || {
        let mut nl = Netlink::new().unwrap();
        let good = LinkSet {
            advertise: Some(vec!["1000baseT/Full".into(), "100baseT/Full".into()]),
            ..Default::default()
        };
        nl.set_link_modes(&t, &good).unwrap();
        let bad = LinkSet {
            advertise: Some(vec!["9000baseQ/Odd".into()]),
            ..Default::default()
        };
        nl.set_link_modes(&t, &bad).unwrap_err()
    });
    // The kernel answers EOPNOTSUPP for an unknown bit name, and says so.
    assert_eq!(bogus.errno, libc::EOPNOTSUPP, "{bogus}");
    let msg = bogus.extack.as_deref().unwrap_or("");
    assert!(msg.contains("bit name not found"), "{bogus}");
}

#[test]
fn driver_info_and_stats_agree_with_ethtool() {
    require_root("creating network namespaces");
    let (ns, v, _) = one_veth();
    let d = v.clone();
    let (info, stats, lo_info, lo_stats) = ns.run_in(move || {
        (
            ioctl::driver_info(&d).unwrap(),
            ioctl::driver_stats(&d).unwrap(),
            ioctl::driver_info("lo").unwrap(),
            ioctl::driver_stats("lo").unwrap(),
        )
    });
    let info = info.expect("veth has driver info");
    let e = ethtool_fields(&ethtool(&ns, &["-i", &v]));
    assert_eq!(info.driver, "veth");
    assert_eq!(info.driver, e["driver"]);
    assert_eq!(info.version, e["version"]);
    assert_eq!(info.firmware_version, e["firmware-version"]);
    assert_eq!(info.bus_info, e["bus-info"]);

    let stats = stats.expect("veth has statistics");
    let s = ethtool(&ns, &["-S", &v]);
    let theirs: BTreeMap<String, u64> = s
        .lines()
        .skip(1)
        .filter_map(|l| l.trim().split_once(": "))
        .map(|(k, v)| (k.to_string(), v.parse().unwrap()))
        .collect();
    assert_eq!(stats, theirs);
    assert!(stats.contains_key("peer_ifindex"));

    assert_eq!(
        lo_info, None,
        "lo has no driver info (ethtool -i: not supported)"
    );
    assert_eq!(lo_stats, None, "lo has no driver statistics");
}

#[test]
fn unknown_interface_is_enodev() {
    require_root("creating network namespaces");
    let ns = NetNs::new();
    ns.run_in(|| {
        let mut nl = Netlink::new().unwrap();
        let e = nl.link("nosuchdev0").unwrap_err();
        assert_eq!(e.errno, libc::ENODEV, "{e}");
        assert!(e.is_no_device());
        assert_eq!(
            nl.link("a-name-much-too-long").unwrap_err().errno,
            libc::ENODEV
        );
        assert_eq!(nl.rings("nosuchdev0").unwrap_err().errno, libc::ENODEV);
        assert_eq!(nl.features("nosuchdev0").unwrap_err().errno, libc::ENODEV);
        assert_eq!(nl.link_modes("nosuchdev0").unwrap_err().errno, libc::ENODEV);
        assert_eq!(nl.set_mtu(999_999, 1400).unwrap_err().errno, libc::ENODEV);
        let io = ioctl::driver_info("nosuchdev0").unwrap_err();
        assert_eq!(io.raw_os_error(), Some(libc::ENODEV));
        assert_eq!(
            ioctl::driver_stats("nosuchdev0")
                .unwrap_err()
                .raw_os_error(),
            Some(libc::ENODEV)
        );
    });
}

#[test]
fn one_connection_serves_many_requests() {
    require_root("creating network namespaces");
    let (ns, v, p) = one_veth();
    ns.run_in(move || {
        let mut nl = Netlink::new().unwrap();
        assert!(
            nl.ethtool()
                .family()
                .unwrap()
                .mcast_groups
                .contains_key("monitor")
        );
        for _ in 0..50 {
            assert_eq!(nl.link(&v).unwrap().name, v);
            assert!(nl.features(&p).unwrap().is_some());
            assert!(nl.rings(&v).unwrap().is_none());
            assert_eq!(nl.links().unwrap().len(), 3);
        }
    });
}

#[test]
fn every_getter_answers_for_every_kind_of_link() {
    require_root("creating network namespaces");
    // What `hlctl show` does: every section for lo, a veth and a tap; a
    // section the driver lacks is None, never an error.
    let (ns, v, _) = one_veth();
    let tap = unique("tp");
    ns.exec(&["ip", "tuntap", "add", &tap, "mode", "tap"]);
    let seen = ns.run_in(move || {
        let mut nl = Netlink::new().unwrap();
        let mut seen = BTreeMap::new();
        for l in nl.links().unwrap() {
            let n = l.name.clone();
            let sections = [
                nl.link_modes(&n).unwrap().is_some(),
                nl.rings(&n).unwrap().is_some(),
                nl.pause(&n).unwrap().is_some(),
                nl.features(&n).unwrap().is_some(),
                nl.channels(&n).unwrap().is_some(),
                nl.coalesce(&n).unwrap().is_some(),
                ioctl::driver_info(&n).unwrap().is_some(),
                ioctl::driver_stats(&n).unwrap().is_some(),
            ];
            seen.insert(n, sections);
        }
        seen
    });
    assert_eq!(seen.len(), 4);
    // lo: features only.
    assert_eq!(
        seen["lo"],
        [false, false, false, true, false, false, false, false]
    );
    // veth: link modes, features, channels, driver info and stats.
    assert_eq!(
        seen[&v],
        [true, false, false, true, true, false, true, true]
    );
    // tap: link modes, features, driver info; tun has no private statistics.
    let t = &seen[&tap];
    assert!(t[0] && t[3] && t[6], "tap sections {t:?}");
}
