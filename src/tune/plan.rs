//! The plan: ordered candidate changes drawn from the doctor's inputs, each
//! with its reason. Order: a link below its best renegotiates first (nothing
//! else matters at a tenth of the speed); then (cheapest and safest first, as
//! the 10 GbE guide did it): ring buffers to max, TCP buffers from the BDP, offloads on, flow
//! control, MTU (kept only if the whole path carries it), congestion control,
//! txqueuelen; then the user's own `--try` candidates.

use serde::{Deserialize, Serialize};

use super::change::Change;
use crate::doctor::Inputs;
use crate::doctor::tcp::{bdp, peer_link_mbps};
use crate::nic::model::{PauseSet, RingsSet};
use crate::path::limit::buffer_for;
use crate::units::bytes;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// `link-renegotiate`, `rings-max`, `tcp-buffers`, `offloads-on`, `flow-control`, `mtu-jumbo`,
    /// `congestion-bbr`, `txqueuelen`, `try-N`.
    pub id: String,
    pub title: String,
    pub reason: String,
    pub change: Change,
    /// Keep only if a don't-fragment probe of this size reaches the peer.
    pub probe_mtu: Option<u32>,
}

/// Options for planning.
#[derive(Clone, Debug, Default)]
pub struct PlanOptions {
    pub interface: String,
    /// Try MTU 9000 (default true).
    pub mtu: bool,
    /// `--try` texts, already parsed.
    pub extra: Vec<Candidate>,
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
pub fn plan(inp: &Inputs, opts: &PlanOptions) -> (Vec<Candidate>, Vec<String>) {
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

    if let Some(r) = &i.rings {
        let up = |cur: Option<u32>, max: Option<u32>| match (cur, max) {
            (Some(c), Some(m)) if c < m => Some(m),
            _ => None,
        };
        let (rx, tx) = (up(r.rx, r.rx_max), up(r.tx, r.tx_max));
        if rx.is_some() || tx.is_some() {
            let mut ch = Change::default();
            ch.nic.rings = Some(RingsSet {
                rx,
                tx,
                ..Default::default()
            });
            c.push(Candidate {
                id: "rings-max".into(),
                title: "ring buffers to their maximum".into(),
                reason: format!(
                    "rx {}/{} tx {}/{}: larger rings absorb bursts the CPU cannot drain at once",
                    r.rx.unwrap_or(0),
                    r.rx_max.unwrap_or(0),
                    r.tx.unwrap_or(0),
                    r.tx_max.unwrap_or(0)
                ),
                change: ch,
                probe_mtu: None,
            });
        }
    } else {
        notes.push("ring buffers: the driver does not report them".into());
    }

    let rtt = inp.peer.as_ref().and_then(|p| p.rtt.as_ref().ok());
    match (rtt, peer_link_mbps(inp)) {
        (Some(rtt), Some(mbps)) => {
            let b = bdp(mbps, rtt.ms);
            let target = buffer_for(b);
            let mut ch = Change::default();
            for (key, def) in [
                ("net.ipv4.tcp_rmem", "4096 131072"),
                ("net.ipv4.tcp_wmem", "4096 16384"),
            ] {
                if inp.triplet_max(key).is_some_and(|m| m < 2 * b) {
                    ch.sysctl
                        .insert(key.into(), triplet_with_max(inp.sysctl(key), def, target));
                }
            }
            if !ch.sysctl.is_empty() {
                for key in ["net.core.rmem_max", "net.core.wmem_max"] {
                    if inp
                        .sysctl(key)
                        .and_then(|v| v.parse::<u64>().ok())
                        .is_some_and(|v| v < target)
                    {
                        ch.sysctl.insert(key.into(), target.to_string());
                    }
                }
                c.push(Candidate {
                    id: "tcp-buffers".into(),
                    title: format!("TCP buffer maxima to {}", bytes(target)),
                    reason: format!(
                        "bandwidth-delay product {} ({mbps} Mb/s × {:.2} ms): buffers should hold twice that",
                        bytes(b),
                        rtt.ms
                    ),
                    change: ch,
                    probe_mtu: None,
                });
            }
        }
        _ => notes.push("TCP buffers: no RTT or link speed towards the peer".into()),
    }

    if let Some(f) = &i.features {
        let mut ch = Change::default();
        for k in OFFLOADS {
            if let Some(x) = f.get(*k)
                && !x.fixed
                && !x.requested
            {
                ch.nic.features.insert(k.to_string(), true);
            }
        }
        if i.physical
            && let Some(x) = f.get("rx-gro")
            && !x.fixed
            && !x.requested
        {
            ch.nic.features.insert("rx-gro".into(), true);
        }
        if !ch.is_empty() {
            let names: Vec<&str> = ch.nic.features.keys().map(String::as_str).collect();
            c.push(Candidate {
                id: "offloads-on".into(),
                title: "offloads back on".into(),
                reason: format!(
                    "{} off: the CPU segments and checksums every packet itself",
                    names.join(", ")
                ),
                change: ch,
                probe_mtu: None,
            });
        }
    }

    if let Some(p) = &i.pause {
        let supports = i.link.as_ref().is_some_and(|l| {
            l.capabilities
                .iter()
                .any(|c| c == "Pause" || c == "Asym_Pause")
        });
        if supports && !(p.rx && p.tx) {
            let mut ch = Change::default();
            ch.nic.pause = Some(PauseSet {
                autoneg: None,
                rx: Some(true),
                tx: Some(true),
            });
            c.push(Candidate {
                id: "flow-control".into(),
                title: "flow control (pause frames) on".into(),
                reason: "a receiver can ask the sender to hold instead of dropping".into(),
                change: ch,
                probe_mtu: None,
            });
        }
    }

    let path_ok = inp
        .peer
        .as_ref()
        .is_some_and(|p| p.pmtu.as_ref().is_ok_and(|m| m.path_mtu >= m.local_mtu));
    if opts.mtu && i.mtu < 9000 && i.mtu_max.is_some_and(|m| m >= 9000) {
        if path_ok {
            let mut ch = Change::default();
            ch.nic.mtu = Some(9000);
            c.push(Candidate {
                id: "mtu-jumbo".into(),
                title: "jumbo frames (MTU 9000)".into(),
                reason: "fewer, larger packets cut per-packet CPU cost; kept only if a 9000-byte don't-fragment probe reaches the peer".into(),
                change: ch,
                probe_mtu: Some(9000),
            });
        } else {
            notes.push("MTU 9000: not tried, the path MTU to the peer could not be verified (no echo replies)".into());
        }
    }

    let cc = inp.sysctl("net.ipv4.tcp_congestion_control").unwrap_or("");
    let bbr = inp
        .sysctl("net.ipv4.tcp_available_congestion_control")
        .is_some_and(|a| a.split_whitespace().any(|x| x == "bbr"));
    if bbr && cc != "bbr" && rtt.is_some_and(|r| r.ms >= 1.0) {
        let mut ch = Change::default();
        ch.sysctl
            .insert("net.ipv4.tcp_congestion_control".into(), "bbr".into());
        c.push(Candidate {
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

    if i.txqueuelen > 0 && i.txqueuelen < 1000 {
        let mut ch = Change::default();
        ch.nic.txqueuelen = Some(1000);
        c.push(Candidate {
            id: "txqueuelen".into(),
            title: "transmit queue to 1000".into(),
            reason: format!("txqueuelen {} drops bursts", i.txqueuelen),
            change: ch,
            probe_mtu: None,
        });
    }

    c.extend(opts.extra.iter().cloned());
    (c, notes)
}

/// A `--try` candidate: `hlctl set` words (`feature gso off`, `ring rx 512`)
/// or one sysctl assignment (`net.ipv4.tcp_wmem=4096 16384 65536`).
pub fn user_candidate(n: usize, text: &str) -> Result<Candidate, String> {
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
        let mut feats = std::collections::BTreeMap::new();
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
