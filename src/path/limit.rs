//! What limits the throughput of one direction, from the numbers at hand:
//! the link's rate, a queue that builds under load (a slower hop), this host's
//! TCP buffer, the peer's TCP buffer, or a saturated CPU.
//!
//! Reasoning: TCP moves at most one window per round trip. The data in flight
//! is throughput × idle RTT. If that fills this host's buffer, this host limits;
//! if it is far below it and no queue builds (RTT under load stays near the idle
//! RTT), the window the peer offers (upload) or sends with (download) does.

use serde::{Deserialize, Serialize};

use super::measure::{Direction, format_bps};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Limit {
    /// At or near the link's rate: nothing to gain here.
    LinkRate {
        delivered_bps: f64,
        link_bps: f64,
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
pub struct Input {
    pub bps: f64,
    pub rtt_idle_ms: Option<f64>,
    pub rtt_loaded_ms: Option<f64>,
    pub link_mbps: Option<u32>,
    /// This host's buffer maximum for the direction: tcp_wmem max (upload),
    /// tcp_rmem max (download).
    pub local_buffer_max: Option<u64>,
    pub cpu_max_percent: Option<f64>,
}

/// The sysctl holding this host's buffer for `dir`, and the peer's that matters.
pub fn keys(dir: Direction) -> (&'static str, &'static str) {
    match dir {
        Direction::Upload => ("net.ipv4.tcp_wmem", "net.ipv4.tcp_rmem"),
        Direction::Download => ("net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"),
    }
}

pub fn classify(dir: Direction, i: &Input) -> Limit {
    let link_bps = i.link_mbps.map(|m| m as f64 * 1e6);
    if let Some(l) = link_bps
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
        return Limit::Unknown;
    };
    if let Some(loaded) = i.rtt_loaded_ms
        && loaded > 2.0 * idle + 1.0
    {
        return Limit::Bottleneck {
            delivered_bps: i.bps,
            link_bps,
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
            bdp_bytes: link_bps.map(|l| (l / 8.0 * idle / 1000.0) as u64),
        },
        _ => Limit::Unknown,
    }
}

/// A buffer size that holds twice `bdp` (the kernel uses about half a buffer
/// for data), as a power of two, at least 16 MiB and at most 1 GiB.
pub fn buffer_for(bdp: u64) -> u64 {
    (bdp.saturating_mul(2))
        .max(1)
        .next_power_of_two()
        .clamp(16 << 20, 1 << 30)
}

impl Limit {
    /// One sentence for reports.
    pub fn explain(&self, dir: Direction) -> String {
        use crate::units::bytes;
        match self {
            Limit::LinkRate {
                delivered_bps,
                link_bps,
            } => format!(
                "{dir}: {} is {:.0}% of the link's {}: the link is the limit",
                format_bps(*delivered_bps),
                100.0 * delivered_bps / link_bps,
                format_bps(*link_bps)
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
                let target = buffer_for(bdp_bytes.unwrap_or(*buffer_bytes));
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
            link_mbps: Some(10_000),
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
        assert_eq!(buffer_for(25_000_000), 64 << 20);
        assert_eq!(buffer_for(10_000), 16 << 20);
    }
}
