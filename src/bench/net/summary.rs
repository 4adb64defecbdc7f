//! The typed report of a test (what `--json` prints), built from this side's
//! figures and the peer's results block.

use serde::{Deserialize, Serialize};

use super::cpu::CpuUtil;
use super::error::NetError;
pub use super::figures::{IntervalReport, RttMs};
use super::figures::{IntervalSample, LocalStream, Side, StartInfo, add_opt};
use super::params::{Protocol, TestDirection, TestParams};
use super::results::PeerResults;
use super::stream::Role;

/// CPU use of each side, in percent of one CPU.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuReport {
    pub local_percent: f64,
    pub(crate) remote_percent: f64,
    pub(crate) local_user_percent: f64,
    pub(crate) local_system_percent: f64,
    pub(crate) remote_user_percent: f64,
    pub(crate) remote_system_percent: f64,
}

/// Totals of one direction (client → server or server → client).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DirectionSummary {
    /// Bytes × 8 / the sender's duration.
    pub(crate) sent_bps: f64,
    /// Bytes × 8 / the receiver's duration.
    pub(crate) received_bps: f64,
    pub sent_bytes: u64,
    pub received_bytes: u64,
    /// TCP retransmits of the sender (null for UDP or when unknown).
    pub retransmits: Option<u64>,
    /// Only when this side sends TCP.
    pub rtt_ms: Option<RttMs>,
    pub jitter_ms: Option<f64>,
    pub lost_packets: Option<u64>,
    pub lost_percent: Option<f64>,
    /// UDP: datagrams the receiver accounted (highest sequence number).
    pub packets: Option<u64>,
    /// UDP: out-of-order datagrams (only when this side receives).
    pub(crate) out_of_order: Option<u64>,
    pub(crate) max_snd_cwnd_bytes: Option<u64>,
    pub(crate) sender_duration_s: f64,
    pub(crate) receiver_duration_s: f64,
}

/// One stream of the test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StreamReport {
    pub(crate) id: u32,
    /// "client_to_server" or "server_to_client".
    pub(crate) direction: String,
    #[serde(flatten)]
    pub(crate) totals: DirectionSummary,
}

/// The result of one network test, the same shape on client and server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetReport {
    pub protocol: Protocol,
    /// Parallel streams (per direction for `--bidir`).
    pub streams: u32,
    /// Seconds measured on this side (omit excluded).
    pub duration_s: f64,
    /// The main direction: client → server, or server → client with `-R`.
    #[serde(flatten)]
    pub main: DirectionSummary,
    pub cpu: CpuReport,
    pub(crate) intervals: Vec<IntervalReport>,
    pub direction: TestDirection,
    /// "client" or "server": which side wrote this report.
    pub side: String,
    /// The other side's address.
    pub(crate) peer: String,
    pub block_len: u32,
    /// Per-stream target rate in bit/s (`-b`), if any.
    pub(crate) target_bps: Option<u64>,
    pub(crate) congestion: Option<String>,
    pub(crate) remote_congestion: Option<String>,
    /// `--bidir`: the server → client direction.
    pub reverse: Option<DirectionSummary>,
    pub per_stream: Vec<StreamReport>,
    /// How the test was set up (iperf3's `start`), for `-J`.
    #[serde(default)]
    pub(crate) start: StartInfo,
    /// Every interval, each stream's figures (iperf3's `intervals`), for `-J`.
    #[serde(default)]
    pub(crate) samples: Vec<IntervalSample>,
    /// This host's cores during the test (`crate::cpu`), set by the caller
    /// that sampled them (`ops::bench::net`); none on the server side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cores: Option<crate::cpu::report::CoreReport>,
    /// `cores` in a line, as the text prints it ("download: CPU1 99 %
    /// (softirq 91 %) …"): every front end shows these words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cores_line: Option<String>,
}

impl NetReport {
    /// What this side's test was, seen from it: "upload", "download",
    /// "both ways".
    pub(crate) fn direction_word(&self) -> &'static str {
        use super::params::TestDirection as D;
        match (self.direction, self.side == "client") {
            (D::Bidir, _) => "both ways",
            (D::Forward, true) | (D::Reverse, false) => "upload",
            _ => "download",
        }
    }

    /// This host's cores during the test, and their line.
    pub(crate) fn set_cores(&mut self, cores: Option<crate::cpu::report::CoreReport>) {
        self.cores_line = cores
            .as_ref()
            .map(|c| crate::cpu::text::line(self.direction_word(), c));
        self.cores = cores;
    }
}

/// What `build` needs.
pub(crate) struct BuildInput<'a> {
    pub(crate) side: Side,
    pub(crate) params: &'a TestParams,
    pub(crate) peer: String,
    pub(crate) local: &'a [LocalStream],
    pub(crate) remote: &'a PeerResults,
    pub(crate) cpu: CpuUtil,
    pub(crate) intervals: Vec<IntervalReport>,
    pub(crate) duration_s: f64,
    pub(crate) congestion: Option<String>,
    pub(crate) start: StartInfo,
    pub(crate) samples: Vec<IntervalSample>,
}

fn bps(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs
    } else {
        0.0
    }
}

/// One stream's totals from both sides' figures.
fn stream_totals(
    protocol: Protocol,
    l: &LocalStream,
    r: &super::results::StreamResult,
    remote_has_retr: bool,
) -> DirectionSummary {
    let remote_time = if r.end_time - r.start_time > 0.0 {
        r.end_time - r.start_time
    } else {
        l.duration_s
    };
    let udp = protocol == Protocol::Udp;
    let mut t = DirectionSummary::default();
    match l.role {
        Role::Send => {
            t.sent_bytes = l.bytes;
            t.received_bytes = r.bytes;
            t.sender_duration_s = l.duration_s;
            t.receiver_duration_s = remote_time;
            t.retransmits = l.retransmits;
            t.rtt_ms = l.rtt;
            t.max_snd_cwnd_bytes = l.max_snd_cwnd;
            if udp {
                let counted = r.counted(l.omitted_packets.unwrap_or(0));
                t.jitter_ms = Some(r.jitter_s * 1000.0);
                t.lost_packets = counted.lost;
                t.packets = Some(counted.packets);
            }
        }
        Role::Recv => {
            t.sent_bytes = r.bytes;
            t.received_bytes = l.bytes;
            t.sender_duration_s = remote_time;
            t.receiver_duration_s = l.duration_s;
            t.retransmits = (remote_has_retr && r.retransmits >= 0).then_some(r.retransmits as u64);
            if udp {
                t.jitter_ms = l.jitter_s.map(|j| j * 1000.0);
                t.lost_packets = l.lost.map(|x| x.max(0) as u64);
                t.packets = l.packets;
                t.out_of_order = l.out_of_order;
            }
        }
    }
    t.sent_bps = bps(t.sent_bytes, t.sender_duration_s);
    t.received_bps = bps(t.received_bytes, t.receiver_duration_s);
    t.lost_percent = lost_percent(t.lost_packets, t.packets);
    t
}

fn lost_percent(lost: Option<u64>, packets: Option<u64>) -> Option<f64> {
    match (lost, packets) {
        (Some(l), Some(p)) if p > 0 => Some(100.0 * l as f64 / p as f64),
        (Some(_), Some(_)) => Some(0.0),
        _ => None,
    }
}

/// Sum streams of one direction.
fn sum(parts: &[&DirectionSummary]) -> DirectionSummary {
    let mut t = DirectionSummary::default();
    let mut jitters = Vec::new();
    let mut rtts: Vec<RttMs> = Vec::new();
    for p in parts {
        t.sent_bytes += p.sent_bytes;
        t.received_bytes += p.received_bytes;
        t.sender_duration_s = t.sender_duration_s.max(p.sender_duration_s);
        t.receiver_duration_s = t.receiver_duration_s.max(p.receiver_duration_s);
        t.retransmits = add_opt(t.retransmits, p.retransmits);
        t.lost_packets = add_opt(t.lost_packets, p.lost_packets);
        t.packets = add_opt(t.packets, p.packets);
        t.out_of_order = add_opt(t.out_of_order, p.out_of_order);
        t.max_snd_cwnd_bytes = match (t.max_snd_cwnd_bytes, p.max_snd_cwnd_bytes) {
            (a, None) => a,
            (None, b) => b,
            (Some(a), Some(b)) => Some(a.max(b)),
        };
        jitters.extend(p.jitter_ms);
        rtts.extend(p.rtt_ms);
    }
    t.sent_bps = bps(t.sent_bytes, t.sender_duration_s);
    t.received_bps = bps(t.received_bytes, t.receiver_duration_s);
    t.jitter_ms = (!jitters.is_empty()).then(|| jitters.iter().sum::<f64>() / jitters.len() as f64);
    t.lost_percent = lost_percent(t.lost_packets, t.packets);
    t.rtt_ms = (!rtts.is_empty()).then(|| RttMs {
        min: rtts.iter().map(|r| r.min).fold(f64::INFINITY, f64::min),
        mean: rtts.iter().map(|r| r.mean).sum::<f64>() / rtts.len() as f64,
        max: rtts.iter().map(|r| r.max).fold(0.0, f64::max),
    });
    t
}

/// Combine this side's streams with the peer's results into a report.
pub(crate) fn build(input: BuildInput<'_>) -> Result<NetReport, NetError> {
    let p = input.params;
    let c2s_role = input.side.role_client_to_server();
    let remote_has_retr = input.remote.sender_has_retransmits == 1;
    let mut per_stream = Vec::with_capacity(input.local.len());
    for l in input.local {
        let r = input
            .remote
            .stream(l.id)
            .ok_or_else(|| NetError::Protocol {
                expected: format!("results for stream {}", l.id),
                received: format!(
                    "results for streams {:?}",
                    input
                        .remote
                        .streams
                        .iter()
                        .map(|s| s.id)
                        .collect::<Vec<_>>()
                ),
            })?;
        per_stream.push(StreamReport {
            id: l.id,
            direction: if l.role == c2s_role {
                "client_to_server"
            } else {
                "server_to_client"
            }
            .to_string(),
            totals: stream_totals(p.protocol, l, r, remote_has_retr),
        });
    }
    let of = |dir: &str| -> DirectionSummary {
        let parts: Vec<&DirectionSummary> = per_stream
            .iter()
            .filter(|s| s.direction == dir)
            .map(|s| &s.totals)
            .collect();
        sum(&parts)
    };
    let (main, reverse) = match p.direction {
        TestDirection::Forward => (of("client_to_server"), None),
        TestDirection::Reverse => (of("server_to_client"), None),
        TestDirection::Bidir => (of("client_to_server"), Some(of("server_to_client"))),
    };
    let r = input.remote;
    Ok(NetReport {
        protocol: p.protocol,
        streams: p.parallel,
        duration_s: input.duration_s,
        main,
        cpu: CpuReport {
            local_percent: input.cpu.total,
            remote_percent: r.cpu_util_total,
            local_user_percent: input.cpu.user,
            local_system_percent: input.cpu.system,
            remote_user_percent: r.cpu_util_user,
            remote_system_percent: r.cpu_util_system,
        },
        intervals: input.intervals,
        direction: p.direction,
        side: match input.side {
            Side::Client => "client",
            Side::Server => "server",
        }
        .to_string(),
        peer: input.peer,
        block_len: p.len,
        target_bps: p.target_bps(),
        congestion: input.congestion,
        remote_congestion: r.congestion_used.clone(),
        reverse,
        per_stream,
        start: input.start,
        samples: input.samples,
        cores: None,
        cores_line: None,
    })
}

/// The results block this side sends to the peer.
pub(crate) fn local_results(
    local: &[LocalStream],
    protocol: Protocol,
    cpu: CpuUtil,
    congestion: Option<String>,
) -> PeerResults {
    use super::results::{Omitted, StreamResult};
    let sends = local.iter().any(|l| l.role == Role::Send);
    PeerResults {
        cpu_util_total: cpu.total,
        cpu_util_user: cpu.user,
        cpu_util_system: cpu.system,
        sender_has_retransmits: match (sends, protocol) {
            (false, _) => -1,
            (true, Protocol::Tcp) => 1,
            (true, Protocol::Udp) => 0,
        },
        congestion_used: congestion,
        streams: local
            .iter()
            .map(|l| {
                // iperf3's counts run from the start, omit period included,
                // and 3.21 sends where the omit period left them beside.
                let omitted = Omitted {
                    errors: l.omitted_lost.unwrap_or(0),
                    packets: l.omitted_packets.unwrap_or(0) as i64,
                };
                StreamResult {
                    id: l.id,
                    bytes: l.bytes,
                    retransmits: l.retransmits.map(|r| r as i64).unwrap_or(-1),
                    jitter_s: l.jitter_s.unwrap_or(0.0),
                    errors: l.lost.unwrap_or(0) + omitted.errors,
                    packets: l.packets.unwrap_or(0) as i64 + omitted.packets,
                    omitted: Some(omitted),
                    start_time: 0.0,
                    end_time: l.duration_s,
                }
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::net::results::{Omitted, StreamResult};

    fn local(id: u32, role: Role, bytes: u64) -> LocalStream {
        LocalStream {
            id,
            role,
            bytes,
            duration_s: 2.0,
            retransmits: (role == Role::Send).then_some(3),
            rtt: (role == Role::Send).then_some(RttMs {
                min: 0.01,
                mean: 0.02,
                max: 0.05,
            }),
            max_snd_cwnd: None,
            packets: None,
            lost: None,
            omitted_packets: None,
            omitted_lost: None,
            out_of_order: None,
            jitter_s: None,
        }
    }

    fn remote(streams: Vec<StreamResult>, has_retr: i64) -> PeerResults {
        PeerResults {
            cpu_util_total: 50.0,
            cpu_util_user: 1.0,
            cpu_util_system: 49.0,
            sender_has_retransmits: has_retr,
            congestion_used: Some("bbr".into()),
            streams,
        }
    }

    fn sr(id: u32, bytes: u64, retr: i64) -> StreamResult {
        StreamResult {
            id,
            bytes,
            retransmits: retr,
            jitter_s: 0.0,
            errors: 0,
            packets: 0,
            omitted: None,
            start_time: 0.0,
            end_time: 2.5,
        }
    }

    /// The report of a 2 s test with these figures on both sides.
    fn two_seconds(
        side: Side,
        params: &TestParams,
        local: &[LocalStream],
        remote: &PeerResults,
    ) -> Result<NetReport, NetError> {
        build(BuildInput {
            side,
            params,
            peer: "x".into(),
            local,
            remote,
            cpu: CpuUtil::default(),
            intervals: vec![],
            duration_s: 2.0,
            congestion: None,
            start: StartInfo::default(),
            samples: vec![],
        })
    }

    fn params(direction: TestDirection) -> TestParams {
        let mut p =
            TestParams::from_json(&serde_json::json!({"tcp": true, "time": 2, "parallel": 2}))
                .unwrap();
        p.direction = direction;
        p
    }

    #[test]
    fn client_forward_sums_and_json_keys() {
        let p = params(TestDirection::Forward);
        let l = [local(1, Role::Send, 1000), local(3, Role::Send, 3000)];
        let r = remote(vec![sr(1, 990, -1), sr(3, 2990, -1)], -1);
        let rep = two_seconds(Side::Client, &p, &l, &r).unwrap();
        assert_eq!(rep.main.sent_bytes, 4000);
        assert_eq!(rep.main.received_bytes, 3980);
        assert_eq!(rep.main.retransmits, Some(6));
        assert_eq!(rep.main.sent_bps, 4000.0 * 8.0 / 2.0);
        assert_eq!(rep.main.received_bps, 3980.0 * 8.0 / 2.5);
        let v = serde_json::to_value(&rep).unwrap();
        for k in [
            "protocol",
            "streams",
            "duration_s",
            "sent_bps",
            "received_bps",
            "sent_bytes",
            "received_bytes",
            "retransmits",
            "rtt_ms",
            "jitter_ms",
            "lost_packets",
            "lost_percent",
            "cpu",
            "intervals",
        ] {
            assert!(v.get(k).is_some(), "missing {k}");
        }
        assert!(v["rtt_ms"].get("mean").is_some());
        assert!(
            v["cpu"].get("local_percent").is_some() && v["cpu"].get("remote_percent").is_some()
        );
        assert_eq!(v["protocol"], "tcp");
    }

    #[test]
    fn server_view_of_reverse_uses_remote_receiver() {
        let p = params(TestDirection::Reverse);
        let l = [local(1, Role::Send, 500)];
        let r = remote(vec![sr(1, 480, -1)], -1);
        let rep = two_seconds(Side::Server, &p, &l, &r).unwrap();
        assert_eq!(rep.per_stream[0].direction, "server_to_client");
        assert_eq!(rep.main.sent_bytes, 500);
        assert_eq!(rep.main.received_bytes, 480);
    }

    #[test]
    fn missing_stream_is_an_error() {
        let p = params(TestDirection::Forward);
        let l = [local(1, Role::Send, 1)];
        let r = remote(vec![sr(7, 1, -1)], -1);
        let e = two_seconds(Side::Client, &p, &l, &r);
        assert!(matches!(e, Err(NetError::Protocol { .. })));
    }

    #[test]
    fn results_block_flags() {
        let l = [local(1, Role::Recv, 10)];
        let r = local_results(&l, Protocol::Tcp, CpuUtil::default(), None);
        assert_eq!(r.sender_has_retransmits, -1);
        assert_eq!(r.streams[0].retransmits, -1);
        let l = [local(1, Role::Send, 10)];
        let r = local_results(&l, Protocol::Tcp, CpuUtil::default(), None);
        assert_eq!(r.sender_has_retransmits, 1);
        assert_eq!(r.streams[0].retransmits, 3);
    }

    fn udp_params() -> TestParams {
        TestParams::from_json(&serde_json::json!({"udp": true, "time": 2, "omit": 1})).unwrap()
    }

    /// A UDP stream of 1000 datagrams after a 1 s omit period of 400, with
    /// 5 lost in the omit period and 7 after it.
    fn udp_local(role: Role) -> LocalStream {
        let recv = role == Role::Recv;
        LocalStream {
            packets: Some(1000),
            omitted_packets: Some(400),
            lost: recv.then_some(7),
            omitted_lost: recv.then_some(5),
            jitter_s: recv.then_some(0.001),
            ..local(1, role, 1_000_000)
        }
    }

    #[test]
    fn results_sent_count_from_the_start_and_say_where_the_omit_period_left_them() {
        let r = local_results(
            &[udp_local(Role::Recv)],
            Protocol::Udp,
            CpuUtil::default(),
            None,
        );
        let s = &r.streams[0];
        assert_eq!((s.packets, s.errors), (1400, 12));
        let o = s.omitted.expect("omitted counts");
        assert_eq!((o.packets, o.errors), (400, 5));
        let v = r.to_json();
        assert_eq!(v["streams"][0]["omitted_packets"], 400);
        assert_eq!(v["streams"][0]["omitted_errors"], 5);
        let r = local_results(
            &[udp_local(Role::Send)],
            Protocol::Udp,
            CpuUtil::default(),
            None,
        );
        assert_eq!((r.streams[0].packets, r.streams[0].errors), (1400, 0));
    }

    fn udp_sender_summary(remote_stream: StreamResult) -> DirectionSummary {
        let p = udp_params();
        let l = [udp_local(Role::Send)];
        let r = remote(vec![remote_stream], -1);
        two_seconds(Side::Client, &p, &l, &r).unwrap().main
    }

    #[test]
    fn a_sender_counts_what_the_receiver_counted_after_the_omit_period() {
        // 3.21's receiver: 1398 datagrams in all, 399 of them in the omit
        // period; 11 lost, 4 of them in the omit period.
        let mut from_321 = sr(1, 999_000, -1);
        (from_321.packets, from_321.errors) = (1398, 11);
        from_321.omitted = Some(Omitted {
            errors: 4,
            packets: 399,
        });
        let m = udp_sender_summary(from_321);
        assert_eq!((m.packets, m.lost_packets), (Some(999), Some(7)));
        // 3.12's receiver sends the totals alone: the packets are counted
        // from this side's own omit count, as iperf3 does; its losses cannot
        // be split, so none are claimed (3.21 prints none either).
        let mut from_312 = sr(1, 999_000, -1);
        (from_312.packets, from_312.errors) = (1398, 11);
        let m = udp_sender_summary(from_312.clone());
        assert_eq!((m.packets, m.lost_packets), (Some(998), None));
        // Without losses there is nothing to split.
        from_312.errors = 0;
        let m = udp_sender_summary(from_312);
        assert_eq!((m.lost_packets, m.lost_percent), (Some(0), Some(0.0)));
    }
}
