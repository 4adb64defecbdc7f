//! The plan: ordered candidate changes drawn from the doctor's inputs, each
//! with its reason. Order: a link below its best renegotiates first (nothing
//! else matters at a tenth of the speed); then (cheapest and safest first, as
//! the 10 GbE guide did it): ring buffers to max, TCP buffers from the BDP, offloads on, flow
//! control, MTU (kept only if the whole path carries it), congestion control,
//! txqueuelen; where one core did the receive work ([`super::cores`]):
//! more channels when the device has spare ones, else RPS, then interrupt
//! coalescing; interrupt affinity and XPS of a multi-queue device
//! ([`super::spread`]); the backlog and budget sysctls when their softnet counters
//! moved during the baseline ([`super::softnet`]); then the user's own
//! `--try` candidates.

use super::change::Change;
use crate::doctor::Inputs;
use crate::doctor::inputs::Rtt;
use crate::doctor::tcp::{bdp, peer_link_mbps};
use std::collections::BTreeMap;

use crate::nic::model::{Interface, PauseSet, Rings, RingsSet};
use crate::path::limit::buffer_for;
use crate::units::bytes;

pub(crate) use super::change::Candidate;

/// Options for planning.
#[derive(Clone, Debug, Default)]
pub(crate) struct PlanOptions {
    pub(crate) interface: String,
    /// Try MTU 9000 (default true).
    pub(crate) mtu: bool,
    /// `--try` texts, already parsed.
    pub(crate) extra: Vec<Candidate>,
}

/// Kernel features the tuner turns back on (the doctor's "normally on" set).
const OFFLOADS: &[&str] = &[
    "tx-scatter-gather",
    "tx-tcp-segmentation",
    "tx-tcp6-segmentation",
    "tx-generic-segmentation",
    "rx-checksum",
    "tx-checksum-ip-generic",
    "tx-checksum-ipv4",
    "tx-checksum-ipv6",
];

fn triplet_with_max(current: Option<&str>, default: &str, max: u64) -> String {
    let min_def = current
        .map(|v| v.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .filter(|s| s.split(' ').count() == 2)
        .unwrap_or_else(|| default.to_string());
    format!("{min_def} {max}")
}

/// Candidates in order, and notes on what was left out and why.
pub(crate) fn plan(inp: &Inputs, opts: &PlanOptions) -> (Vec<Candidate>, Vec<String>) {
    let mut c = Vec::new();
    let mut notes = Vec::new();
    let name = opts.interface.as_str();
    let Some(sample) = inp.iface(name) else {
        notes.push(format!("{name}: not read; no NIC candidates"));
        return (opts.extra.clone(), notes);
    };
    let i = sample.now();

    if let Some(l) = super::link::candidate(i) {
        c.push(l);
    }

    // On a bridge or bond: rings, pause and offloads on the ports, offloads
    // on the uppers too, the MTU on every device as one change.
    let devices = stack_devices(inp, i);
    let ports: Vec<&Interface> = devices.iter().copied().filter(|d| is_port(i, d)).collect();
    if let Some(st) = &i.stack {
        notes.push(format!(
            "{name} is part of the stack {}: rings, pause and offloads are tuned on the ports ({}), offloads on the uppers too, the MTU on every device as one change",
            st.members.iter().map(|m| m.describe()).collect::<Vec<_>>().join("; "),
            ports.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(" ")
        ));
    }

    let rtt = inp.peer.as_ref().and_then(|p| p.rtt.as_ref().ok());
    let steps = [
        rings_max(name, i, &ports, &mut notes),
        tcp_buffers(inp, &mut notes),
        offloads_on(name, i, &devices),
        flow_control(name, &ports),
        mtu_jumbo(inp, opts, name, i, &devices, &mut notes),
        congestion_bbr(inp, rtt),
        txqueuelen(i),
    ];
    c.extend(steps.into_iter().flatten());
    c.extend(super::cores::candidates(inp, i, &mut notes));
    c.extend(super::spread::candidates(inp, i, &mut notes));
    c.extend(super::softnet::candidates(inp, &mut notes));
    c.extend(opts.extra.iter().cloned());
    (c, notes)
}

/// Ring buffers below their maximum, on the ports.
fn rings_max(
    name: &str,
    i: &Interface,
    ports: &[&Interface],
    notes: &mut Vec<String>,
) -> Option<Candidate> {
    let mut ch = Change::default();
    let mut why = Vec::new();
    for d in ports {
        match &d.rings {
            Some(r) => {
                if let Some(set) = rings_up(r) {
                    why.push(format!(
                        "{}: rx {}/{} tx {}/{}",
                        d.name,
                        r.rx.unwrap_or(0),
                        r.rx_max.unwrap_or(0),
                        r.tx.unwrap_or(0),
                        r.tx_max.unwrap_or(0)
                    ));
                    ch.nic_of(name, &d.name).rings = Some(set);
                }
            }
            None => notes.push(format!(
                "ring buffers: the driver of {} does not report them",
                d.name
            )),
        }
    }
    if !ch.is_empty() {
        return Some(Candidate {
            id: "rings-max".into(),
            title: "ring buffers to their maximum".into(),
            reason: format!(
                "{}: larger rings absorb bursts the CPU cannot drain at once",
                strip_own(&why, name, i.stack.is_none())
            ),
            change: ch,
            probe_mtu: None,
        });
    }

    None
}

/// TCP buffer maxima below twice the bandwidth-delay product, raised as far
/// as TCP's memory limit allows one connection ([`buffer_for`]).
fn tcp_buffers(inp: &Inputs, notes: &mut Vec<String>) -> Option<Candidate> {
    let rtt = inp.peer.as_ref().and_then(|p| p.rtt.as_ref().ok());
    let (Some(rtt), Some(mbps)) = (rtt, peer_link_mbps(inp)) else {
        notes.push("TCP buffers: no RTT or link speed towards the peer".into());
        return None;
    };
    let b = bdp(mbps, rtt.ms);
    let target = buffer_for(b, inp.tcp_memory.as_ref());
    let bound = bound_note(inp, b, target);
    let mut ch = Change::default();
    let mut short = false;
    for (key, def) in [
        ("net.ipv4.tcp_rmem", "4096 131072"),
        ("net.ipv4.tcp_wmem", "4096 16384"),
    ] {
        let max = inp.triplet_max(key).filter(|&m| m < 2 * b);
        short |= max.is_some();
        if max.is_some_and(|m| m < target) {
            ch.sysctl
                .insert(key.into(), triplet_with_max(inp.sysctl(key), def, target));
        }
    }
    if ch.sysctl.is_empty() {
        if let Some(why) = bound.filter(|_| short) {
            notes.push(format!("TCP buffers: not raised: {why}"));
        }
        return None;
    }
    for key in ["net.core.rmem_max", "net.core.wmem_max"] {
        if inp
            .sysctl(key)
            .and_then(|v| v.parse::<u64>().ok())
            .is_some_and(|v| v < target)
        {
            ch.sysctl.insert(key.into(), target.to_string());
        }
    }
    let mut reason = format!(
        "bandwidth-delay product {} ({} × {:.2} ms): buffers should hold twice that",
        bytes(b),
        crate::units::speed(mbps),
        rtt.ms
    );
    if let Some(why) = bound {
        reason.push_str(&format!("; {why}"));
    }
    Some(Candidate {
        id: "tcp-buffers".into(),
        title: format!("TCP buffer maxima to {}", bytes(target)),
        reason,
        change: ch,
        probe_mtu: None,
    })
}

/// Why `target` is below what the bandwidth-delay product `b` asks for (TCP's
/// memory limit), or `None` when it is not.
fn bound_note(inp: &Inputs, b: u64, target: u64) -> Option<String> {
    let m = inp.tcp_memory.as_ref()?;
    (target < buffer_for(b, None)).then(|| {
        format!(
            "at most {} here: half of the {} at which all TCP on this host enters memory pressure ({}), where the kernel clamps every connection's window",
            bytes(target),
            bytes(m.pressure_bytes),
            m.source
        )
    })
}

/// Offloads that are normally on but off, on every device.
fn offloads_on(name: &str, i: &Interface, devices: &[&Interface]) -> Option<Candidate> {
    let mut ch = Change::default();
    let mut why = Vec::new();
    for d in devices {
        let off = offloads_off(d);
        if !off.is_empty() {
            why.push(format!(
                "{} off",
                strip_one(
                    &d.name,
                    &off.keys().cloned().collect::<Vec<_>>().join(", "),
                    i.stack.is_none()
                )
            ));
            ch.nic_of(name, &d.name).features = off;
        }
    }
    if !ch.is_empty() {
        return Some(Candidate {
            id: "offloads-on".into(),
            title: "offloads back on".into(),
            reason: format!(
                "{}: the CPU segments and checksums every packet itself",
                why.join("; ")
            ),
            change: ch,
            probe_mtu: None,
        });
    }

    None
}

/// Pause frames on, on the ports.
fn flow_control(name: &str, ports: &[&Interface]) -> Option<Candidate> {
    let mut ch = Change::default();
    for d in ports {
        if let Some(set) = pause_on(d) {
            ch.nic_of(name, &d.name).pause = Some(set);
        }
    }
    if !ch.is_empty() {
        return Some(Candidate {
            id: "flow-control".into(),
            title: "flow control (pause frames) on".into(),
            reason: "a receiver can ask the sender to hold instead of dropping".into(),
            change: ch,
            probe_mtu: None,
        });
    }

    None
}

/// MTU 9000 on every device, when each allows it and the path was verified.
fn mtu_jumbo(
    inp: &Inputs,
    opts: &PlanOptions,
    name: &str,
    i: &Interface,
    devices: &[&Interface],
    notes: &mut Vec<String>,
) -> Option<Candidate> {
    let path_ok = inp
        .peer
        .as_ref()
        .is_some_and(|p| p.pmtu.as_ref().is_ok_and(|m| m.path_mtu >= m.local_mtu));
    let below: Vec<&&Interface> = devices.iter().filter(|d| d.mtu < 9000).collect();
    let cannot: Vec<String> = devices
        .iter()
        .filter(|d| d.mtu_max.is_none_or(|m| m < 9000))
        .map(|d| {
            format!(
                "{} (max {})",
                d.name,
                d.mtu_max.map_or("unknown".into(), |m| m.to_string())
            )
        })
        .collect();
    if opts.mtu && !below.is_empty() && !cannot.is_empty() && i.stack.is_some() {
        notes.push(format!(
            "MTU 9000: not tried, not every device of the stack allows it: {}",
            cannot.join(", ")
        ));
    } else if opts.mtu && !below.is_empty() && cannot.is_empty() {
        if path_ok {
            let mut ch = Change::default();
            for d in devices {
                ch.nic_of(name, &d.name).mtu = Some(9000);
            }
            let whole = if i.stack.is_some() {
                format!(
                    " on the whole stack ({}) as one change",
                    devices
                        .iter()
                        .map(|d| d.name.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                )
            } else {
                String::new()
            };
            return Some(Candidate {
                id: "mtu-jumbo".into(),
                title: "jumbo frames (MTU 9000)".into(),
                reason: format!(
                    "fewer, larger packets cut per-packet CPU cost{whole}; kept only if a 9000-byte don't-fragment probe reaches the peer"
                ),
                change: ch,
                probe_mtu: Some(9000),
            });
        } else {
            notes.push("MTU 9000: not tried, the path MTU to the peer could not be verified (no echo replies)".into());
        }
    }

    None
}

/// bbr on a path of at least 1 ms, when the kernel has it.
fn congestion_bbr(inp: &Inputs, rtt: Option<&Rtt>) -> Option<Candidate> {
    let cc = inp.sysctl("net.ipv4.tcp_congestion_control").unwrap_or("");
    let bbr = inp
        .sysctl("net.ipv4.tcp_available_congestion_control")
        .is_some_and(|a| a.split_whitespace().any(|x| x == "bbr"));
    if bbr && cc != "bbr" && rtt.is_some_and(|r| r.ms >= 1.0) {
        let mut ch = Change::default();
        ch.sysctl
            .insert("net.ipv4.tcp_congestion_control".into(), "bbr".into());
        return Some(Candidate {
            id: "congestion-bbr".into(),
            title: "congestion control bbr".into(),
            reason: format!(
                "{cc} on a {:.1} ms path: bbr paces by measured bandwidth and RTT instead of loss",
                rtt.map_or(0.0, |r| r.ms)
            ),
            change: ch,
            probe_mtu: None,
        });
    }

    None
}

/// A transmit queue shorter than 1000.
fn txqueuelen(i: &Interface) -> Option<Candidate> {
    if i.txqueuelen > 0 && i.txqueuelen < 1000 {
        let mut ch = Change::default();
        ch.nic.txqueuelen = Some(1000);
        return Some(Candidate {
            id: "txqueuelen".into(),
            title: "transmit queue to 1000".into(),
            reason: format!("txqueuelen {} drops bursts", i.txqueuelen),
            change: ch,
            probe_mtu: None,
        });
    }

    None
}

/// The devices a NIC candidate looks at: the whole stack of `i` (as read
/// by the doctor, top first), else `i` alone.
fn stack_devices<'a>(inp: &'a Inputs, i: &'a Interface) -> Vec<&'a Interface> {
    match &i.stack {
        None => vec![i],
        Some(st) => st
            .names()
            .iter()
            .filter_map(|n| inp.iface(n).map(|s| s.now()))
            .collect(),
    }
}

/// A port of the stack (or the interface itself when it is in none).
fn is_port(i: &Interface, d: &Interface) -> bool {
    match &i.stack {
        None => true,
        Some(st) => st.member(&d.name).is_some_and(|m| !m.is_upper()),
    }
}

/// Rings below their maximum, raised to it.
fn rings_up(r: &Rings) -> Option<RingsSet> {
    let up = |cur: Option<u32>, max: Option<u32>| match (cur, max) {
        (Some(c), Some(m)) if c < m => Some(m),
        _ => None,
    };
    let (rx, tx) = (up(r.rx, r.rx_max), up(r.tx, r.tx_max));
    (rx.is_some() || tx.is_some()).then(|| RingsSet {
        rx,
        tx,
        ..Default::default()
    })
}

/// Offloads that are normally on, changeable and off (GRO only on real NICs).
fn offloads_off(i: &Interface) -> BTreeMap<String, bool> {
    let mut out = BTreeMap::new();
    let Some(f) = &i.features else {
        return out;
    };
    for k in OFFLOADS {
        if let Some(x) = f.get(*k)
            && !x.fixed
            && !x.requested
        {
            out.insert(k.to_string(), true);
        }
    }
    if i.physical
        && let Some(x) = f.get("rx-gro")
        && !x.fixed
        && !x.requested
    {
        out.insert("rx-gro".into(), true);
    }
    out
}

/// Pause frames on where the link supports them and they are off.
fn pause_on(i: &Interface) -> Option<PauseSet> {
    let p = i.pause.as_ref()?;
    let supports = i.link.as_ref().is_some_and(|l| {
        l.capabilities
            .iter()
            .any(|c| c == "Pause" || c == "Asym_Pause")
    });
    (supports && !(p.rx && p.tx)).then_some(PauseSet {
        autoneg: None,
        rx: Some(true),
        tx: Some(true),
    })
}

/// Reason text for one device: `NAME: what` on a stack, `what` alone otherwise.
fn strip_one(device: &str, what: &str, alone: bool) -> String {
    if alone {
        what.to_string()
    } else {
        format!("{device}: {what}")
    }
}

/// Reason texts of the ports; without a stack the interface's own name is dropped.
fn strip_own(lines: &[String], iface: &str, alone: bool) -> String {
    let prefix = format!("{iface}: ");
    lines
        .iter()
        .map(|l| match (alone, l.strip_prefix(&prefix)) {
            (true, Some(rest)) => rest.to_string(),
            _ => l.clone(),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A `--try` candidate: `hlctl set` words (`feature gso off`, `ring rx 512`)
/// or one sysctl assignment (`net.ipv4.tcp_wmem=4096 16384 65536`).
pub(crate) fn user_candidate(n: usize, text: &str) -> Result<Candidate, String> {
    let t = text.trim();
    let mut ch = Change::default();
    if t.starts_with("net.") {
        let (k, v) = t
            .split_once('=')
            .ok_or_else(|| format!("--try '{t}': a sysctl candidate is KEY=VALUE"))?;
        ch.sysctl
            .insert(k.trim().to_string(), crate::sysctl::keys::normalise(v));
    } else {
        let words: Vec<String> = t.split_whitespace().map(str::to_string).collect();
        ch.nic = crate::nic::change::parse(&words)
            .map_err(|p| format!("--try '{t}':\n{}", crate::problem::join(&p)))?;
        if ch.nic.link.is_some() {
            return Err(format!(
                "--try '{t}': link settings are not tuned (they can cut the connection)"
            ));
        }
    }
    let probe_mtu = ch.nic.mtu;
    Ok(Candidate {
        id: format!("try-{n}"),
        title: t.to_string(),
        reason: "asked for with --try".into(),
        change: ch,
        probe_mtu,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::inputs::{IfaceSample, PeerData, Rtt};
    use crate::nic::model::{Feature, Interface, LinkModes, Rings};
    use crate::path::Peer;
    use crate::path::pmtu::PathMtu;

    fn inputs() -> Inputs {
        let mut feats = BTreeMap::new();
        feats.insert("tx-generic-segmentation".to_string(), Feature::default());
        let i = Interface {
            name: "eth0".into(),
            mtu: 1500,
            mtu_max: Some(9216),
            txqueuelen: 1000,
            physical: true,
            link: Some(LinkModes {
                speed_mbps: Some(10_000),
                ..Default::default()
            }),
            rings: Some(Rings {
                rx: Some(2048),
                tx: Some(4096),
                rx_max: Some(8184),
                tx_max: Some(8184),
                ..Default::default()
            }),
            features: Some(feats),
            ..Default::default()
        };
        let mut inp = Inputs::default();
        inp.interfaces.push(IfaceSample {
            first: i,
            second: None,
            interval_s: 1.0,
        });
        inp.sysctls
            .insert("net.ipv4.tcp_rmem".into(), "4096 87380 6291456".into());
        inp.sysctls
            .insert("net.ipv4.tcp_wmem".into(), "4096 16384 4194304".into());
        inp.sysctls
            .insert("net.core.rmem_max".into(), "212992".into());
        inp.sysctls
            .insert("net.ipv4.tcp_congestion_control".into(), "cubic".into());
        inp.sysctls.insert(
            "net.ipv4.tcp_available_congestion_control".into(),
            "reno cubic bbr".into(),
        );
        inp.peer = Some(PeerData {
            peer: Peer::parse("atlantis").unwrap(),
            interface: Some("eth0".into()),
            rtt: Ok(Rtt {
                ms: 20.0,
                source: "test".into(),
            }),
            pmtu: Ok(PathMtu {
                local_mtu: 1500,
                path_mtu: 1500,
                smallest_lost: None,
                probes: 2,
            }),
            throughput: Err("-".into()),
        });
        inp
    }

    #[test]
    fn the_ten_gig_guide_in_order() {
        let extra = vec![user_candidate(1, "net.ipv4.tcp_wmem=4096 16384 65536").unwrap()];
        let (c, _) = plan(
            &inputs(),
            &PlanOptions {
                interface: "eth0".into(),
                mtu: true,
                extra,
            },
        );
        let ids: Vec<&str> = c.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "rings-max",
                "tcp-buffers",
                "offloads-on",
                "mtu-jumbo",
                "congestion-bbr",
                "try-1"
            ]
        );
        let rings = c[0].change.nic.rings.as_ref().unwrap();
        assert_eq!((rings.rx, rings.tx), (Some(8184), Some(8184)));
        // 10 Gb/s × 20 ms = 25 MB → 64 MiB maxima.
        assert_eq!(
            c[1].change.sysctl["net.ipv4.tcp_rmem"],
            "4096 87380 67108864"
        );
        assert_eq!(c[1].change.sysctl["net.core.rmem_max"], "67108864");
        assert_eq!(c[3].probe_mtu, Some(9000));
    }

    /// A 768 MB machine enters TCP memory pressure at 41 MB: one connection's
    /// buffers stop at half of that, and the reason says why; buffers already
    /// at that bound are left alone, with a note.
    #[test]
    fn tcp_buffers_stay_below_tcps_memory_pressure() {
        use crate::sysctl::tcp_mem::TcpMemory;
        let mut inp = inputs();
        inp.tcp_memory = Some(TcpMemory {
            pressure_bytes: 41_484_288,
            source: "net.ipv4.tcp_mem = 7596 10128 15192".into(),
        });
        let mut notes = Vec::new();
        let c = tcp_buffers(&inp, &mut notes).expect("a tcp-buffers candidate");
        assert_eq!(c.change.sysctl["net.ipv4.tcp_wmem"], "4096 16384 16777216");
        assert_eq!(c.change.sysctl["net.core.rmem_max"], "16777216");
        assert!(
            c.reason.contains("memory pressure") && c.reason.contains("tcp_mem = 7596"),
            "{}",
            c.reason
        );
        inp.sysctls
            .insert("net.ipv4.tcp_rmem".into(), "4096 131072 16777216".into());
        inp.sysctls
            .insert("net.ipv4.tcp_wmem".into(), "4096 16384 16777216".into());
        assert!(tcp_buffers(&inp, &mut notes).is_none());
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("TCP buffers: not raised")),
            "{notes:?}"
        );
    }

    /// Bridge vmbr0 with port p0 (offloads off), tuned by the port's name.
    #[test]
    fn a_stack_is_planned_whole() {
        let st = crate::nic::stack::bridge_with_port("vmbr0", "p0");
        let mut inp = inputs();
        let mut port = inp.interfaces[0].first.clone();
        port.name = "p0".into();
        port.stack = Some(st.clone());
        let mut bridge = port.clone();
        bridge.name = "vmbr0".into();
        bridge.rings = None;
        bridge.features = None;
        inp.interfaces = [port, bridge]
            .into_iter()
            .map(|i| IfaceSample {
                first: i,
                second: None,
                interval_s: 1.0,
            })
            .collect();
        let (c, notes) = plan(
            &inp,
            &PlanOptions {
                interface: "p0".into(),
                mtu: true,
                extra: Vec::new(),
            },
        );
        assert!(
            notes.iter().any(|n| n.contains("part of the stack")),
            "{notes:?}"
        );
        let find = |id: &str| c.iter().find(|c| c.id == id).unwrap();
        // Rings and offloads on the port (the tuned interface itself).
        assert!(find("rings-max").change.nic.rings.is_some());
        assert!(find("offloads-on").change.stack.is_empty());
        // MTU on the port and the bridge, as one candidate.
        let mtu = &find("mtu-jumbo").change;
        assert_eq!(mtu.nic.mtu, Some(9000));
        assert_eq!(mtu.stack["vmbr0"].mtu, Some(9000));
        // By the bridge's name the same devices are changed.
        let (c2, _) = plan(
            &inp,
            &PlanOptions {
                interface: "vmbr0".into(),
                mtu: true,
                extra: Vec::new(),
            },
        );
        let mtu2 = &c2.iter().find(|c| c.id == "mtu-jumbo").unwrap().change;
        assert_eq!(mtu2.nic.mtu, Some(9000));
        assert_eq!(mtu2.stack["p0"].mtu, Some(9000));
        let rings2 = &c2.iter().find(|c| c.id == "rings-max").unwrap().change;
        assert!(rings2.nic.rings.is_none() && rings2.stack["p0"].rings.is_some());
    }

    #[test]
    fn try_texts() {
        assert!(
            user_candidate(1, "feature gso off")
                .unwrap()
                .change
                .nic
                .features
                .contains_key("gso")
        );
        assert!(user_candidate(1, "link speed 100").is_err());
        assert!(user_candidate(1, "bogus 1").is_err());
        assert!(user_candidate(1, "net.ipv4.tcp_rmem").is_err());
    }
}
