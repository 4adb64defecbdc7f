//! The figures the engine measures and the report and the text read: plain
//! data, no formatting and no I/O, so that the engine depends on neither.

use serde::{Deserialize, Serialize};

use super::params::TestDirection;
use super::stream::Role;

/// Which end of the test this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Client,
    Server,
}

impl Side {
    /// The local role of streams carrying data from client to server.
    pub(crate) fn role_client_to_server(self) -> Role {
        match self {
            Side::Client => Role::Send,
            Side::Server => Role::Recv,
        }
    }

    /// The local role of the test's main direction (forward for bidir).
    pub(crate) fn primary_role(self, d: TestDirection) -> Role {
        let c2s = self.role_client_to_server();
        match d {
            TestDirection::Forward | TestDirection::Bidir => c2s,
            TestDirection::Reverse => flip(c2s),
        }
    }
}

pub(crate) fn flip(r: Role) -> Role {
    match r {
        Role::Send => Role::Recv,
        Role::Recv => Role::Send,
    }
}

/// A stream's final figures on this side (omit excluded).
#[derive(Clone, Debug)]
pub(crate) struct LocalStream {
    pub(crate) id: u32,
    pub(crate) role: Role,
    pub(crate) bytes: u64,
    pub(crate) duration_s: f64,
    pub(crate) retransmits: Option<u64>,
    pub(crate) rtt: Option<RttMs>,
    pub(crate) max_snd_cwnd: Option<u64>,
    /// UDP: datagrams sent, or the highest sequence number received, after
    /// the omit period.
    pub(crate) packets: Option<u64>,
    pub(crate) lost: Option<i64>,
    /// UDP: the same two counts within the omit period (what iperf3 3.21
    /// sends as `omitted_packets` and `omitted_errors`).
    pub(crate) omitted_packets: Option<u64>,
    pub(crate) omitted_lost: Option<i64>,
    pub(crate) out_of_order: Option<u64>,
    pub(crate) jitter_s: Option<f64>,
}

/// Round-trip time of the sending TCP streams, from TCP_INFO.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RttMs {
    pub(crate) min: f64,
    pub(crate) mean: f64,
    pub(crate) max: f64,
}

/// One reporting interval of the test's main direction, measured on this side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IntervalReport {
    pub(crate) start_s: f64,
    pub(crate) end_s: f64,
    pub(crate) bps: f64,
    /// TCP retransmits in the interval, when this side sends.
    pub(crate) retransmits: Option<u64>,
    pub(crate) bytes: u64,
    /// `--bidir`: the other direction's rate in the same interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reverse_bps: Option<f64>,
}

/// One stream's figures over one interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct StreamInterval {
    pub(crate) id: u32,
    pub(crate) role: Role,
    pub(crate) bytes: u64,
    pub(crate) bps: f64,
    pub(crate) retransmits: Option<u64>,
    pub(crate) snd_cwnd: Option<u64>,
    /// UDP: datagrams in this interval (sent, or highest-seq advance when receiving).
    pub(crate) packets: Option<u64>,
    /// UDP receiver: lost in this interval.
    pub(crate) lost: Option<i64>,
    pub(crate) jitter_ms: Option<f64>,
    /// TCP sender, from TCP_INFO at the interval's end: the send window,
    /// smoothed RTT and its variance (µs), and the path MTU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tcp: Option<TcpSample>,
}

/// The sum of two counts, `None` only when neither is known.
pub(crate) fn add_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        _ => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    }
}

impl StreamInterval {
    /// The `[SUM]` of some streams of one role: bytes, rates, retransmits,
    /// datagrams and losses added (each only where a stream has it), jitter
    /// averaged.
    pub(crate) fn sum(role: Role, streams: &[&StreamInterval]) -> StreamInterval {
        let mut total = StreamInterval {
            role,
            ..StreamInterval::default()
        };
        let mut jitter = Vec::new();
        for s in streams {
            total.bytes += s.bytes;
            total.bps += s.bps;
            total.retransmits = add_opt(total.retransmits, s.retransmits);
            total.packets = add_opt(total.packets, s.packets);
            if let Some(l) = s.lost {
                total.lost = Some(total.lost.unwrap_or(0) + l);
            }
            jitter.extend(s.jitter_ms);
        }
        total.jitter_ms =
            (!jitter.is_empty()).then(|| jitter.iter().sum::<f64>() / jitter.len() as f64);
        total
    }
}

/// What a TCP sender's TCP_INFO said at the end of an interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct TcpSample {
    pub(crate) snd_wnd: u32,
    pub(crate) rtt_us: u32,
    pub(crate) rttvar_us: u32,
    pub(crate) pmtu: u32,
    /// Reordering events the connection has seen so far (`tcpi_reord_seen`,
    /// iperf3 3.20's `reorder`; 0 before Linux 4.19).
    #[serde(default)]
    pub(crate) reorder: u32,
}

/// All streams over one interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct IntervalSample {
    pub(crate) start_s: f64,
    pub(crate) end_s: f64,
    pub(crate) omitted: bool,
    pub(crate) streams: Vec<StreamInterval>,
}

/// How the caller turns one interval sample into progress text (the engine
/// reports samples; `text::interval_lines` formats them like iperf3).
pub(crate) type IntervalText = fn(&IntervalSample, Side, TestDirection) -> String;

/// One data stream's socket, as iperf3's `start.connected` lists it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Connected {
    pub(crate) id: u32,
    /// The socket's file descriptor (iperf3's `[  5]`).
    pub(crate) socket: i32,
    pub(crate) local_host: String,
    pub(crate) local_port: u16,
    pub(crate) remote_host: String,
    pub(crate) remote_port: u16,
}

/// How the test was set up, for iperf3's `start` block.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct StartInfo {
    pub(crate) connected: Vec<Connected>,
    /// The server as the client was asked to reach it (`connecting_to`).
    pub(crate) host: String,
    pub(crate) port: u16,
    /// Seconds since the epoch when the control connection was made.
    pub(crate) timesecs: u64,
    /// The same moment in milliseconds (iperf3 3.20's `timemillisecs`).
    #[serde(default)]
    pub(crate) timemillisecs: u64,
    /// Seconds between interval reports (iperf3 3.18's `test_start.interval`).
    #[serde(default)]
    pub(crate) interval_s: f64,
    pub(crate) cookie: String,
    /// TCP: the control connection's MSS.
    pub(crate) tcp_mss_default: Option<u32>,
    /// `-w`, 0 when not given.
    pub(crate) sock_bufsize: u32,
    /// `--fq-rate` in bit/s, 0 when not given (iperf3 3.13's `fq_rate`).
    #[serde(default)]
    pub(crate) fq_rate_bps: u64,
    /// SO_SNDBUF and SO_RCVBUF of the last data stream.
    pub(crate) sndbuf_actual: u32,
    pub(crate) rcvbuf_actual: u32,
    /// UDP: GSO / GRO on this side's sockets (iperf3 3.21's `test_start.gso`, `gro`).
    #[serde(default)]
    pub(crate) gso: bool,
    #[serde(default)]
    pub(crate) gro: bool,
    /// `-t` and `-O` in seconds.
    pub(crate) time_s: u32,
    pub(crate) omit_s: u32,
}
