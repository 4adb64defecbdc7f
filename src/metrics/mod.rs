//! `hlctl.prom` for node_exporter's textfile collector: the links (speed
//! against supported, duplex, rings, pause, MTU, the tuned offloads), the
//! last check (throughput per peer and direction, retransmits, RTT, disk,
//! CPU, regressions) and the last tune. Labels name the subject only; the
//! host is Prometheus's `instance`.
//!
//! Encoded with the `prometheus-client` crate (Prometheus text format
//! 0.0.4) and written atomically; `hlctl check` writes it after each run,
//! hlctld after link changes.
//!
//! - [`gather`]: reading the inputs (netlink, history);
//! - whether a link's speed is physical comes from [`crate::nic::speed`], the one place that decides it
//!   (with its rule that a rate the last check measured above the speed makes it nominal);
//! - the matrix's "slower end": `hlctl_address_link_speed_bps{address,iface}` (each address with the
//!   physical speed of its link) is the peer's end, joined to a `peer` label through
//!   `hlctl_net_peer_address{peer,address}` (the address the peer, a host name too, resolved to),
//!   and `hlctl_net_local_link_speed_bps{peer}` is this host's end; a nominal speed gives no series;
//! - [`transfers`]: `bench file`'s newest figure per place, protocol and
//!   direction (this host's row of the host × host × protocol matrix);
//! - [`verdicts`]: link usage (`hlctl usage`, the last day and 30 days) and
//!   the last check's workload verdicts;
//! - [`watch`]: hlctld rewriting the file after link changes (and its usage
//!   sampler after every minute it stores).

pub(crate) mod gather;
pub(crate) mod transfers;
pub(crate) mod verdicts;
pub(crate) mod watch;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;

use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::check::CheckReport;
use crate::check::net::{DirectionResult, PeerResult};
use crate::history::compare::Comparison;
use crate::nic::model::{Duplex, Feature, Interface, LinkModes, Pause, Rings};

pub(crate) use gather::Inputs;

/// The file's name in the textfile directory.
pub(crate) const FILE: &str = "hlctl.prom";

type Labels = Vec<(String, String)>;
type G = Family<Labels, Gauge<f64, AtomicU64>>;

/// The metric families, registered once, filled from the inputs.
struct Families {
    reg: Registry,
    made: Vec<(&'static str, G)>,
}

impl Families {
    fn new() -> Self {
        Families {
            reg: Registry::default(),
            made: Vec::new(),
        }
    }

    /// The families in Prometheus's text format.
    fn text(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &self.reg);
        out
    }

    /// Set `name{labels}` (registering the family the first time).
    fn set(&mut self, name: &'static str, help: &str, labels: &[(&str, &str)], v: f64) {
        let fam = match self.made.iter().find(|(n, _)| *n == name) {
            Some((_, f)) => f.clone(),
            None => {
                let f = G::default();
                self.reg.register(name, help, f.clone());
                self.made.push((name, f.clone()));
                f
            }
        };
        let l: Labels = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        fam.get_or_create(&l).set(v);
    }
}

fn b(x: bool) -> f64 {
    if x { 1.0 } else { 0.0 }
}

fn links(f: &mut Families, links: &[Interface], m: &Measured) {
    for i in links {
        let l = [("iface", i.name.as_str())];
        if let Some(modes) = &i.link {
            link_modes(f, &l, modes);
        }
        f.set(
            "hlctl_link_speed_is_physical",
            "1 when the speed is a physical line rate (not a virtual device's nominal figure)",
            &l,
            b(is_physical(i, m)),
        );
        if let Some(r) = &i.rings {
            rings(f, &l, r);
        }
        if let Some(p) = &i.pause {
            pause(f, &l, p);
        }
        f.set("hlctl_mtu_bytes", "MTU in bytes", &l, i.mtu as f64);
        if let Some(feats) = &i.features {
            offloads(f, &i.name, feats);
        }
    }
}

/// A link's speed, the best it supports, and its duplex.
fn link_modes(f: &mut Families, l: &[(&str, &str)], m: &LinkModes) {
    if let Some(s) = m.speed_mbps {
        f.set(
            "hlctl_link_speed_bps",
            "Link speed in bit/s",
            l,
            s as f64 * 1e6,
        );
    }
    if let Some(best) = m
        .supported_modes
        .iter()
        .filter_map(|x| crate::nic::validate::mode_speed_duplex(x).map(|(s, _)| s))
        .max()
    {
        f.set(
            "hlctl_link_supported_speed_bps",
            "Best speed the link supports, in bit/s",
            l,
            best as f64 * 1e6,
        );
    }
    if let Some(d) = m.duplex {
        f.set(
            "hlctl_link_full_duplex",
            "1 when the link runs full duplex, 0 half",
            l,
            b(d == Duplex::Full),
        );
    }
}

/// A link's ring sizes and the largest the driver allows.
fn rings(f: &mut Families, l: &[(&str, &str)], r: &Rings) {
    for (name, help, v) in [
        ("hlctl_ring_rx_entries", "RX ring size", r.rx),
        (
            "hlctl_ring_rx_max_entries",
            "Largest RX ring the driver allows",
            r.rx_max,
        ),
        ("hlctl_ring_tx_entries", "TX ring size", r.tx),
        (
            "hlctl_ring_tx_max_entries",
            "Largest TX ring the driver allows",
            r.tx_max,
        ),
    ] {
        if let Some(v) = v {
            f.set(name, help, l, v as f64);
        }
    }
}

/// A link's flow control.
fn pause(f: &mut Families, l: &[(&str, &str)], p: &Pause) {
    f.set("hlctl_pause_rx", "1 when RX flow control is on", l, b(p.rx));
    f.set("hlctl_pause_tx", "1 when TX flow control is on", l, b(p.tx));
}

/// The offloads hlctl tunes, active or not.
fn offloads(f: &mut Families, iface: &str, feats: &std::collections::BTreeMap<String, Feature>) {
    for name in crate::history::settings::FEATURES {
        if let Some(x) = feats.get(*name) {
            f.set(
                "hlctl_offload_active",
                "1 when the offload is active (the set hlctl tunes)",
                &[("iface", iface), ("feature", name)],
                b(x.active),
            );
        }
    }
}

/// The highest rate the last check measured through each interface (either
/// direction): the evidence for [`crate::nic::speed`]'s last rule.
type Measured = std::collections::BTreeMap<String, f64>;

fn measured(check: Option<&CheckReport>) -> Measured {
    let mut m = Measured::new();
    for p in check.map(|c| c.peers.as_slice()).unwrap_or_default() {
        let Some(i) = &p.interface else { continue };
        for bps in p.directions.iter().filter_map(|d| d.bps) {
            let e = m.entry(i.clone()).or_insert(0.0);
            *e = e.max(bps);
        }
    }
    m
}

/// Whether `i`'s speed is physical, as [`crate::nic::speed`] decides it,
/// including its rule that a measured rate above the reported speed (an
/// emulated NIC) makes the figure nominal.
fn is_physical(i: &Interface, m: &Measured) -> bool {
    match crate::nic::speed::link_speed(i) {
        Some(s) => match m.get(&i.name) {
            Some(bps) => s.against_measured(*bps).is_physical(),
            None => s.is_physical(),
        },
        None => crate::nic::speed::speed_kind(i).0.is_physical(),
    }
}

/// The physical speed of `iface` in bit/s, `None` when it reports none or
/// the figure is nominal: a nominal speed caps nothing, so it is no end's limit.
fn physical_bps(links: &[Interface], m: &Measured, iface: &str) -> Option<f64> {
    let i = links.iter().find(|i| i.name == iface)?;
    crate::nic::speed::link_speed(i)
        .filter(|_| is_physical(i, m))
        .map(|s| s.bps())
}

/// Each address with the physical speed of the link holding it, so that a
/// query can join a check's `peer` label (its address) to the peer's own
/// link: the matrix's "slower end". Nominal speeds give no series.
fn addresses(
    f: &mut Families,
    links: &[Interface],
    m: &Measured,
    addrs: &[(String, std::net::IpAddr)],
) {
    for (iface, ip) in addrs {
        if let Some(bps) = physical_bps(links, m, iface) {
            let ip = ip.to_string();
            f.set(
                "hlctl_address_link_speed_bps",
                "Physical speed (bit/s) of the link holding this address (none when the speed is nominal)",
                &[("address", ip.as_str()), ("iface", iface.as_str())],
                bps,
            );
        }
    }
}

/// Disk figures by pattern: (pattern, IOPS, bytes/s).
fn disk_figures(e: &crate::report::Entry) -> Vec<(String, f64, f64)> {
    const SEQ_BLOCK: f64 = 1048576.0; // the dd-like runs use 1 MiB blocks
    const RAND_BLOCK: f64 = 4096.0;
    e.figures
        .iter()
        .map(|x| match x.unit.as_str() {
            "IOPS" => (x.name.clone(), x.value, x.value * RAND_BLOCK),
            _ => (x.name.clone(), x.value / SEQ_BLOCK, x.value),
        })
        .collect()
}

/// Help of `hlctl_net_local_link_speed_bps`.
const LOCAL_SPEED_HELP: &str =
    "Physical speed (bit/s) of this host's link toward the peer (none when the speed is nominal)";

/// Help of `hlctl_net_peer_address`.
const PEER_ADDRESS_HELP: &str = "Always 1: the address the peer resolved to in the last check, \
     which joins the peer (a host name too) to the address series of its own link";

fn check(
    f: &mut Families,
    r: &CheckReport,
    ts: i64,
    c: Option<&Comparison>,
    links: &[Interface],
    m: &Measured,
) {
    for p in &r.peers {
        peer(f, p, links, m);
    }
    for e in &r.report.disk {
        disk(f, e);
    }
    for e in &r.report.cpu {
        cpu(f, e, r.cpu_threads);
    }
    f.set(
        "hlctl_check_timestamp_seconds",
        "When the last check ran (Unix seconds)",
        &[],
        ts as f64,
    );
    if let Some(c) = c {
        regressions(f, c);
    }
    verdicts::workloads(f, &r.workloads);
}

/// One peer of the last check: this host's link speed toward it, each
/// direction's figures, the address it resolved to, the RTT.
fn peer(f: &mut Families, p: &PeerResult, links: &[Interface], m: &Measured) {
    let local = p.interface.as_deref();
    if let Some(bps) = local.and_then(|i| physical_bps(links, m, i)) {
        f.set(
            "hlctl_net_local_link_speed_bps",
            LOCAL_SPEED_HELP,
            &[("peer", p.peer.as_str())],
            bps,
        );
    }
    for d in &p.directions {
        direction(f, &p.peer, d);
    }
    if let Some(a) = &p.address {
        f.set(
            "hlctl_net_peer_address",
            PEER_ADDRESS_HELP,
            &[("peer", p.peer.as_str()), ("address", a.as_str())],
            1.0,
        );
    }
    if let Some(rtt) = p.rtt_seconds {
        f.set(
            "hlctl_net_rtt_seconds",
            "Idle round-trip time to the peer (ICMP echo), seconds",
            &[("peer", p.peer.as_str())],
            rtt,
        );
    }
}

/// One direction of a peer: throughput, retransmits, busy retries.
fn direction(f: &mut Families, peer: &str, d: &DirectionResult) {
    let dir = d.direction.to_string();
    let l = [("peer", peer), ("direction", dir.as_str())];
    if let Some(v) = d.bps {
        f.set(
            "hlctl_net_throughput_bps",
            "Throughput of the last check to the peer, bit/s (upload: this host sends)",
            &l,
            v,
        );
    }
    if let Some(v) = d.retransmits {
        f.set(
            "hlctl_net_retransmits",
            "TCP retransmits during the last check's run",
            &l,
            v as f64,
        );
    }
    f.set(
        "hlctl_net_busy_retries",
        "Times the peer was busy and the run was tried again",
        &l,
        d.busy_retries as f64,
    );
}

/// One directory's disk figures, by pattern.
fn disk(f: &mut Families, e: &crate::report::Entry) {
    for (pattern, iops, bps) in disk_figures(e) {
        let l = [("dir", e.subject.as_str()), ("pattern", pattern.as_str())];
        f.set(
            "hlctl_disk_iops",
            "Disk I/O operations per second",
            &l,
            iops,
        );
        f.set(
            "hlctl_disk_bytes_per_second",
            "Disk throughput, bytes/s",
            &l,
            bps,
        );
    }
}

/// One CPU run's events per second, by its number of threads.
fn cpu(f: &mut Families, e: &crate::report::Entry, cpu_threads: u32) {
    let threads = if e.subject == "single" {
        1
    } else {
        cpu_threads
    }
    .to_string();
    for x in &e.figures {
        f.set(
            "hlctl_cpu_events_per_second",
            "CPU benchmark events per second",
            &[("threads", threads.as_str())],
            x.value,
        );
    }
}

/// Each compared metric: regressed or not, and the reference it was compared with.
fn regressions(f: &mut Families, c: &Comparison) {
    for m in &c.metrics {
        let l = [("metric", m.name.as_str()), ("subject", m.subject.as_str())];
        f.set(
            "hlctl_check_regression",
            "1 when the last check found this metric regressed against its reference",
            &l,
            b(m.verdict == crate::history::Verdict::Regression),
        );
        f.set(
            "hlctl_check_reference_value",
            "The reference (baseline or previous check) the last check was compared with",
            &l,
            m.baseline,
        );
    }
}

fn tune(f: &mut Families, t: &crate::history::StoredResult) {
    let iface = t.interface.clone().unwrap_or_default();
    for dir in ["upload", "download"] {
        let med = |side: &str| t.result[side][dir]["median_bps"].as_f64();
        if let (Some(before), Some(after)) = (med("baseline"), med("after"))
            && before > 0.0
        {
            f.set(
                "hlctl_tune_gain_ratio",
                "Throughput after the last tune divided by before it",
                &[("iface", iface.as_str()), ("direction", dir)],
                after / before,
            );
        }
    }
    f.set(
        "hlctl_tune_timestamp_seconds",
        "When the last tune ran (Unix seconds)",
        &[],
        t.ts as f64,
    );
}

/// The file's text.
pub(crate) fn encode(inp: &Inputs) -> String {
    let mut f = Families::new();
    let m = measured(inp.check.as_ref().map(|c| &c.0));
    links(&mut f, &inp.links, &m);
    addresses(&mut f, &inp.links, &m, &inp.addresses);
    if let Some((r, ts, c)) = &inp.check {
        check(&mut f, r, *ts, c.as_ref(), &inp.links, &m);
    }
    if let Some(t) = &inp.tune {
        tune(&mut f, t);
    }
    transfers::files(&mut f, &inp.files, &|i| physical_bps(&inp.links, &m, i));
    for (window, u) in &inp.usage {
        verdicts::usage(&mut f, u, window);
    }
    f.text()
}

/// Write `<dir>/hlctl.prom` atomically (node_exporter never reads half a file).
pub(crate) fn write(dir: &Path, text: &str) -> std::io::Result<PathBuf> {
    let p = dir.join(FILE);
    crate::fsutil::write_atomic(&p, text.as_bytes(), 0o644)?;
    Ok(p)
}

/// Gather, encode and write, when the configuration names a textfile directory.
pub(crate) fn refresh(
    paths: &crate::paths::Paths,
    cfg: &crate::config::Config,
) -> Option<std::io::Result<PathBuf>> {
    let dir = cfg.metrics.textfile_dir.as_ref()?;
    let inp = gather::gather(paths, cfg);
    Some(write(dir, &encode(&inp)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::net::{DirectionResult, PeerResult};
    use crate::nic::model::{Feature, LinkModes, Pause, Rings};
    use crate::path::throughput::Direction;
    use crate::report::{Entry, Figure, NetEntry, Report};

    /// An e1000e-like NIC as `read::interface` gives it (values from the VM test).
    fn nic() -> Interface {
        let mut features = std::collections::BTreeMap::new();
        features.insert(
            "tx-tcp-segmentation".to_string(),
            Feature {
                active: true,
                requested: true,
                fixed: false,
            },
        );
        Interface {
            name: "eth0".into(),
            physical: true,
            driver: Some("e1000e".into()),
            mtu: 1500,
            link: Some(LinkModes {
                speed_mbps: Some(100),
                duplex: Some(Duplex::Half),
                supported_modes: vec!["100baseT/Half".into(), "1000baseT/Full".into()],
                ..Default::default()
            }),
            rings: Some(Rings {
                rx: Some(256),
                tx: Some(256),
                rx_max: Some(4096),
                tx_max: Some(4096),
                ..Default::default()
            }),
            pause: Some(Pause {
                autoneg: true,
                rx: true,
                tx: false,
            }),
            features: Some(features),
            ..Default::default()
        }
    }

    #[test]
    fn every_metric_of_the_issue_with_subject_labels_only() {
        let dir = |d, bps| DirectionResult {
            direction: d,
            bps: Some(bps),
            retransmits: Some(3),
            busy_retries: 1,
            error: None,
            cores: None,
        };
        let check = CheckReport {
            report: Report {
                host: Default::default(),
                timestamp: 1000,
                network: vec![NetEntry {
                    peer: "nas \"lan\":5201".into(),
                    interface: Some("eth0".into()),
                    upload_bps: Some(9e8),
                    download_bps: Some(8e8),
                    error: None,
                }],
                disk: vec![Entry {
                    subject: "/srv".into(),
                    figures: vec![
                        Figure {
                            name: "seq-write".into(),
                            value: 2.0 * 1048576.0,
                            unit: "B/s".into(),
                        },
                        Figure {
                            name: "randread-4k".into(),
                            value: 1000.0,
                            unit: "IOPS".into(),
                        },
                    ],
                    error: None,
                    warnings: Vec::new(),
                }],
                cpu: vec![Entry {
                    subject: "multi".into(),
                    figures: vec![Figure {
                        name: "events".into(),
                        value: 5000.0,
                        unit: "events/s".into(),
                    }],
                    error: None,
                    warnings: Vec::new(),
                }],
                transfers: Vec::new(),
            },
            peers: vec![PeerResult {
                peer: "nas \"lan\":5201".into(),
                address: Some("10.0.0.7".into()),
                interface: Some("eth0".into()),
                rtt_seconds: Some(0.0004),
                directions: vec![dir(Direction::Upload, 9e8), dir(Direction::Download, 8e8)],
            }],
            files: Vec::new(),
            cpu_threads: 4,
            workloads: Vec::new(),
        };
        let tune = crate::history::StoredResult {
            id: 1,
            ts: 900,
            kind: "tune".into(),
            host: "lab".into(),
            kernel: "6.1".into(),
            interface: Some("eth0".into()),
            peer: None,
            uid: None,
            metrics: vec![],
            settings: Default::default(),
            result: serde_json::json!({
                "baseline": {"upload": {"median_bps": 4e8}, "download": {"median_bps": 5e8}},
                "after": {"upload": {"median_bps": 8e8}, "download": {"median_bps": 5e8}}
            }),
        };
        let veth = Interface {
            name: "veth0".into(),
            kind: Some("veth".into()),
            driver: Some("veth".into()),
            link: Some(LinkModes {
                speed_mbps: Some(10_000),
                ..Default::default()
            }),
            ..Default::default()
        };
        // A 1 Gb/s e1000e here: the check's 900 Mbit/s through it stay below its speed.
        let mut eth0 = nic();
        eth0.link.as_mut().unwrap().speed_mbps = Some(1000);
        let text = encode(&Inputs {
            links: vec![eth0, veth],
            addresses: vec![
                ("eth0".into(), "10.0.0.1".parse().unwrap()),
                ("eth0".into(), "fd00::1".parse().unwrap()),
                ("veth0".into(), "10.9.0.1".parse().unwrap()),
            ],
            check: Some((check.clone(), 1000, None)),
            tune: Some(tune),
            usage: Vec::new(),
            files: Vec::new(),
        });
        for line in [
            "hlctl_link_speed_bps{iface=\"eth0\"} 1000000000",
            "hlctl_link_supported_speed_bps{iface=\"eth0\"} 1000000000",
            "hlctl_link_full_duplex{iface=\"eth0\"} 0",
            "hlctl_link_speed_is_physical{iface=\"eth0\"} 1",
            "hlctl_ring_rx_entries{iface=\"eth0\"} 256",
            "hlctl_ring_rx_max_entries{iface=\"eth0\"} 4096",
            "hlctl_ring_tx_entries{iface=\"eth0\"} 256",
            "hlctl_ring_tx_max_entries{iface=\"eth0\"} 4096",
            "hlctl_pause_rx{iface=\"eth0\"} 1",
            "hlctl_pause_tx{iface=\"eth0\"} 0",
            "hlctl_mtu_bytes{iface=\"eth0\"} 1500",
            "hlctl_offload_active{iface=\"eth0\",feature=\"tx-tcp-segmentation\"} 1",
            // The encoder escapes label values (the quotes in the peer).
            "hlctl_net_throughput_bps{peer=\"nas \\\"lan\\\":5201\",direction=\"upload\"} 900000000",
            "hlctl_net_retransmits{peer=\"nas \\\"lan\\\":5201\",direction=\"download\"} 3",
            "hlctl_net_rtt_seconds{peer=\"nas \\\"lan\\\":5201\"} 0.0004",
            "hlctl_disk_iops{dir=\"/srv\",pattern=\"randread-4k\"} 1000",
            "hlctl_disk_bytes_per_second{dir=\"/srv\",pattern=\"seq-write\"} 2097152",
            "hlctl_cpu_events_per_second{threads=\"4\"} 5000",
            "hlctl_check_timestamp_seconds 1000",
            "hlctl_tune_gain_ratio{iface=\"eth0\",direction=\"upload\"} 2",
            "hlctl_tune_gain_ratio{iface=\"eth0\",direction=\"download\"} 1",
            "hlctl_tune_timestamp_seconds 900",
            // The physical speed by address and toward the peer (the matrix's ends).
            "hlctl_address_link_speed_bps{address=\"10.0.0.1\",iface=\"eth0\"} 1000000000",
            "hlctl_address_link_speed_bps{address=\"fd00::1\",iface=\"eth0\"} 1000000000",
            "hlctl_net_local_link_speed_bps{peer=\"nas \\\"lan\\\":5201\"} 1000000000",
            // The peer (a name) joined to the address it resolved to.
            "hlctl_net_peer_address{peer=\"nas \\\"lan\\\":5201\",address=\"10.0.0.7\"} 1",
        ] {
            assert!(
                text.lines().any(|l| l == line || l == format!("{line}.0")),
                "missing {line} in:\n{text}"
            );
        }
        // veth's 10 Gb/s is nominal: it bounds no pair, so no address series.
        assert!(!text.contains("10.9.0.1"), "{text}");
        assert!(text.contains("# TYPE hlctl_link_speed_bps gauge"));
        assert!(!text.contains("host="), "the host is Prometheus's instance");

        // The same check over a 100 Mb/s e1000e: 900 Mbit/s measured through
        // it prove the figure nominal (an emulated NIC), so it bounds nothing.
        let mut slow = Inputs {
            links: vec![nic()],
            addresses: vec![("eth0".into(), "10.0.0.1".parse().unwrap())],
            ..Default::default()
        };
        let before = encode(&slow);
        assert!(
            before.contains("hlctl_link_speed_is_physical{iface=\"eth0\"} 1")
                && before.contains("hlctl_address_link_speed_bps{address=\"10.0.0.1\""),
            "no check yet: the driver's speed is physical\n{before}"
        );
        slow.check = Some((check, 1000, None));
        let after = encode(&slow);
        assert!(
            after.contains("hlctl_link_speed_is_physical{iface=\"eth0\"} 0"),
            "{after}"
        );
        assert!(!after.contains("hlctl_address_link_speed_bps"), "{after}");
        assert!(!after.contains("hlctl_net_local_link_speed_bps"), "{after}");
    }
}
