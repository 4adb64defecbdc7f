//! What limits the throughput of one direction, from the numbers at hand:
//! the link's rate, a queue that builds under load (a slower hop), this host's
//! TCP buffer, the peer's TCP buffer, or a saturated CPU.
//!
//! Reasoning: TCP moves at most one window per round trip. The data in flight
//! is throughput × idle RTT. If that fills this host's buffer, this host limits;
//! if it is far below it and no queue builds (RTT under load stays near the idle
//! RTT), the window the peer offers (upload) or sends with (download) does.
//!
//! The link's rate counts only when its speed is physical
//! ([`crate::nic::speed`]): a nominal speed (veth, bridge, virtio_net, or any
//! speed the measurement exceeds) is never "the limit"; the limit is then
//! explained from what is real, or the report says the speed is nominal.

use serde::{Deserialize, Serialize};

use super::throughput::{Direction, Series, format_bps};
use crate::nic::speed::LinkSpeed;
use crate::sysctl::tcp_mem::{self, TcpMemory};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Limit {
    /// At or near the rate of a link whose speed is physical.
    LinkRate {
        delivered_bps: f64,
        link_bps: f64,
    },
    /// Nothing real explains the rate, and the link's speed is nominal (it
    /// caps nothing): said so rather than blamed.
    NominalSpeed {
        delivered_bps: f64,
        link_bps: f64,
        basis: String,
    },
    /// A queue builds under load: a slower hop or a shaper on the way.
    Bottleneck {
        delivered_bps: f64,
        link_bps: Option<f64>,
        rtt_idle_ms: f64,
        rtt_loaded_ms: f64,
    },
    /// A CPU (here or at the peer) is saturated.
    CpuBound {
        cpu_percent: f64,
    },
    /// The data in flight fills this host's TCP buffer.
    LocalWindow {
        in_flight_bytes: u64,
        buffer_bytes: u64,
        key: String,
    },
    /// The data in flight is far below this host's buffer and nothing queues:
    /// the peer's buffer limits.
    PeerWindow {
        in_flight_bytes: u64,
        buffer_bytes: u64,
        peer_key: String,
        bdp_bytes: Option<u64>,
    },
    Unknown,
}

/// What [`classify`] looks at.
#[derive(Clone, Debug, Default)]
pub(crate) struct Input {
    pub(crate) bps: f64,
    pub(crate) rtt_idle_ms: Option<f64>,
    pub(crate) rtt_loaded_ms: Option<f64>,
    /// The speed of the interface towards the peer, and whether it is physical.
    pub(crate) link: Option<LinkSpeed>,
    /// This host's buffer maximum for the direction: tcp_wmem max (upload),
    /// tcp_rmem max (download).
    pub(crate) local_buffer_max: Option<u64>,
    pub(crate) cpu_max_percent: Option<f64>,
}

/// The sysctl holding this host's buffer for `dir`, and the peer's that matters.
pub(crate) fn keys(dir: Direction) -> (&'static str, &'static str) {
    match dir {
        Direction::Upload => ("net.ipv4.tcp_wmem", "net.ipv4.tcp_rmem"),
        Direction::Download => ("net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"),
    }
}

/// One direction's limit with its sentence and the link speed it was judged
/// against (what reports and `--json` carry).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct LimitNote {
    pub(crate) direction: Direction,
    pub(crate) limit: Limit,
    pub(crate) text: String,
    /// The link's speed as judged against this direction's measurement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) link_speed: Option<LinkSpeed>,
    /// Where this host's cores spent the direction's last run
    /// (`crate::cpu::text::line`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cores: Option<String>,
}

/// The limit of direction `dir` as series `s` measured it (its median, its
/// loaded RTT, its busiest CPU and its cores' line), against the path's
/// idle RTT, the link towards the peer and this host's buffer maximum for
/// the direction: what the doctor and the tune report alike.
pub(crate) fn of_series(
    dir: Direction,
    s: &Series,
    rtt_idle_ms: Option<f64>,
    link: Option<LinkSpeed>,
    local_buffer_max: Option<u64>,
) -> LimitNote {
    let input = Input {
        bps: s.median(),
        rtt_idle_ms,
        rtt_loaded_ms: s.rtt_loaded_ms(),
        link,
        local_buffer_max,
        cpu_max_percent: s.max_cpu_percent(),
    };
    let mut note = assess(dir, &input);
    note.cores = s.cores_line(dir);
    note
}

/// Classify one direction and say it in a sentence.
pub(crate) fn assess(dir: Direction, i: &Input) -> LimitNote {
    let link = i.link.clone().map(|l| l.against_measured(i.bps));
    let limit = classify_with(dir, i, link.as_ref());
    let mut text = limit.explain(dir);
    if let Some(l) = &link
        && !l.is_physical()
        && !matches!(limit, Limit::NominalSpeed { .. })
    {
        text += &format!(
            " (the link's {} is nominal: {})",
            crate::units::speed(l.mbps),
            l.basis
        );
    }
    LimitNote {
        direction: dir,
        limit,
        text,
        link_speed: link,
        cores: None,
    }
}

#[cfg_attr(not(test), expect(dead_code, reason = "only the unit tests use it"))]
pub(crate) fn classify(dir: Direction, i: &Input) -> Limit {
    let link = i.link.clone().map(|l| l.against_measured(i.bps));
    classify_with(dir, i, link.as_ref())
}

fn classify_with(dir: Direction, i: &Input, link: Option<&LinkSpeed>) -> Limit {
    let physical_bps = link.filter(|l| l.is_physical()).map(LinkSpeed::bps);
    let nominal = || -> Option<Limit> {
        let l = link.filter(|l| !l.is_physical())?;
        Some(Limit::NominalSpeed {
            delivered_bps: i.bps,
            link_bps: l.bps(),
            basis: l.basis.clone(),
        })
    };
    if let Some(l) = physical_bps
        && i.bps >= 0.7 * l
    {
        return Limit::LinkRate {
            delivered_bps: i.bps,
            link_bps: l,
        };
    }
    if let Some(c) = i.cpu_max_percent
        && c >= 90.0
    {
        return Limit::CpuBound { cpu_percent: c };
    }
    let Some(idle) = i.rtt_idle_ms else {
        return nominal().unwrap_or(Limit::Unknown);
    };
    if let Some(loaded) = i.rtt_loaded_ms
        && loaded > 2.0 * idle + 1.0
    {
        return Limit::Bottleneck {
            delivered_bps: i.bps,
            // What the link claims, nominal or not: the queue is the evidence.
            link_bps: link.map(LinkSpeed::bps),
            rtt_idle_ms: idle,
            rtt_loaded_ms: loaded,
        };
    }
    let in_flight = (i.bps / 8.0 * idle / 1000.0) as u64;
    let (key, peer_key) = keys(dir);
    match i.local_buffer_max {
        Some(buf) if in_flight as f64 >= 0.25 * buf as f64 => Limit::LocalWindow {
            in_flight_bytes: in_flight,
            buffer_bytes: buf,
            key: key.to_string(),
        },
        // Below a millisecond the window hardly matters: say nothing.
        Some(buf) if idle >= 1.0 => Limit::PeerWindow {
            in_flight_bytes: in_flight,
            buffer_bytes: buf,
            peer_key: peer_key.to_string(),
            bdp_bytes: physical_bps.map(|l| (l / 8.0 * idle / 1000.0) as u64),
        },
        _ => nominal().unwrap_or(Limit::Unknown),
    }
}

/// A buffer size that holds twice `bdp` (the kernel uses about half a buffer
/// for data), as a power of two, at least 16 MiB and at most 1 GiB; and never
/// above what TCP's memory limit allows one connection (`tcp`, see
/// [`crate::sysctl::tcp_mem`]), even where that is less than 16 MiB.
pub(crate) fn buffer_for(bdp: u64, tcp: Option<&TcpMemory>) -> u64 {
    let want = (bdp.saturating_mul(2))
        .max(1)
        .next_power_of_two()
        .clamp(16 << 20, 1 << 30);
    tcp.map_or(want, |m| want.min(tcp_mem::buffer_bound(m.pressure_bytes)))
}

impl Limit {
    /// The JSON `kind` tag (`link_rate`, `nominal_speed`, `cpu_bound`, ...).
    #[cfg_attr(not(test), expect(dead_code, reason = "only the unit tests use it"))]
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Limit::LinkRate { .. } => "link_rate",
            Limit::NominalSpeed { .. } => "nominal_speed",
            Limit::Bottleneck { .. } => "bottleneck",
            Limit::CpuBound { .. } => "cpu_bound",
            Limit::LocalWindow { .. } => "local_window",
            Limit::PeerWindow { .. } => "peer_window",
            Limit::Unknown => "unknown",
        }
    }

    /// One sentence for reports.
    pub(crate) fn explain(&self, dir: Direction) -> String {
        use crate::units::bytes;
        match self {
            Limit::LinkRate {
                delivered_bps,
                link_bps,
            } => format!(
                "{dir}: measured {} = the {} link is the limit ({:.0}% of its rate)",
                format_bps(*delivered_bps),
                crate::units::speed((link_bps / 1e6).round() as u32),
                100.0 * delivered_bps / link_bps
            ),
            Limit::NominalSpeed {
                delivered_bps,
                link_bps,
                basis,
            } => format!(
                "{dir}: measured {}; the link's {} is nominal ({basis}) and caps nothing; nothing measured here (CPU, TCP window, a queue) shows a limit",
                format_bps(*delivered_bps),
                crate::units::speed((link_bps / 1e6).round() as u32)
            ),
            Limit::Bottleneck {
                delivered_bps,
                link_bps,
                rtt_idle_ms,
                rtt_loaded_ms,
            } => format!(
                "{dir}: the path delivers ~{}{} and a queue builds under load (RTT {rtt_idle_ms:.2} → {rtt_loaded_ms:.1} ms): a slower hop or a shaper lies between here and the peer; no setting on this host raises it",
                format_bps(*delivered_bps),
                link_bps
                    .map(|l| format!(" while the link claims {}", format_bps(l)))
                    .unwrap_or_default()
            ),
            Limit::CpuBound { cpu_percent } => format!(
                "{dir}: a CPU is saturated ({cpu_percent:.0}% of one CPU): offloads and fewer, larger packets help; buffers do not"
            ),
            Limit::LocalWindow {
                in_flight_bytes,
                buffer_bytes,
                key,
            } => format!(
                "{dir}: {} in flight fills this host's {key} maximum of {}: this host's buffer is the limit",
                bytes(*in_flight_bytes),
                bytes(*buffer_bytes)
            ),
            Limit::PeerWindow {
                in_flight_bytes,
                buffer_bytes,
                peer_key,
                bdp_bytes,
            } => {
                // The peer's memory is not known here: no bound from it.
                let target = buffer_for(bdp_bytes.unwrap_or(*buffer_bytes), None);
                let (min_def, which) = if peer_key.ends_with("rmem") {
                    ("4096 131072", "receive")
                } else {
                    ("4096 16384", "send")
                };
                format!(
                    "{dir}: only {} in flight although this host allows {}, and no queue builds: the limit lies at the peer (its TCP {which} buffer); on the peer raise {peer_key}'s maximum, e.g. hlctl sysctl '{peer_key}={min_def} {target}'",
                    bytes(*in_flight_bytes),
                    bytes(*buffer_bytes)
                )
            }
            Limit::Unknown => format!("{dir}: the limit could not be determined"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(bps: f64, idle: f64, loaded: Option<f64>, buf: u64) -> Input {
        Input {
            bps,
            rtt_idle_ms: Some(idle),
            rtt_loaded_ms: loaded,
            link: Some(LinkSpeed {
                mbps: 10_000,
                kind: crate::nic::speed::SpeedKind::Physical,
                basis: "test".into(),
            }),
            local_buffer_max: Some(buf),
            cpu_max_percent: Some(20.0),
        }
    }

    #[test]
    fn queueing_means_a_bottleneck() {
        let l = classify(Direction::Upload, &input(95e6, 0.05, Some(8.0), 4 << 20));
        assert!(matches!(l, Limit::Bottleneck { .. }), "{l:?}");
        assert!(l.explain(Direction::Upload).contains("95 Mbit/s"));
    }

    #[test]
    fn small_local_buffer_vs_small_peer_buffer() {
        // 20 ms, 64 KiB local send buffer: ~20 Mbit/s → 50 KB in flight.
        let l = classify(Direction::Upload, &input(20e6, 20.0, Some(20.5), 65536));
        assert!(matches!(l, Limit::LocalWindow { .. }), "{l:?}");
        // Same throughput with 4 MiB here: the peer limits.
        let l = classify(Direction::Upload, &input(20e6, 20.0, Some(20.5), 4 << 20));
        match &l {
            Limit::PeerWindow { peer_key, .. } => assert_eq!(peer_key, "net.ipv4.tcp_rmem"),
            other => panic!("{other:?}"),
        }
        assert!(l.explain(Direction::Upload).contains("at the peer"));
        let l = classify(Direction::Download, &input(20e6, 20.0, None, 32 << 20));
        assert!(
            matches!(l, Limit::PeerWindow { ref peer_key, .. } if peer_key == "net.ipv4.tcp_wmem")
        );
    }

    #[test]
    fn line_rate_and_cpu() {
        assert!(matches!(
            classify(Direction::Upload, &input(9.5e9, 0.05, None, 1 << 20)),
            Limit::LinkRate { .. }
        ));
        let mut i = input(3e9, 0.05, None, 1 << 20);
        i.cpu_max_percent = Some(99.0);
        assert!(matches!(
            classify(Direction::Upload, &i),
            Limit::CpuBound { .. }
        ));
        assert_eq!(buffer_for(25_000_000, None), 64 << 20);
        assert_eq!(buffer_for(10_000, None), 16 << 20);
        // A 768 MB machine: TCP's pressure level at 41 MB bounds it.
        let small = TcpMemory {
            pressure_bytes: 41_484_288,
            source: "test".into(),
        };
        assert_eq!(buffer_for(25_000_000, Some(&small)), 16 << 20);
        let tiny = TcpMemory {
            pressure_bytes: 16 << 20,
            source: "test".into(),
        };
        assert_eq!(buffer_for(10_000, Some(&tiny)), 8 << 20);
    }

    fn on(kind: crate::nic::speed::SpeedKind, mbps: u32, bps: f64) -> Input {
        Input {
            bps,
            rtt_idle_ms: Some(0.05),
            rtt_loaded_ms: None,
            link: Some(LinkSpeed {
                mbps,
                kind,
                basis: "veth is a virtual device".into(),
            }),
            local_buffer_max: Some(4 << 20),
            cpu_max_percent: Some(50.0),
        }
    }

    #[test]
    fn a_nominal_speed_is_never_the_limit() {
        use crate::nic::speed::SpeedKind::*;
        // veth: 19.48 Gbit/s "is 195% of the link's 10 Gbit/s" must not be said.
        let n = assess(Direction::Upload, &on(Nominal, 10_000, 19.48e9));
        assert_eq!(n.limit.kind(), "nominal_speed");
        assert!(!n.text.contains("is the limit"), "{}", n.text);
        assert!(n.text.contains("nominal"), "{}", n.text);
        // Even at 95% of a nominal speed.
        let n = assess(Direction::Upload, &on(Nominal, 10_000, 9.5e9));
        assert_eq!(n.limit.kind(), "nominal_speed");
        // A saturated CPU explains it; the nominal speed is noted.
        let mut i = on(Nominal, 10_000, 9.5e9);
        i.cpu_max_percent = Some(99.0);
        let n = assess(Direction::Upload, &i);
        assert_eq!(n.limit.kind(), "cpu_bound");
        assert!(n.text.contains("nominal"), "{}", n.text);
        // A physical 100 Mb/s link at 94 Mbit/s is the limit.
        let n = assess(Direction::Upload, &on(Physical, 100, 94e6));
        assert_eq!(n.limit.kind(), "link_rate");
        assert!(
            n.text
                .contains("measured 94 Mbit/s = the 100 Mbit/s link is the limit"),
            "{}",
            n.text
        );
        // A "100 Mb/s" NIC measured at 1.3 Gbit/s: the speed is nominal.
        let n = assess(Direction::Upload, &on(Physical, 100, 1.3e9));
        assert_eq!(n.limit.kind(), "nominal_speed");
        assert_eq!(n.link_speed.unwrap().kind, Nominal);
    }
}
